#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC traffic across the 24-bit PSN wrap, both ways between the VMs: every
# rc_stream mode (SEND, WRITE with and without immediate, READ,
# fetch-and-add) starts both directions at PSN 0xffff00, 256 PSNs before
# the wrap, and goes on far past it, every byte and every fetched value
# checked (rc_stream.c). Then SENDs, READs and fetch-and-adds again over a
# link that loses, reorders and duplicates packets, so that the sender
# rewinds, READs are asked again and atomics are answered from the
# responder's memory across the wrap. VM 1 serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
in_vm || build_prog rc_stream -libverbs
vm_main 2 "$PROG"
rc_stream=$1

require_cmd tc rdma
ktap_plan 11

# 300 messages of 4 KiB take 1200 PSNs each way (READ responses too), 300
# fetch-and-adds 300: each run goes well past the wrap from 0xffff00.
FIRST_PSN=0xffff00
INTACT="^300 messages of 4096 bytes each way .*: all intact, in order, once"
BAD_LINK="delay 1ms reorder 10% 50% loss 3% duplicate 1%"

modprobe sch_netem || ktap_skip_all "no sch_netem"
driver_up rroce
ktap_result $? "rroce0 on eth0"

port=18515
for op in send write-imm write read fetch-add; do
	pair "rc_stream -o $op from PSN $FIRST_PSN" $port "$INTACT" \
		"$rc_stream" -o $op -p $FIRST_PSN rroce0 $port 300 4096
	port=$((port + 1))
done

tc qdisc add dev eth0 root netem $BAD_LINK
ktap_result $? "eth0: netem $BAD_LINK"
for op in send read fetch-add; do
	PAIR_TIMEOUT=240 pair "rc_stream -o $op from PSN $FIRST_PSN over the bad link" $port \
		"$INTACT" "$rc_stream" -o $op -p $FIRST_PSN rroce0 $port 300 4096
	port=$((port + 1))
done
tc qdisc del dev eth0 root
stats=$(link_stats rroce0)
echo "# $stats"
[ $(($(stat_value retransmits "$stats") + $(stat_value seq_nak_rcvd "$stats") +
	$(stat_value duplicate_request "$stats"))) -gt 0 ]
ktap_result $? "the bad link made the sender recover across the wrap"
driver_down rroce
ktap_finish
