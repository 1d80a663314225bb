#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Client and server on the same rroce device in one VM: packets to a local
# address go straight back to rroce's receive path, never through a NIC.

. "$(dirname "$0")/lib.sh"
vm_main 1

require_cmd ibv_rc_pingpong ibv_uc_pingpong ib_write_bw rdma
ktap_plan 8

load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"
gid=$(gid_index rroce0 "$RROCE_IP4")
tx_packets() { cat /sys/class/net/eth0/statistics/tx_packets; }
tx_before=$(tx_packets)

loop rc_pingpong 18900 "iters in [0-9.]+ seconds" \
	ibv_rc_pingpong -d rroce0 -g "$gid" -p 18900 -n 200 -s 4096 -c
# A UC message of 2 MiB is 2048 packets, past the 1024 that a UC or UD
# QP sends in one run of its requester: the rest goes out from the
# device's kick work, and must arrive whole, in order (UC has no retry).
loop uc_pingpong 18902 "iters in [0-9.]+ seconds" \
	ibv_uc_pingpong -d rroce0 -g "$gid" -p 18902 -n 5 -s 2097152 -c
loop ib_write_bw 18901 "$(bw_row 65536 200)" ib_write_bw -d rroce0 -x "$gid" -p 18901 -F -s 65536 -n 200
# Nothing is lost in loopback: any retransmission was a timer's mistake.
show_link_stats rroce0

# The port's Performance Management agent answers for sysfs's counters/:
# what `rdma statistic` shows, data in units of four bytes.
stats=$(link_stats rroce0)
pma=/sys/class/infiniband/rroce0/ports/1/counters
pma_is() { [ "$(cat "$pma/$1")" = "$2" ] || { echo "# $1: $(cat "$pma/$1"), not $2"; false; }; }
sent=$(stat_value sent_pkts "$stats") rcvd=$(stat_value rcvd_pkts "$stats")
sent_bytes=$(stat_value sent_bytes "$stats") rcvd_bytes=$(stat_value rcvd_bytes "$stats")
pma_is port_xmit_packets "$sent" && pma_is port_rcv_packets "$rcvd" &&
	pma_is port_xmit_data $((sent_bytes / 4)) && pma_is port_rcv_data $((rcvd_bytes / 4)) &&
	pma_is unicast_xmit_packets "$sent" && pma_is multicast_xmit_packets 0 &&
	pma_is port_rcv_errors 0 && pma_is port_xmit_discards 0
ktap_result $? "$pma: $(cat $pma/port_xmit_data) words, $(cat $pma/port_xmit_packets) packets sent"
# Every packet came back, and at least the 200 writes of 64 KiB went by.
[ "$sent" = "$rcvd" ] && [ "$sent_bytes" = "$rcvd_bytes" ] && [ "$sent_bytes" -gt $((200 * 65536)) ]
ktap_result $? "$sent_bytes bytes in $sent packets sent, $rcvd_bytes in $rcvd received"

# Thousands of RoCE packets went by; a few stray ones (IPv6 neighbour
# discovery, say) may have left through eth0 meanwhile.
left=$(($(tx_packets) - tx_before))
[ $left -lt 20 ]
ktap_result $? "the traffic did not leave through eth0 ($left packets sent)"

rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
