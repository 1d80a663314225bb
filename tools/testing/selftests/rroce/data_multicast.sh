#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UD multicast through rdma_cm (mckey): VM 1 joins a group with three QPs,
# VM 2 joins it and sends datagrams to it, and each of VM 1's QPs receives
# every one; when mckey ends, VM 1's eth0 has left the group. First both on
# rroce, then rxe receiving from rroce. (rdma_cm joins RoCE v2 groups of
# IPv4 addresses only. rxe 6.12 as the sender put 1 of 20 datagrams on the
# wire, to rxe as to rroce: that direction is not tested.)

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd mckey rdma ip
ktap_plan $((RROCE_VM == 1 ? 6 : 4))
modprobe rdma_ucm
MSGS=20

# round DRIVER_VM1 DRIVER_VM2 GROUP: one group, VM 1 receiving.
round() {
	local mine=$1 group=$3 pid status
	[ "$RROCE_VM" = 2 ] && mine=$2
	driver_up $mine
	ktap_result $? "$DEV on eth0 (vm1: $1, vm2: $2)"
	gid_index $DEV "$RROCE_IP4" >/dev/null
	if [ "$RROCE_VM" = 1 ]; then
		timeout 120 stdbuf -oL mckey -m $group -b "$RROCE_IP4" -c 3 -C $MSGS >/tmp/mckey.out 2>&1 &
		pid=$!
		wait_output /tmp/mckey.out "receiving data transfers" 60 $pid && vm_signal "joined $group"
		await $pid
		status=$?
		sed 's/^/#   /' /tmp/mckey.out
		[ $status = 0 ] && [ "$(grep -c 'joined dgid' /tmp/mckey.out)" = 3 ] &&
			grep -q "data transfers complete" /tmp/mckey.out
		ktap_result $? "3 QPs joined $group, and each received $MSGS datagrams"
		! ip maddr show dev eth0 | grep -qw "$group"
		ktap_result $? "eth0 left $group"
	else
		vm_wait "joined $group" && run timeout 120 mckey -m $group -s -b "$RROCE_IP4" -C $MSGS
		ktap_result $? "$MSGS datagrams sent to $group"
	fi
	show_link_stats $DEV
	driver_down $mine
	# Both sides unloaded before the next round binds the port again.
	vm_signal "unloaded $group" && vm_wait "unloaded $group"
}

round rroce rroce 239.1.2.1
round rxe rroce 239.1.2.2
ktap_finish
