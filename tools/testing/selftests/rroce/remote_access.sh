#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Remote access that must be refused (remote_access.c): WRITE, READ and
# fetch-and-add with a wrong rkey, past the MR's end, without the right,
# after deregistration, through an invalidated memory window or a
# zero-based one past 2^64, and to a QP that grants nothing, each ending
# in IBV_WC_REM_ACCESS_ERR with memory
# unchanged; and zero-length WRITE and READ, whose key the IBTA leaves
# unchecked, succeeding whatever key they carry. Tested on rroce; with
# RROCE_RXE_COMPARE=1, then run on the C rdma_rxe and only reported,
# for Documentation/datapath.rst's comparison.

. "$(dirname "$0")/lib.sh"

in_vm || build_prog remote_access -libverbs
vm_main 1 "$PROG"
prog=$1
run_verbs_prog_vs_rxe "$prog"
