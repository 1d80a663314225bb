#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo: two VMs on a private link, an RDMA device on each, and what a user
# wants to see of it: rroce0 as rdma-core sees it, then RDMA traffic between
# the VMs (an RC ping-pong with data checks, RDMA WRITE and READ bandwidth).
# make bench compares rroce with the C rdma_rxe.
#
#   scripts/demo.sh           (make demo builds everything first)

. "$(dirname "$0")/../tools/testing/selftests/rroce/lib.sh"

if ! in_vm; then
	echo "demo: booting two VMs (software emulation: expect a minute or two)"
	out=$(mktemp -d "${TMPDIR:-/tmp}/rroce-demo.XXXXXX")
	"$REPO/scripts/vm.sh" -n 2 -q -t 300 -o "$out" -- "$0"
	status=$?
	for i in 1 2; do
		echo "----- vm$i ($( [ $i = 1 ] && echo server || echo client )) -----"
		cat "$out/vm$i.log" 2>/dev/null
	done
	[ $status = 0 ] && echo "demo: done" || echo "demo: FAILED (status $status, details in $out)"
	exit $status
fi

echo "== rroce: rdma link add rroce0 type rroce netdev eth0 =="
dev=rroce0
load_rroce && rdma link add $dev type rroce netdev eth0 || exit 1
[ "$RROCE_VM" = 1 ] && ibv_devinfo -d $dev && rdma link show $dev/1
gid=$(gid_index $dev "$RROCE_IP4") || { echo "no RoCE v2 GID on $dev"; exit 1; }
echo "RoCE v2 GID index $gid ($RROCE_IP4)"
if [ "$RROCE_VM" = 1 ]; then
	ibv_rc_pingpong -d $dev -g "$gid" -n 1000 -s 4096 -c &
	wait_listen 18515 && vm_signal pingpong
	await $! || exit 1
	ib_write_bw -d $dev -x "$gid" -F -s 65536 -n 1000 >/dev/null &
	wait_listen 18515 && vm_signal write_bw
	await $! || exit 1
	ib_read_bw -d $dev -x "$gid" -F -s 65536 -n 500 >/dev/null &
	wait_listen 18515 && vm_signal read_bw
	await $! || exit 1
else
	echo "== ibv_rc_pingpong -c (1000 round trips of 4 KiB, data checked) =="
	vm_wait pingpong && ibv_rc_pingpong -d $dev -g "$gid" -n 1000 -s 4096 -c "$(peer_ip4)" || exit 1
	echo "== ib_write_bw (1000 RDMA writes of 64 KiB) =="
	vm_wait write_bw && ib_write_bw -d $dev -x "$gid" -F -s 65536 -n 1000 "$(peer_ip4)" || exit 1
	echo "== ib_read_bw (500 RDMA reads of 64 KiB) =="
	vm_wait read_bw && ib_read_bw -d $dev -x "$gid" -F -s 65536 -n 500 "$(peer_ip4)" || exit 1
fi
rdma link delete $dev && rmmod rroce
