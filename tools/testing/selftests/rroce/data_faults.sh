#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC traffic over a bad link: tc netem on both VMs loses, reorders,
# duplicates and corrupts packets while rc_stream sends, writes (with and
# without immediate) and reads both ways and checks every byte (rc_stream.c),
# and perftest writes, reads and runs atomics (16 outstanding); every message
# must arrive once and intact, and the counters
# must show the recovery. Then the link goes dead under a running
# ibv_rc_pingpong, which must end in an error completion, not hang; and
# under a running ib_read_bw, whose reads must be asked again from the
# first missing response, once per timeout, until they fail.
#
# With RROCE_RXE_COMPARE=1 the same runs on the C rdma_rxe follow, for
# comparison: their outcome is printed, and only rroce's is tested.  VM 1
# serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
# Two drivers' worth of slow, lossy runs: rroce's take about 250 s, and
# rxe's, bounded below, up to 7 x 120 s and the dead link's 120 s.
VM_TIMEOUT=${VM_TIMEOUT:-1200}
in_vm || build_prog rc_stream -libverbs
vm_main 2 "$PROG"
rc_stream=$1

require_cmd ibv_rc_pingpong ib_write_bw ib_read_bw ib_atomic_bw tc rdma
# VM 2, the client, also reports the dead links.
ktap_plan $((RROCE_VM == 2 ? 13 : 10))

INTACT="^500 messages of 8192 bytes each way .*: all intact, in order, once"
BAD_LINK="delay 1ms reorder 10% 50% loss 5% duplicate 2% corrupt 1%"

modprobe sch_netem || ktap_skip_all "no sch_netem"

# round DRIVER PORT: the bad link tests on one driver.
round() {
	local drv=$1 port=$2 dev gid stats
	driver_up $drv
	[ $drv = rroce ] && ktap_result $? "rroce0 on eth0"
	dev=$DEV
	gid=$(gid_index $dev "$RROCE_IP4")

	tc qdisc add dev eth0 root netem $BAD_LINK
	[ $drv = rroce ] && ktap_result $? "eth0: netem $BAD_LINK"
	# The TCP exchange of the tools recovers from the bad link on its own.
	for op in send write-imm write read; do
		PAIR_TIMEOUT=${PAIR_TIMEOUT_RXE:-240} pair "$drv rc_stream -o $op over the bad link" $port \
			"$INTACT" "$rc_stream" -o $op $dev $port 500 8192
	done
	PAIR_TIMEOUT=${PAIR_TIMEOUT_RXE:-240} pair "$drv ib_write_bw over the bad link" $((port + 1)) "$(bw_row 65536 100)" \
		ib_write_bw -d $dev -x "$gid" -p $((port + 1)) -F -s 65536 -n 100
	PAIR_TIMEOUT=${PAIR_TIMEOUT_RXE:-240} pair "$drv ib_read_bw over the bad link" $((port + 2)) "$(bw_row 65536 100)" \
		ib_read_bw -d $dev -x "$gid" -p $((port + 2)) -F -s 65536 -n 100
	# 16 atomics outstanding: a lost answer is given again from the
	# responder's cache, not by doing the atomic twice.
	PAIR_TIMEOUT=${PAIR_TIMEOUT_RXE:-240} pair "$drv ib_atomic_bw over the bad link" $((port + 4)) \
		"$(bw_row 8 500)" \
		ib_atomic_bw -d $dev -x "$gid" -p $((port + 4)) -F -o 16 -n 500
	tc qdisc del dev eth0 root
	[ $drv = rroce ] && stats=$(link_stats $dev)

	# A dead link under a running pingpong: the client's retries run out.
	if [ "$RROCE_VM" = 1 ]; then
		timeout $((120 * SLOWDOWN)) ibv_rc_pingpong -d $dev -g "$gid" -p $((port + 3)) -n 1000000 -s 64 \
			>/dev/null 2>&1 &
		wait_listen $((port + 3)) && vm_signal "$drv.dead"
		vm_wait "$drv.dead.done" 180
		kill %1 2>/dev/null
		wait
	else
		vm_wait "$drv.dead" && {
			timeout $((120 * SLOWDOWN)) stdbuf -oL ibv_rc_pingpong -d $dev -g "$gid" -p $((port + 3)) \
				-n 1000000 -s 64 "$(peer_ip4)" >/tmp/dead.out 2>&1 &
			# Cut the link once the QPs are connected: a fixed 3 s was
			# too short for the TCP exchange on a crowded debug kernel.
			wait_output /tmp/dead.out "remote address" 60 $!
			sleep 1
			tc qdisc add dev eth0 root netem loss 100%
			wait $!
			status=$?
			tc qdisc del dev eth0 root
			sed 's/^/#   /' /tmp/dead.out
			[ $status != 124 ] && grep -q "retry counter exceeded\|status 12\|(12)" /tmp/dead.out
		}
		dead=$?
		vm_signal "$drv.dead.done"
		ktap_result $dead "$drv: a dead link ends the pingpong with RETRY_EXC_ERR, no hang"
	fi
	driver_down $drv
	vm_signal "unloaded.$drv" && vm_wait "unloaded.$drv" 120
	[ $drv = rroce ] && {
		echo "# $stats"
		counter() { stat_value $1 "$stats"; }
		[ "$(counter drop_bad_icrc)" -gt 0 ] &&
			[ $(($(counter retransmits) + $(counter seq_nak_rcvd) + $(counter duplicate_request))) -gt 0 ]
		ktap_result $? "counters: $(counter drop_bad_icrc) bad ICRCs, $(counter retransmits) retransmissions, $(counter seq_nak_sent) sequence NAKs sent, $(counter duplicate_request) duplicates"
	}
	return 0
}

