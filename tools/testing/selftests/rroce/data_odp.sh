#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# On-demand paging across the link, to the C rdma_rxe (which has none in
# 6.12): rroce's side registers its memory on demand (ibv_rc_pingpong -o,
# perftest --odp: SEND/RECV with data checked, RDMA WRITE and READ; perftest
# 4.5 refuses atomics with --odp) while rxe's side pins its own; first rroce
# in VM 1, then in VM 2.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd ibv_rc_pingpong ib_write_bw ib_read_bw rdma
ktap_plan 10

# round DRIVER_VM1 DRIVER_VM2 PORT: one direction of the test.
round() {
	local mine=$1 port=$3 dev gid odp= odp_bw= n=$((100 / SLOWDOWN))
	[ "$RROCE_VM" = 2 ] && mine=$2
	[ $mine = rroce ] && odp=-o odp_bw=--odp
	driver_up $mine
	ktap_result $? "$DEV on eth0 (vm1: $1, vm2: $2)"
	dev=$DEV
	gid=$(gid_index $dev "$RROCE_IP4")
	pair "rc_pingpong $1-$2" $port "iters in [0-9.]+ seconds" \
		ibv_rc_pingpong -d $dev -g "$gid" -p $port -n $n -s 8192 -c $odp
	pair "ib_write_bw $1-$2" $((port + 1)) "$(bw_row 65536 $n)" \
		ib_write_bw -d $dev -x "$gid" -p $((port + 1)) -F -s 65536 -n $n $odp_bw
	pair "ib_read_bw $1-$2" $((port + 2)) "$(bw_row 65536 $n)" \
		ib_read_bw -d $dev -x "$gid" -p $((port + 2)) -F -s 65536 -n $n $odp_bw
	driver_down $mine
	ktap_result $? "$dev deleted"
	# Both sides unloaded before the next round binds the port again.
	vm_signal "unloaded$port" && vm_wait "unloaded$port"
}

round rroce rxe 18960
round rxe rroce 18970
ktap_finish
