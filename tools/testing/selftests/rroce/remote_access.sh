#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Remote access that must be refused (remote_access.c): WRITE, READ and
# fetch-and-add with a wrong rkey, past the MR's end, without the right,
# after deregistration, through an invalidated memory window, and to a QP
# that grants nothing, each ending in IBV_WC_REM_ACCESS_ERR with memory
# unchanged; and zero-length WRITE and READ, whose key the IBTA leaves
# unchecked, succeeding whatever key they carry. Tested on rroce; then run on the C rdma_rxe and only reported,
# for Documentation/datapath.rst's comparison.

. "$(dirname "$0")/lib.sh"

in_vm || build_prog remote_access -libverbs
vm_main 1 "$PROG"
prog=$1

require_cmd rdma
ktap_plan 3

driver_up rroce
ktap_result $? "rroce0 on eth0"
run "$prog" rroce0
ktap_result $? "rroce: $(grep -c '^ok' <<<"$RUN_OUTPUT") passed," \
	"$(grep -c '^not ok' <<<"$RUN_OUTPUT") failed"
driver_down rroce
ktap_result $? "delete the device and unload"

# rxe's outcome is printed, not tested.
if driver_up rxe; then
	"$prog" rxe0 >/tmp/rxe.out 2>&1
	sed 's/^/#   rxe: /' /tmp/rxe.out
	echo "# rxe: $(grep -c '^ok' /tmp/rxe.out) passed, $(grep -c '^not ok' /tmp/rxe.out) failed"
	driver_down rxe
fi
ktap_finish
