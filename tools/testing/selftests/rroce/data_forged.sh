#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Forged requests, one at a time. VM 1 holds an RC QP that peers may write
# but not read, with an 8 KiB MR that grants both (forged_target.c),
# connected to a QP number on VM 2 that no QP has; VM 2 forges each request
# (inject.c --one) and VM 1 reads what the QP's own counter set says of it:
#   - a READ from another host's address, as if from the peer: dropped and
#     counted (drop_bad_address), answered with nothing;
#   - a WRITE whose RETH asks for more than a message may hold (2^31 + 1):
#     an invalid-request NAK, not an access error;
#   - a READ repeated (an earlier PSN) to the QP that grants no READ: an
#     access NAK, not the data;
#   - a WRITE whose MR is deregistered between its first and last packet:
#     the last is refused with an access NAK, and the memory holds only what
#     the first packet carried.

. "$(dirname "$0")/lib.sh"

NO_QPN=0xabcde
# Not a host on the link: the forged source.
SPOOFED=192.0.2.77
HOLD=$((240 * SLOWDOWN))
COUNTERS="rcvd_pkts sent_pkts drop_bad_address access_nak_sent duplicate_request out_of_seq_request"
if ! in_vm; then
	build_prog forged_target -libverbs
	target=$PROG
	build_prog inject
fi
vm_main 2 "$target" "$PROG"
target=$1
inject=$2

require_cmd rdma
ktap_plan $((RROCE_VM == 1 ? 9 : 2))

if [ "$RROCE_VM" = 1 ]; then
	driver_up rroce
	ktap_result $? "rroce0 on eth0"
	declare -A was
	snap() { set=$(rdma statistic qp show link rroce0/1); }
	count() {
		local n
		n=$(stat_value "$1" "$set")
		echo "${n:-0}"
	}
	remember() {
		local c
		snap
		for c in $COUNTERS; do was[$c]=$(count "$c"); done
	}
	moved() { echo $(($(count "$1") - ${was[$1]:-0})); }
	# looked STEP: the counters taken as they are now, VM 2 told to go on.
	looked() {
		remember
		vm_signal "seen.$1"
	}
	# seen STEP PACKETS: waits for VM 2's STEP and for the QP to have
	# received its PACKETS, then for what they draw; prints what moved.
	seen() {
		local i c line=
		vm_wait "sent.$1" || return 1
		for i in $(seq $((100 * SLOWDOWN))); do
			snap
			[ "$(moved rcvd_pkts)" -ge "$2" ] && break
			sleep 0.1
		done
		sleep "$SLOWDOWN"
		snap
		for c in $COUNTERS; do line+=" $c +$(moved "$c")"; done
		echo "# $1:$line"
	}
	qp_target "$target" rroce0 "$(peer_ip4)" $NO_QPN $HOLD
	ktap_result $? "the target, its QP in a counter set of its own: $(grep '^target ' /tmp/target.out)"
	remember
	vm_signal ready

	seen spoofed 1
	[ "$(moved drop_bad_address)" = 1 ] && [ "$(moved sent_pkts)" = 0 ]
	ktap_result $? "a READ from $SPOOFED, not the QP's peer: dropped and counted, not answered"
	looked spoofed

	seen length 1
	[ "$(moved sent_pkts)" = 1 ] && [ "$(moved access_nak_sent)" = 0 ] &&
		[ "$(moved out_of_seq_request)" = 0 ]
	ktap_result $? "a WRITE of 2^31 + 1 bytes: one NAK, an invalid request, not an access error"
	looked length

	seen duplicate 2
	[ "$(moved duplicate_request)" = 1 ] && [ "$(moved access_nak_sent)" = 1 ] &&
		[ "$(moved sent_pkts)" = 2 ]
	ktap_result $? "a READ repeated to a QP that grants no READ: an access NAK, no data"
	looked duplicate

	seen first 1 &&
		[ "$(moved access_nak_sent)" = 0 ] && [ "$(moved out_of_seq_request)" = 0 ] &&
		kill -USR1 $target_pid && wait_output /tmp/target.out '^deregistered' 30 $target_pid
	ktap_result $? "a WRITE's first packet taken, then its MR deregistered"
	looked first

	seen last 1
	[ "$(moved access_nak_sent)" = 1 ]
	ktap_result $? "the WRITE's last packet, after the deregistration: an access NAK"
	looked last

	kill -USR2 $target_pid
	wait $target_pid
	status=$?
	sed 's/^/#   /' /tmp/target.out
	[ $status = 0 ]
	ktap_result $? "the MR holds the first packet's KiB and nothing of the last"
	driver_down rroce
	ktap_result $? "delete the device and unload"
else
	vm_wait ready && read -r qpn psn rkey va <"$RROCE_SHARED/target" && [ -n "$va" ]
	ktap_result $? "the target on vm1: QPN ${qpn:-?}, PSN ${psn:-?}, rkey ${rkey:-?}" ||
		ktap_finish
	# forge SRC PSN OPCODE RKEY VA LEN PAYLOAD: one request from SRC.
	forge() { run "$inject" --one "$(peer_ip4)" "$1" "$qpn" "${@:2}"; }
	# step NAME: tells VM 1 that NAME is sent, and waits until it has looked.
	step() { vm_signal "sent.$1" && vm_wait "seen.$1"; }
	p=$((psn))
	forge $SPOOFED $p 0x0c "$rkey" "$va" 64 0 && step spoofed &&
		forge "$RROCE_IP4" $p 0x06 "$rkey" "$va" 0x80000001 1024 && step length &&
		forge "$RROCE_IP4" $p 0x0a 0 0 0 0 &&
		forge "$RROCE_IP4" $p 0x0c "$rkey" "$va" 64 0 && step duplicate &&
		forge "$RROCE_IP4" $((p + 1)) 0x06 "$rkey" "$va" 2048 1024 && step first &&
		forge "$RROCE_IP4" $((p + 2)) 0x08 0 0 0 1024 && step last
	ktap_result $? "each request forged and sent, VM 1 told after each"
fi
ktap_finish
