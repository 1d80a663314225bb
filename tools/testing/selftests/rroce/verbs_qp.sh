#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue pairs through unmodified libibverbs: numbered, sized, their rings
# mapped by the provider, bad requests refused, and what a process leaves
# open cleaned up (verbs_qp.c).

. "$(dirname "$0")/lib.sh"

in_vm || build_prog verbs_qp -libverbs
vm_main 1 "$PROG"

run_verbs_prog "$1"
