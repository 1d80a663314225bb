#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory regions through unmodified libibverbs: pinned, with unique keys
# that do not count up, bad registrations refused, and what a process
# leaves registered cleaned up (verbs_mr.c).

. "$(dirname "$0")/lib.sh"

in_vm || build_prog verbs_mr -libverbs
vm_main 1 "$PROG"

run_verbs_prog "$1"
