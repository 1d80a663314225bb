#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Completion queues through unmodified libibverbs and its rxe provider: the
# rings are created, mapped, polled, armed and destroyed, bad sizes are
# refused, and what a process leaves open is cleaned up (verbs_cq.c).

. "$(dirname "$0")/lib.sh"

in_vm || build_prog verbs_cq -libverbs
vm_main 1 "$PROG"

run_verbs_prog "$1"
