#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC and UC traffic across the 24-bit PSN wrap, both ways between the VMs,
# every byte and every fetched value checked (rc_stream.c). On RC every
# rc_stream mode (SEND, WRITE with and without immediate, READ,
# fetch-and-add) starts both directions just before the wrap and goes on
# far past it, with a 4-packet message (and READ) whose PSNs straddle it;
# then SENDs, READs and fetch-and-adds again over a link that loses,
# reorders and duplicates packets, so that the sender rewinds, READs are
# asked again and atomics are answered from the responder's memory across
# the wrap. On UC, which has no retransmission, a message lost at the wrap
# fails the run: 16 SENDs and 16 WRITEs with immediate (what the receiver
# has posted: nothing paces a UC sender) straddle it, each checked as its
# receive completes. (UC WRITEs without immediate cannot be checked: with
# no ACK, the writer cannot tell when they have landed.) Then RC SEND, READ
# and fetch-and-add and UC SEND between rroce and rdma_rxe, each way. VM 1
# serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
in_vm || build_prog rc_stream -libverbs
vm_main 2 "$PROG"
rc_stream=$1

require_cmd tc rdma
ktap_plan 23

# From 0xfffe02, 4 KiB messages (4 packets of MTU 1024) take PSNs
# 0xfffe02 + 4k..: message 127 takes 0xfffffe to 0x000001. 300 of them
# take 1200 PSNs each way; 300 fetch-and-adds take 300, so they start at
# 0xffff00.
STRADDLE=0xfffe02
ATOMIC_PSN=0xffff00
intact() { echo "^$1 messages of 4096 bytes each way .*: all intact, in order, once"; }
BAD_LINK="delay 1ms reorder 10% 50% loss 3% duplicate 1%"

modprobe sch_netem || ktap_skip_all "no sch_netem"
driver_up rroce
ktap_result $? "rroce0 on eth0"

port=18515
# stream NAME PSN COUNT ARGS...: one rc_stream pair, from PSN.
stream() {
	local name=$1 psn=$2 count=$3
	shift 3
	pair "$name from PSN $psn" $port "$(intact $count)" \
		"$rc_stream" -p $psn "$@" rroce0 $port $count 4096
	port=$((port + 1))
}

for op in send write-imm write read; do
	stream "RC $op" $STRADDLE 300 -o $op
done
stream "RC fetch-add" $ATOMIC_PSN 300 -o fetch-add
# UC: message 3 takes 0xfffffe to 0x000001.
for op in send write-imm; do
	stream "UC $op" 0xfffff2 16 -t uc -o $op
done

tc qdisc add dev eth0 root netem $BAD_LINK
ktap_result $? "eth0: netem $BAD_LINK"
PAIR_TIMEOUT=240 stream "RC send over the bad link" $STRADDLE 300 -o send
PAIR_TIMEOUT=240 stream "RC read over the bad link" $STRADDLE 300 -o read
PAIR_TIMEOUT=240 stream "RC fetch-add over the bad link" $ATOMIC_PSN 300 -o fetch-add
tc qdisc del dev eth0 root
stats=$(link_stats rroce0)
echo "# $stats"
[ $(($(stat_value retransmits "$stats") + $(stat_value seq_nak_rcvd "$stats") +
	$(stat_value duplicate_request "$stats"))) -gt 0 ]
ktap_result $? "the bad link made the sender recover across the wrap"
driver_down rroce
vm_signal unloaded && vm_wait unloaded

# interop VM1 VM2: rroce and rdma_rxe on each side of the wrap.
interop() {
	local mine=$1
	[ "$RROCE_VM" = 2 ] && mine=$2
	driver_up $mine
	ktap_result $? "$DEV on eth0 (vm1: $1, vm2: $2)"
	local op psn
	for op in send read fetch-add; do
		psn=$STRADDLE
		[ $op = fetch-add ] && psn=$ATOMIC_PSN
		pair "RC $op $1-$2 from PSN $psn" $port "$(intact 300)" \
			"$rc_stream" -p $psn -o $op $DEV $port 300 4096
		port=$((port + 1))
	done
	pair "UC send $1-$2 from PSN 0xfffff2" $port "$(intact 16)" \
		"$rc_stream" -p 0xfffff2 -t uc -o send $DEV $port 16 4096
	port=$((port + 1))
	driver_down $mine
	vm_signal "unloaded.$1-$2" && vm_wait "unloaded.$1-$2"
}
interop rroce rxe
interop rxe rroce
ktap_finish
