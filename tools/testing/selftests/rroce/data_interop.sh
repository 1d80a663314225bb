#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce and the kernel's C rdma_rxe talk to each other: the RC and UC
# pingpongs with data validation, the UD and SRQ pingpongs, perftest's
# send, write and read bandwidth, and RDMA WRITE, ATOMIC WRITE and FLUSH
# over rdma_cm (placement.c), first with rroce serving in VM 1 and rxe
# connecting from VM 2, then the other way round.  Only one of the two
# drivers can hold UDP port 4791 in a VM.

. "$(dirname "$0")/lib.sh"
# About 140 s on the test kernel; on the debug kernel, where it took 24 min
# in full, every run is RROCE_SLOWDOWN times shorter.
VM_TIMEOUT=${VM_TIMEOUT:-600}
in_vm || build_prog placement -libverbs -lrdmacm
vm_main 2 "$PROG"
placement=$1

require_cmd ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ib_send_bw ib_write_bw ib_read_bw rdma
ktap_plan 18

ITERS="iters in [0-9.]+ seconds"

# round DRIVER_VM1 DRIVER_VM2 PORT: one direction of the test.
round() {
	local mine=$1 port=$3 dev gid
	[ "$RROCE_VM" = 2 ] && mine=$2
	driver_up $mine
	ktap_result $? "$DEV on eth0 (vm1: $1, vm2: $2)"
	dev=$DEV
	gid=$(gid_index $dev "$RROCE_IP4")
	pair "rc_pingpong $1-$2" $port "$ITERS" \
		ibv_rc_pingpong -d $dev -g "$gid" -p $port -n $((100 / SLOWDOWN)) -s 8192 -c
	pair "uc_pingpong $1-$2" $((port + 1)) "$ITERS" \
		ibv_uc_pingpong -d $dev -g "$gid" -p $((port + 1)) -n $((100 / SLOWDOWN)) -s 1024 -c
	pair "ud_pingpong $1-$2" $((port + 2)) "$ITERS" \
		ibv_ud_pingpong -d $dev -g "$gid" -p $((port + 2)) -n $((100 / SLOWDOWN)) -s 1024
	pair "srq_pingpong $1-$2" $((port + 3)) "$ITERS" \
		ibv_srq_pingpong -d $dev -g "$gid" -p $((port + 3)) -n $((50 / SLOWDOWN)) -s 1024 -q 4
	port=$((port + 3))
	for tool in ib_send_bw ib_write_bw ib_read_bw; do
		port=$((port + 2))
		PAIR_TIMEOUT=300 pair "$tool $1-$2" $port "$(bw_row 1048576 $((20 / SLOWDOWN)))" \
			$tool -d $dev -x "$gid" -p $port -F -s 1048576 -n $((20 / SLOWDOWN))
	done
	port=$((port + 2))
	PAIR_WAIT=wait_cm_listen pair "placement $1-$2" $port "^(placed|completed):" \
		"$placement" -p $port
	# What each side counted: retransmissions, duplicates, ...
	show_link_stats $dev
	driver_down $mine
	# Both sides unloaded before the next round binds the port again.
	vm_signal "unloaded$port" && vm_wait "unloaded$port"
}

round rroce rxe 18700
round rxe rroce 18800
ktap_finish
