#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma_cm over rroce: connections are set up by the kernel's CM, whose MADs
# go through QP1, the kernel's own QP on the device (kernel verbs: kernel
# CQs, posts from atomic context, address handles); the data then flows
# between user QPs.  rping checks its data; ucmatose connects several RC QPs
# at once and udaddy UD QPs.  VM 1 serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd rping ucmatose udaddy rdma
ktap_plan 5

modprobe rdma_ucm
load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"
gid_index rroce0 "$RROCE_IP4" >/dev/null

# The servers listen through rdma_cm, not TCP: wait_cm_listen.
if [ "$RROCE_VM" = 1 ]; then
	timeout 120 rping -s -a "$RROCE_IP4" -p 18990 -v -C 20 -S 200 >/tmp/rping.out 2>&1 &
	pid=$!
	wait_cm_listen 18990 && vm_signal rping
	await $pid
	status=$?
	sed 's/^/#   /' /tmp/rping.out | tail -5
	[ $status = 0 ] && [ "$(grep -c 'ping data' /tmp/rping.out)" = 20 ]
	ktap_result $? "rping server: 20 pings of 200 bytes, each checked"
else
	vm_wait rping && run timeout 120 rping -c -a "$(peer_ip4)" -p 18990 -v -C 20 -S 200 &&
		[ "$(grep -c 'ping data' <<<"$RUN_OUTPUT")" = 20 ]
	ktap_result $? "rping client: 20 pings of 200 bytes, each checked"
fi

# ucmatose: 4 RC connections at once, 50 messages of 4 KiB each way; udaddy:
# UD through rdma_cm (SIDR, and an address handle built from the CM's path).
# Not perftest's -R: perftest 4.5-0.17 (Debian 12) connects its data QPs as
# soon as its side of a handshake is done, racing the server's new listener,
# and is then rejected (reason 8) - see Documentation/testing.rst.
PAIR_WAIT=wait_cm_listen PAIR_ADDR_OPT=-s pair ucmatose 18991 'return status 0' \
	ucmatose -p 18991 -c 4 -C 50 -S 4096
# udaddy has no port option (its -p is the port space): it uses 7174.
PAIR_WAIT=wait_cm_listen PAIR_ADDR_OPT=-s pair udaddy 7174 'return status 0' \
	udaddy -b "$RROCE_IP4" -c 2 -C 50

rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
