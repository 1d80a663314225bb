#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma_cm over rroce: connections are set up by the kernel's CM, whose MADs
# go through QP1, the kernel's own QP on the device (kernel verbs: kernel
# CQs, posts from atomic context, address handles); the data then flows
# between user QPs.  rping checks its data; ib_send_bw -R connects through
# rdma_cm.  VM 1 serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd rping ib_send_bw rdma
ktap_plan 4

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

BW='^ *[0-9]+ +[0-9]+ +[0-9.]+ +0*[1-9.][0-9.]*[1-9]'
# Once in 5 runs the client was rejected as if nothing listened yet (see
# Documentation/testing.rst): give the listener a second to settle.
cm_listen_settled() { wait_cm_listen "$1" && sleep 1; }
PAIR_WAIT=cm_listen_settled PAIR_TIMEOUT=120 pair "ib_send_bw -R" 18991 "$BW" ib_send_bw -d rroce0 -R -p 18991 -F -s 4096 -n 200

rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
