#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tearing rroce down under traffic: while ibv_rc_pingpong (client and server
# on one device, waiting on completion events) and ib_write_bw run, the
# device goes by `rdma link delete`, by its netdev being deleted (a veth),
# and by `rmmod rroce`. Each time the processes must get errors and exit,
# not hang; the device and the module must go; and a fresh device must then
# carry traffic again. The harness fails the test on any kernel warning.

. "$(dirname "$0")/lib.sh"
vm_main 1

require_cmd ibv_rc_pingpong ib_write_bw rdma ip
ktap_plan 10

PP_PORT=18910
BW_PORT=18911

# traffic DEV IP4: starts a pingpong and ib_write_bw on DEV, each its own
# client and server, long enough to outlast the test; their PIDs in PIDS.
traffic() {
	local dev=$1 gid
	gid=$(gid_index "$dev" "$2") || return 1
	PIDS=
	stdbuf -oL ibv_rc_pingpong -d "$dev" -g "$gid" -p $PP_PORT -n 100000000 -s 1024 -e \
		>/tmp/pp.s 2>&1 &
	PIDS="$PIDS $!"
	wait_listen $PP_PORT || return 1
	stdbuf -oL ibv_rc_pingpong -d "$dev" -g "$gid" -p $PP_PORT -n 100000000 -s 1024 -e \
		127.0.0.1 >/tmp/pp.c 2>&1 &
	PIDS="$PIDS $!"
	stdbuf -oL ib_write_bw -d "$dev" -x "$gid" -p $BW_PORT -F -s 65536 -D 600 >/tmp/bw.s 2>&1 &
	PIDS="$PIDS $!"
	wait_listen $BW_PORT || return 1
	stdbuf -oL ib_write_bw -d "$dev" -x "$gid" -p $BW_PORT -F -s 65536 -D 600 127.0.0.1 \
		>/tmp/bw.c 2>&1 &
	PIDS="$PIDS $!"
	# Until ib_write_bw is past its setup and writing.
	wait_output /tmp/bw.c '#bytes' 20 && return 0
	echo "# ib_write_bw did not start writing"
	return 1
}

# moving DEV: the device's packet counter grows over two seconds.
moving() {
	local a b
	a=$(link_counter "$1" rcvd_pkts)
	sleep 2
	b=$(link_counter "$1" rcvd_pkts)
	echo "# $1: $((b - a)) packets received in 2 s"
	[ "$b" -gt "$a" ]
}

# all_exit SECONDS: the traffic's processes all exit within SECONDS; those
# left are killed.
all_exit() {
	local end=$((SECONDS + $1)) pid left
	while [ $SECONDS -lt $end ]; do
		left=
		for pid in $PIDS; do kill -0 "$pid" 2>/dev/null && left="$left $pid"; done
		[ -z "$left" ] && break
		sleep 0.5
	done
	for pid in $left; do
		echo "# pid $pid did not exit: $(tr '\0' ' ' </proc/"$pid"/cmdline)"
		sed 's/^/#   /' /proc/"$pid"/stack
		kill -9 "$pid"
	done
	wait 2>/dev/null
	tail -n 2 /tmp/pp.s /tmp/pp.c /tmp/bw.s /tmp/bw.c | sed 's/^/#   /'
	[ -z "$left" ]
}

# 1. rdma link delete under traffic.
load_rroce && rdma link add rroce0 type rroce netdev eth0 && traffic rroce0 "$RROCE_IP4" &&
	moving rroce0
ktap_result $? "rroce0: a pingpong and ib_write_bw running"
start=$SECONDS
rdma link delete rroce0 && all_exit $((30 * SLOWDOWN))
ktap_result $? "rdma link delete rroce0 under traffic: the processes exited ($((SECONDS - start)) s)"
rmmod rroce
ktap_result $? "rmmod rroce"

# 2. The netdev goes under traffic.
ip link add rrveth0 type veth peer name rrveth1 &&
	ip addr add 10.99.0.1/24 dev rrveth0 && ip link set rrveth0 up && ip link set rrveth1 up &&
	load_rroce && rdma link add rroce1 type rroce netdev rrveth0 &&
	traffic rroce1 10.99.0.1 && moving rroce1
ktap_result $? "rroce1 on a veth: a pingpong and ib_write_bw running"
start=$SECONDS
ip link delete rrveth0 && all_exit $((30 * SLOWDOWN))
ktap_result $? "the veth deleted under traffic: the processes exited ($((SECONDS - start)) s)"
for i in $(seq 50); do rdma link show rroce1/1 >/dev/null 2>&1 || break; sleep 0.2; done
! rdma link show rroce1/1 >/dev/null 2>&1
ktap_result $? "rroce1 went with its netdev"

# 3. rmmod under traffic.
rdma link add rroce0 type rroce netdev eth0 && traffic rroce0 "$RROCE_IP4" && moving rroce0
ktap_result $? "rroce0 again: a pingpong and ib_write_bw running"
start=$SECONDS
timeout $((60 * SLOWDOWN)) rmmod rroce && all_exit $((30 * SLOWDOWN))
ktap_result $? "rmmod rroce under traffic: unloaded, the processes exited ($((SECONDS - start)) s)"

# A fresh start works.
load_rroce && rdma link add rroce0 type rroce netdev eth0 && gid=$(gid_index rroce0 "$RROCE_IP4") &&
	{ timeout $((60 * SLOWDOWN)) ibv_rc_pingpong -d rroce0 -g "$gid" -p $PP_PORT -n 100 -c >/tmp/pp.s 2>&1 & } &&
	wait_listen $PP_PORT &&
	run timeout $((60 * SLOWDOWN)) ibv_rc_pingpong -d rroce0 -g "$gid" -p $PP_PORT -n 100 -c 127.0.0.1 &&
	wait $! && grep -q 'iters in' <<<"$RUN_OUTPUT"
ktap_result $? "reloaded: a fresh rroce0 carries a pingpong"
rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
