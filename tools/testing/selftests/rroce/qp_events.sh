#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A QP's asynchronous events (qp_events.c): COMM_EST when the first packet
# reaches an RC QP in RTR, LAST_WQE_REACHED when a QP on an SRQ enters the
# error state, QP_FATAL when a completion finds its CQ full, and none where
# none is due. Tested on rroce; with RROCE_RXE_COMPARE=1, then run on the
# C rdma_rxe and only reported.

. "$(dirname "$0")/lib.sh"

in_vm || build_prog qp_events -libverbs
vm_main 1 "$PROG"
prog=$1
run_verbs_prog_vs_rxe "$prog"
