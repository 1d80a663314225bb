#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Open MPI over UCX over rroce, as Debian ships them (4.1 and 1.13): a real
# MPI program, mpi_check.c, whose every result is checked (point-to-point
# messages from empty to 4 MiB, non-blocking exchanges, allreduce,
# alltoall, one-sided put, get and fetch-and-op), with two ranks on one
# device (VM 1; UCX_TLS leaves shared memory out, so they talk through
# rroce0), then one rank per VM. mpirun on VM 1 starts the daemon on VM 2
# through rexec.sh, as it would through ssh. With RROCE_RXE_COMPARE=1,
# then the same on the C rdma_rxe, whose outcome is printed, not tested.

. "$(dirname "$0")/lib.sh"
in_vm || CC=mpicc build_prog mpi_check
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2 "$PROG"

MPI_CHECK=$1
require_cmd mpirun rdma
if [ "$RROCE_VM" = 1 ]; then ktap_plan 5; else ktap_plan 3; fi
LIMIT=$((300 * SLOWDOWN))
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# mpi_run HOSTS: mpi_check on two ranks, on HOSTS, over UCX on $DEV;
# false unless every check passed. Both the point-to-point layer and
# one-sided windows use UCX (Open MPI would otherwise take its own TCP or
# libfabric transports for windows).
mpi_run() {
	timeout "$LIMIT" mpirun -np 2 --oversubscribe --host "$1" \
		--mca plm_rsh_agent "$SELFTESTS_DIR/rexec.sh" --mca oob_tcp_if_include 192.0.2.0/24 \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_NET_DEVICES="$DEV:1" \
		-x UCX_IB_GID_INDEX="$(gid_index "$DEV" "$RROCE_IP4")" \
		"$MPI_CHECK" $((3 - SLOWDOWN / 2)) >/tmp/mpi.out 2>&1 &&
		grep -Eq '^mpi_check: [0-9]+ passed, 0 failed' /tmp/mpi.out
}

# mpi_both NAME: VM 1 runs mpi_check across the VMs; VM 2 serves its half
# and is true if it ran and ended well.
mpi_both() {
	local status
	if [ "$RROCE_VM" = 1 ]; then
		vm_wait "$1.ready" 300 && mpi_run "$RROCE_IP4,$(peer_ip4)"
		status=$?
		vm_signal "$1.done"
		return $status
	fi
	vm_signal "$1.ready"
	rexec_serve "$1.done"
}

driver_up rroce
ktap_result $? "rroce0 on eth0"
sent=$(link_counter "$DEV" sent_pkts)
if [ "$RROCE_VM" = 1 ]; then
	run_output() { sed 's/^/#   /' /tmp/mpi.out; }
	mpi_run "$RROCE_IP4,$RROCE_IP4"
	status=$?
	run_output
	ktap_result $status "mpi_check, two ranks on one device: every result right"
	ktap_sent "$DEV" "$sent" "the two ranks talked through rroce0"
	mpi_both rroce
	status=$?
	run_output
	ktap_result $status "mpi_check, one rank per VM: every result right"
else
	mpi_both rroce
	ktap_result $? "the daemon of VM 1's mpirun ran here"
fi
show_link_stats "$DEV"
driver_down rroce
ktap_result $? "delete the device and unload"

# rdma_rxe, for comparison: printed, not tested.
REFERENCE=rxe
if rxe_reference && driver_up rxe; then
	if [ "$RROCE_VM" = 1 ]; then
		mpi_run "$RROCE_IP4,$RROCE_IP4"
		ktap_result $? "mpi_check, two ranks on one device"
		mpi_both rxe
		status=$?
		grep -E '^not ok|Error|error' /tmp/mpi.out | head -n 5 | sed 's/^/#   rxe: /'
		ktap_result $status "mpi_check, one rank per VM"
	else
		mpi_both rxe
	fi
	driver_down rxe
fi
ktap_finish
