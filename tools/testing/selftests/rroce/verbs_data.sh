#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The RC data path through unmodified libibverbs, two QPs of one device over
# loopback: SEND with scatter/gather, immediate data and inline, RDMA WRITE
# and READ, atomics, unsignalled completions, access and protection errors
# with flushing, retries exhausted to a QP that does not exist, and memory
# windows of both types (verbs_data.c).

. "$(dirname "$0")/lib.sh"

in_vm || build_prog verbs_data -libverbs
vm_main 1 "$PROG"

run_verbs_prog "$1"
