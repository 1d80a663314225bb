#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer that asks for READs far faster than they can be answered. VM 1
# holds an RC QP with a 256 KiB MR it may read (read_target.c), connected to
# a QP number on VM 2 that no QP has; VM 2 sends it READ_COUNT READ requests
# of the whole MR in sequence, never waiting (inject.c --read), while an
# ibv_rc_pingpong between the VMs goes on beside them. The responder answers
# a READ a burst of packets at a time and lets only so many answers wait:
# the requests beyond are dropped and counted (drop_responder_busy), every
# request it took is answered whole, its memory does not grow with what is
# asked, the pingpong's bytes arrive intact, and the QP stays ready.

. "$(dirname "$0")/lib.sh"

READ_COUNT=1000
# The debug kernel needs minutes for the responses.
VM_TIMEOUT=${VM_TIMEOUT:-600}
# Larger than the burst a response goes out in, so that answers wait.
BYTES=262144
# The packets of one response: the target's path MTU is 1024.
NPSN=$((BYTES / 1024))
NO_QPN=0xabcde
PORT=18640
ITERS="iters in [0-9.]+ seconds"
# The target lives until its answers are out (or none has left for
# QUIET seconds), at most HOLD seconds.
HOLD=$((300 * SLOWDOWN))
QUIET=$((30 * SLOWDOWN))
if ! in_vm; then
	build_prog read_target -libverbs
	target=$PROG
	build_prog inject
fi
vm_main 2 "$target" "$PROG"
target=$1
inject=$2

require_cmd ibv_rc_pingpong rdma
ktap_plan $((RROCE_VM == 1 ? 7 : 4))

driver_up rroce
ktap_result $? "rroce0 on eth0"
gid=$(gid_index rroce0 "$RROCE_IP4")

# unreclaimable slab, in kB
slab_kb() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }

# count NAME: the target QP's counter NAME, in its set as last read.
count() {
	local n
	n=$(stat_value "$1" "$set")
	echo "${n:-0}"
}

# account: what the target's counters say of the flood. Of the requests
# that reached it (the emulated link may lose some under a loaded host), a
# request dropped as busy moves the ones after it out of sequence, until
# one is expected again. Every other was carried out, and its response is
# NPSN packets; a duplicate's too. A sequence NAK is one packet.
account() {
	busy=$(count drop_responder_busy)
	dup=$(count duplicate_request)
	arrived=$(count rcvd_pkts)
	taken=$((arrived - busy - $(count out_of_seq_request) - dup))
	sent=$(($(count sent_pkts) + $(count send_err)))
	expected=$(((taken + dup) * NPSN + $(count seq_nak_sent)))
}

if [ "$RROCE_VM" = 1 ]; then
	before=$(link_stats rroce0)
	slab_before=$(slab_kb)
	qp_target "$target" rroce0 "$(peer_ip4)" $NO_QPN $BYTES $HOLD
	# Its own counter set counts what the flood does to it alone.
	ktap_result $? "the READ target, its QP in a counter set of its own: $(grep '^target ' /tmp/target.out)"
	timeout $((HOLD + 60)) ibv_rc_pingpong -d rroce0 -g "$gid" -p $PORT -n 500 -s 4096 -c \
		>/tmp/pp.out 2>&1 &
	pp_pid=$!
	wait_listen $PORT
	vm_signal ready
	# The peak of the slab while the target lives, until every READ it
	# took is answered once VM 2 has sent them all.
	# Seldom on a slow kernel, where this loop's own processes would
	# otherwise take most of the CPU from the responses.
	peak=$slab_before
	last=0
	moved=$SECONDS
	while kill -0 $target_pid 2>/dev/null; do
		now=$(slab_kb)
		[ "$now" -gt "$peak" ] && peak=$now
		sleep "$([ "$SLOWDOWN" = 1 ] && echo 0.5 || echo "$SLOWDOWN")"
		set=$(rdma statistic qp show link rroce0/1)
		account
		[ "$sent" = "$last" ] || moved=$SECONDS
		last=$sent
		if [ -e "$RROCE_SHARED/sync.flooded.vm2" ] && [ "$sent" -ge "$expected" ] ||
			[ $((SECONDS - moved)) -ge $QUIET ] || [ -e "$RROCE_SHARED/failed.vm2" ]; then
			kill -USR1 $target_pid
			vm_signal answered
			break
		fi
	done
	wait $target_pid
	status=$?
	sed 's/^/#   /' /tmp/target.out
	[ $status = 0 ]
	ktap_result $? "its QP stayed ready to receive, and its memory was only read"
	await $pp_pid
	status=$?
	sed 's/^/#   /' /tmp/pp.out
	[ $status = 0 ] && grep -Eq "$ITERS" /tmp/pp.out
	ktap_result $? "rc_pingpong -c beside the flood, server side, intact"
	after=$(link_stats rroce0)
	echo "# before: $before"
	echo "# after:  $after"
	echo "# the target's QP: ${set:-no counter set}"
	echo "# READs arrived: $arrived of $READ_COUNT; dropped as busy: $busy; taken: $taken, duplicates $dup; packets sent: $sent"
	grep -q "LQPN: <$((qpn))>" <<<"$set" &&
		[ "$busy" -gt 0 ] && [ "$taken" -gt 0 ] && [ "$sent" = "$expected" ]
	ktap_result $? "requests beyond the answers that may wait are dropped and counted; the $taken taken were answered whole, $NPSN packets each"
	grown=$(((peak - slab_before) / 1024))
	echo "# unreclaimable slab: $slab_before kB before, peak $peak kB"
	[ $grown -lt 16 ]
	ktap_result $? "the slab grew by $grown MiB at most (under 16)"
	vm_wait injected
else
	vm_wait ready && read -r qpn psn rkey va <"$RROCE_SHARED/target" && [ -n "$va" ]
	ktap_result $? "the target on vm1: QPN ${qpn:-?}, PSN ${psn:-?}, rkey ${rkey:-?}" ||
		{ vm_signal injected; driver_down rroce; ktap_finish; }
	timeout $((HOLD + 60)) ibv_rc_pingpong -d rroce0 -g "$gid" -p $PORT -n 500 -s 4096 -c \
		"$(peer_ip4)" >/tmp/pp.out 2>&1 &
	pid=$!
	run "$inject" --read "$(peer_ip4)" "$RROCE_IP4" "$qpn" "$psn" $READ_COUNT "$rkey" "$va" $BYTES
	injected=$?
	vm_signal flooded
	wait $pid
	status=$?
	sed 's/^/#   /' /tmp/pp.out
	vm_signal injected
	# The responses go to this VM: its device stays until they are out.
	vm_wait answered 300
	[ $injected = 0 ] && [ $status = 0 ] && grep -Eq "$ITERS" /tmp/pp.out
	ktap_result $? "$READ_COUNT READs of $BYTES bytes injected; rc_pingpong -c, client side, intact"
fi
driver_down rroce
ktap_result $? "delete the device and unload"
ktap_finish
