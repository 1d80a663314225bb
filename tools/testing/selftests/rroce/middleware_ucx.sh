#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UCX over rroce, as Debian ships it (1.13): every UCX transport that
# applies to a RoCE device, ud_verbs alone and rc_verbs (which wires up
# through ud_verbs), on the IPv4 and the IPv6 RoCE v2 GID. ucp_check.c
# moves tagged messages from 1 byte to 4 MiB (256 KiB on the debug kernel;
# eager, and rendezvous by RDMA READ or WRITE), stream messages, puts, gets
# and atomics through UCP and checks every byte; ucx_perftest runs UCX's own tag, stream, RMA and
# atomic tests. First on one device (both processes in one VM, shared
# memory transports left out; each VM checks half of it on its own device,
# at the same time), then between the VMs. With RROCE_RXE_COMPARE=1, then
# the same on the C rdma_rxe, whose outcome is printed, not tested: UCX up
# to 1.18 drops every UD packet of its IPv4 GID there (it reads the
# packet's IP version from the completion's sl, which rxe leaves 0).

. "$(dirname "$0")/lib.sh"
in_vm || build_prog ucp_check -lucp -lucs
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2 "$PROG"

UCP_CHECK=$1
require_cmd ucx_perftest rdma
# UCX gives up on a silent UD peer after UCX_UD_TIMEOUT (30 s).
LIMIT=$((120 * SLOWDOWN))
# What each VM checks on its own device: a transport, and half of
# ucx_perftest's tests, about as long as the other half.
if [ "$RROCE_VM" = 1 ]; then
	LOOP_TLS="ud_verbs,self"
	LOOP_TESTS=("tag_bw -s 65536" "stream_bw -s 65536")
else
	LOOP_TLS="rc_verbs,ud_verbs,self"
	LOOP_TESTS=("tag_lat -s 8" "ucp_put_bw -s 65536" "ucp_get -s 65536" "ucp_add")
