#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ATOMIC WRITE and FLUSH on one device (placement.c): the capabilities, an
# 8-byte store in place, a write, a flag and a FLUSH of both in order, and
# the errors a bad key, right, alignment or length ends in, with memory
# unchanged. Tested on rroce; with RROCE_RXE_COMPARE=1, then run on the C
# rdma_rxe and only reported (rxe also advertises persistence, and answers
# some of the refusals with a different NAK).

. "$(dirname "$0")/lib.sh"

in_vm || build_prog placement -libverbs -lrdmacm
vm_main 1 "$PROG"
prog=$1
run_verbs_prog_vs_rxe "$prog"