# dead_read PORT: the link dies under ib_read_bw on rroce: VM 1's responses
# are lost from when VM 2's reads are running.
dead_read() {
	local port=$1 gid status server sniffer client
	gid=$(gid_index rroce0 "$RROCE_IP4")
	if [ "$RROCE_VM" = 1 ]; then
		timeout $((300 * SLOWDOWN)) ib_read_bw -d rroce0 -x "$gid" -p $port -F -s 1048576 -n 100000 \
			>/dev/null 2>&1 &
		server=$!
		wait_listen $port && vm_signal dead_read
		vm_wait dead_read.running 180 && tc qdisc add dev eth0 root netem loss 100%
		vm_wait dead_read.done 180
		tc qdisc del dev eth0 root
		kill $server 2>/dev/null
		wait $server
		return 0
	fi
	vm_wait dead_read || return 1
	# Between two of the 7 retries there may be 4 s (the cap on the learnt
	# timeout) and more on a slow kernel: the sniffer waits longer there.
	python3 "$SELFTESTS_DIR/read_requests.py" eth0 $((200 * SLOWDOWN)) $((5 * SLOWDOWN)) >/tmp/reads.out &
	sniffer=$!
	wait_output /tmp/reads.out capturing 60 $sniffer
	# What the requester's timer did, to set beside what the sniffer saw.
	tracing_up && echo 1 >$TRACEFS/events/rroce/rroce_retransmit/enable &&
		echo >$TRACEFS/trace && echo 1 >$TRACEFS/tracing_on
	timeout $((180 * SLOWDOWN)) ib_read_bw -d rroce0 -x "$gid" -p $port -F -s 1048576 -n 100000 \
		"$(peer_ip4)" >/tmp/dead_read.out 2>&1 &
	client=$!
	# Reads are running once 2000 responses have come.
	until [ "$(link_counter rroce0 rcvd_pkts)" -gt 2000 ] ||
		! kill -0 $client 2>/dev/null; do
		sleep 0.2
	done
	vm_signal dead_read.running
	wait $client
	status=$?
	vm_signal dead_read.done
	# It stops once the requests stop, having read all of them.
	wait $sniffer
	grep -E "status|exceeded" /tmp/dead_read.out | sed 's/^/#   /'
	echo "# the last read requests (PSN bytes): $(tail -n 8 /tmp/reads.out | tr '\n' ' ')"
	[ $status != 124 ] && grep -q "status 12" /tmp/dead_read.out
	ktap_result $? "rroce: a dead link ends ib_read_bw with RETRY_EXC_ERR, no hang"
	# Each of the retry_cnt (7) timeouts asks again from the first missing
	# response, and perhaps for the next chunk: the last 14 requests hold
	# that PSN at least 7 times.
	[ "$(tail -n 14 /tmp/reads.out | cut -d' ' -f1 | sort | uniq -c | sort -rn |
		awk 'NR == 1 { print $1 }')" -ge 7 ] 2>/dev/null ||
		{ grep -o "[0-9.]*: rroce_retransmit.*" $TRACEFS/trace 2>/dev/null | tail -n 16 | sed 's/^/#   /'; false; }
	ktap_result $? "rroce: the reads were asked again from the first missing response"
	echo 0 2>/dev/null >$TRACEFS/events/rroce/rroce_retransmit/enable
}

driver_up rroce && dead_read 18970
driver_down rroce
vm_signal unloaded.dead_read && vm_wait unloaded.dead_read 120

round rroce 18950
rxe_reference || ktap_finish
# rxe's results are reported, not tested: pair's failures must not count,
# nor may a hung rxe run use up the VMs' time.
PAIR_TIMEOUT_RXE=120
REFERENCE=rxe round rxe 18960
ktap_finish