fi
# The device, 2 checks and the perftests on it, 5 between the VMs, the
# traffic seen, and the device gone.
ktap_plan $((10 + ${#LOOP_TESTS[@]}))
# ucp_check's rounds and largest message: on the debug kernel, where UCX's
# ud_verbs moves a few hundred packets a second, one round up to 256 KiB.
if [ "$SLOWDOWN" = 1 ]; then UCP_ARGS="-r 2 -m 4194304"; else UCP_ARGS="-r 1 -m 262144"; fi

# ucp_run TLS GID PORT [SERVER]: ucp_check over TLS on $DEV's GID index
# GID, the server if no SERVER address is given; its output in
# /tmp/ucp.server or /tmp/ucp.client.
ucp_run() {
	local side=server
	[ -n "${4:-}" ] && side=client
	env $(ucx_env "$DEV" "$2" "$1") timeout "$LIMIT" "$UCP_CHECK" $UCP_ARGS -p "$3" ${4:-} >"/tmp/ucp.$side" 2>&1
}

# ucp_loop TLS GID: ucp_check with server and client on one device ($DEV);
# false unless both pass every check.
ucp_loop() {
	local server status
	ucp_run "$1" "$2" 13340 &
	server=$!
	wait_listen 13340 && ucp_run "$1" "$2" 13340 "$RROCE_IP4"
	status=$?
	wait $server || status=1
	grep -h 'not ok\|ucp_check:\|UCX  ERROR\|Fatal' /tmp/ucp.server /tmp/ucp.client | sed 's/^/#   /'
	return $status
}

# perftest_loop ARG...: ucx_perftest ARG... on one device, over rc_verbs;
# false unless the client prints its final row.
perftest_loop() {
	local server status
	local env=$(ucx_env "$DEV" "$gid4" rc_verbs,ud_verbs,self)
	env $env timeout "$LIMIT" ucx_perftest -p 13341 "$@" >/tmp/perftest.server 2>&1 &
	server=$!
	wait_listen 13341 &&
		env $env timeout "$LIMIT" ucx_perftest "$RROCE_IP4" -p 13341 "$@" >/tmp/perftest.client 2>&1
	status=$?
	wait $server || status=1
	grep -h 'Final\|ERROR\|Fatal' /tmp/perftest.client | sed 's/^/#   /'
	grep -q '^Final:' /tmp/perftest.client && return $status
}

# ucp_pair NAME PORT TLS GID: ucp_check between the VMs, one KTAP line each.
ucp_pair() {
	PAIR_TIMEOUT=120 pair "$1" "$2" "ucp_check: [0-9]+ passed, 0 failed" \
		env $(ucx_env "$DEV" "$4" "$3") "$UCP_CHECK" $UCP_ARGS -p "$2"
}

driver_up rroce
ktap_result $? "rroce0 on eth0"
gid4=$(gid_index "$DEV" "$RROCE_IP4")
gid6=$(gid6_index "$DEV" "$RROCE_IP6")
sent=$(link_counter "$DEV" sent_pkts)

for gid in "$gid4" "$gid6"; do
	ip=IPv4 && [ "$gid" = "$gid6" ] && ip=IPv6
	ucp_loop "$LOOP_TLS" "$gid"
	ktap_result $? "ucp_check over ${LOOP_TLS%%,*} on one device, $ip GID: every byte intact"
done
for test in "${LOOP_TESTS[@]}"; do
	perftest_loop -t $test -n $((200 / SLOWDOWN))
	ktap_result $? "ucx_perftest -t $test on one device"
done
# Between the VMs once both are done with their own.
vm_signal one-device && vm_wait one-device 600
ucp_pair ucp_check_ud_v4 13342 ud_verbs,self "$gid4"
ucp_pair ucp_check_rc_v4 13343 rc_verbs,ud_verbs,self "$gid4"
ucp_pair ucp_check_rc_v6 13344 rc_verbs,ud_verbs,self "$gid6"
SERVER_CHECK="Accepted connection" PAIR_TIMEOUT=120 pair ucx_perftest_tag_bw 13349 "^Final: +$((200 / SLOWDOWN)) " \
	env $(ucx_env "$DEV" "$gid4" rc_verbs,ud_verbs,self) ucx_perftest -p 13349 -t tag_bw -s 1048576 -n $((200 / SLOWDOWN))
SERVER_CHECK="Accepted connection" PAIR_TIMEOUT=120 pair ucx_perftest_ud_lat 13350 "^Final: +$((200 / SLOWDOWN)) " \
	env $(ucx_env "$DEV" "$gid4" ud_verbs,self) ucx_perftest -p 13350 -t ucp_put_lat -s 8 -n $((200 / SLOWDOWN))

ktap_sent "$DEV" "$sent" "rroce0 sent the traffic"
show_link_stats "$DEV"
driver_down rroce
ktap_result $? "delete the device and unload"

# rdma_rxe, for comparison: printed, not tested. UCX waits UCX_UD_TIMEOUT
# for a silent UD peer before it gives up; a shorter one keeps this short.
export UCX_UD_TIMEOUT=10s
REFERENCE=rxe
if rxe_reference && driver_up rxe; then
	gid4=$(gid_index "$DEV" "$RROCE_IP4")
	gid6=$(gid6_index "$DEV" "$RROCE_IP6")
	for gid in "$gid4" "$gid6"; do
		ip=IPv4 && [ "$gid" = "$gid6" ] && ip=IPv6
		ucp_loop "$LOOP_TLS" "$gid" >/dev/null
		ktap_result $? "ucp_check over ${LOOP_TLS%%,*} on one device, $ip GID"
	done
	vm_signal rxe.ready && vm_wait rxe.ready 300
	ucp_pair rxe_ud 13351 ud_verbs,self "$gid4"
	ucp_pair rxe_rc 13352 rc_verbs,ud_verbs,self "$gid4"
	driver_down rxe
fi
ktap_finish
