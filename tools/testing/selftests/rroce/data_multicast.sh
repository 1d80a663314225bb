#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UD multicast through rdma_cm (mckey): VM 1 joins a group with three QPs,
# VM 2 joins it and sends datagrams to it, and each of VM 1's QPs receives
# every one; when mckey ends, VM 1's eth0 has left the group. First both on
# rroce, then rxe receiving from rroce. rdma_cm joins RoCE v2 groups of
# IPv4 addresses only: an IPv6 group is attached to through libibverbs
# (mcast.c), with the same checks, rroce to rroce; its sender starts 8 PSNs
# before the 24-bit wrap, so UD crosses it too. (rxe 6.12 as the sender
# put 1 of 20 datagrams on the wire, to rxe as to rroce; as an IPv6
# receiver it only adds the group's MAC address, never joins the group
# (MLD), and received none: those directions are not tested.)

. "$(dirname "$0")/lib.sh"
in_vm || build_prog mcast -libverbs
vm_main 2 "$PROG"
mcast=$1

require_cmd mckey rdma ip
ktap_plan $((RROCE_VM == 1 ? 10 : 6))
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
		timeout $((120 * SLOWDOWN)) stdbuf -oL mckey -m $group -b "$RROCE_IP4" -c 3 -C $MSGS >/tmp/mckey.out 2>&1 &
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
		vm_wait "joined $group" && run timeout $((120 * SLOWDOWN)) mckey -m $group -s -b "$RROCE_IP4" -C $MSGS
		ktap_result $? "$MSGS datagrams sent to $group"
	fi
	show_link_stats $DEV
	driver_down $mine
	# Both sides unloaded before the next round binds the port again.
	vm_signal "unloaded $group" && vm_wait "unloaded $group"
}

# round6 DRIVER_VM1 DRIVER_VM2 GROUP: the same with an IPv6 group, through
# libibverbs.
round6() {
	local mine=$1 group=$3 gid pid status
	[ "$RROCE_VM" = 2 ] && mine=$2
	driver_up $mine
	ktap_result $? "$DEV on eth0 (vm1: $1, vm2: $2)"
	gid=$(gid6_index $DEV "$RROCE_IP6")
	if [ "$RROCE_VM" = 1 ]; then
		timeout $((120 * SLOWDOWN)) stdbuf -oL "$mcast" recv $DEV "$gid" $group $MSGS 3 >/tmp/mcast.out 2>&1 &
		pid=$!
		wait_output /tmp/mcast.out "^ready" 60 $pid
		ip -6 maddr show dev eth0 | grep -qw "$group"
		ktap_result $? "eth0 joined $group (MLD) while QPs are attached"
		vm_signal "joined $group"
		await $pid
		status=$?
		sed 's/^/#   /' /tmp/mcast.out
		[ $status = 0 ]
		ktap_result $? "3 QPs attached to $group, and each received $MSGS datagrams intact"
		! ip -6 maddr show dev eth0 | grep -qw "$group"
		ktap_result $? "eth0 left $group"
	else
		vm_wait "joined $group" && run timeout $((120 * SLOWDOWN)) "$mcast" send $DEV "$gid" $group $MSGS
		ktap_result $? "$MSGS datagrams sent to $group"
	fi
	show_link_stats $DEV
	driver_down $mine
	vm_signal "unloaded $group" && vm_wait "unloaded $group"
}

round rroce rroce 239.1.2.1
round rxe rroce 239.1.2.2
round6 rroce rroce ff0e::1:1
ktap_finish
