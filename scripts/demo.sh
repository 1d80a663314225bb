#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo: two VMs on a private link, an RDMA device on each, and what a user
# wants to see of it. rroce0 is created and shown as rdma-core sees it; the
# traffic (an RC ping-pong and a write bandwidth run between the VMs) is the
# C rdma_rxe's until rroce has its data path.
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
load_rroce && rdma link add rroce0 type rroce netdev eth0 || exit 1
ibv_devinfo -d rroce0
rdma link show rroce0/1
rdma link delete rroce0 && rmmod rroce || exit 1

# rdma_rxe binds UDP port 4791 when it loads: only now that rroce is gone.
dev=rxe0
echo "== rdma_rxe, the reference: rdma link add rxe0 type rxe netdev eth0 =="
modprobe rdma_rxe
rdma link add $dev type rxe netdev eth0
gid=$(gid_index $dev "$RROCE_IP4") || { echo "no RoCE v2 GID on $dev"; exit 1; }
echo "RoCE v2 GID index $gid ($RROCE_IP4)"
if [ "$RROCE_VM" = 1 ]; then
	ibv_rc_pingpong -d $dev -g "$gid" -n 1000 -s 4096 -c &
	wait_listen 18515 && vm_signal pingpong
	await $! || exit 1
	ib_write_bw -d $dev -x "$gid" -s 65536 -n 1000 >/dev/null &
	wait_listen 18515 && vm_signal write_bw
	await $! || exit 1
else
	echo "== ibv_rc_pingpong -c (1000 round trips of 4 KiB, data checked) =="
	vm_wait pingpong && ibv_rc_pingpong -d $dev -g "$gid" -n 1000 -s 4096 -c "$(peer_ip4)" || exit 1
	echo "== ib_write_bw (1000 RDMA writes of 64 KiB) =="
	vm_wait write_bw && ib_write_bw -d $dev -x "$gid" -s 65536 -n 1000 "$(peer_ip4)" || exit 1
fi
rdma link delete $dev
