#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The C rdma_rxe on both VMs: ibv_rc_pingpong with data validation and
# ib_write_bw between them succeed.  This proves the harness, the kernel
# config and the userspace, and is the reference every rroce test is
# compared with.  VM 1 serves, VM 2 connects; the debug kernel runs
# RROCE_SLOWDOWN times fewer iterations.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd ibv_rc_pingpong ib_write_bw rdma
ktap_plan 3
N=$((500 / SLOWDOWN))

modprobe rdma_rxe || ktap_skip_all "rdma_rxe does not load"
rdma link add rxe0 type rxe netdev eth0
gid=$(gid_index rxe0 "$RROCE_IP4")
ktap_result $? "rxe0 on eth0 has a RoCE v2 GID for $RROCE_IP4 (index ${gid:-none})"

if [ "$RROCE_VM" = 1 ]; then
	ibv_rc_pingpong -d rxe0 -g "$gid" -p 18515 -n $N -s 4096 -c >/tmp/pingpong 2>&1 &
	wait_listen 18515 && vm_signal pingpong
	await $!
	status=$?
	sed 's/^/#   /' /tmp/pingpong
	grep -q 'iters in' /tmp/pingpong || status=1
	ktap_result $status "ibv_rc_pingpong -c, server side"

	ib_write_bw -d rxe0 -x "$gid" -p 18516 -F -s 65536 -n $N >/tmp/write_bw 2>&1 &
	wait_listen 18516 && vm_signal write_bw
	await $!
	ktap_result $? "ib_write_bw, server side"
else
	vm_wait pingpong && run ibv_rc_pingpong -d rxe0 -g "$gid" -p 18515 -n $N -s 4096 -c "$(peer_ip4)" &&
		grep -q 'iters in' <<<"$RUN_OUTPUT"
	ktap_result $? "ibv_rc_pingpong -c, client side"

	vm_wait write_bw && run ib_write_bw -d rxe0 -x "$gid" -p 18516 -F -s 65536 -n $N "$(peer_ip4)" &&
		grep -Eq "$(bw_row 65536 $N)" <<<"$RUN_OUTPUT"
	ktap_result $? "ib_write_bw 64 KiB, client side, all $N iterations"
fi
rdma link delete rxe0
ktap_finish
