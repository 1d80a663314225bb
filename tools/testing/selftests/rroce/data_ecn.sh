#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce as a congestion notification point: packets for one of its QPs that
# a switch marked Congestion Experienced make it send CNPs to the QP whose
# packets they were. VM 1 serves ibv_rc_pingpong -c; VM 2 connects to it
# and meanwhile sends its QP marked ACKs that the QP ignores but for their
# ECN bits (ce_inject.py). VM 1 counts them and the CNPs it sent; rroce on
# VM 2 counts the CNPs it got and slows its QP down for them (congestion
# control, on by default, which also makes its packets ECN-capable), and
# rdma_rxe, which has no use for them, drops them: both pingpongs stay
# intact.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd ibv_rc_pingpong rdma python3 tcpdump
ktap_plan $((RROCE_VM == 1 ? 5 : 6))

COUNT=200
PORT=18610
ITERS="iters in [0-9.]+ seconds"
LIMIT=$((300 * SLOWDOWN))

# pingpong [PEER]: the checked pingpong, serving or to PEER, long enough
# for the marked packets to arrive while it runs.
pingpong() {
	timeout $LIMIT stdbuf -oL ibv_rc_pingpong -d "$DEV" -g "$gid" -p $PORT -n 2000 -s 1024 -c \
		"$@" >/tmp/pp.out 2>&1
}

for peer in rroce rxe; do
	if [ "$RROCE_VM" = 1 ]; then
		[ $peer = rroce ] && { driver_up rroce || ktap_skip_all "no rroce0"; }
		gid=$(gid_index rroce0 "$RROCE_IP4")
		before=$(link_stats rroce0)
		pingpong &
		pid=$!
		wait_listen $PORT
		grep -o 'QPN 0x[0-9a-f]*, PSN 0x[0-9a-f]*' /tmp/pp.out | head -1 |
			sed 's/QPN //; s/, PSN / /' >"$RROCE_SHARED/victim"
		vm_signal listening.$peer
		await $pid && grep -Eq "$ITERS" /tmp/pp.out
		ktap_result $? "$peer peer: rc_pingpong -c, server side, while marked packets come"
		vm_wait injected.$peer 300
		marked=$(($(link_counter rroce0 np_ecn_marked_roce_packets) - $(stat_value np_ecn_marked_roce_packets "$before")))
		cnps=$(($(link_counter rroce0 np_cnp_sent) - $(stat_value np_cnp_sent "$before")))
		echo $cnps >"$RROCE_SHARED/cnps.$peer"
		vm_signal counted.$peer
		[ $marked -le $COUNT ] && [ $marked -ge $((COUNT * 9 / 10)) ] &&
			[ $cnps -ge 1 ] && [ $cnps -le $marked ]
		ktap_result $? "$peer peer: $marked of $COUNT marked packets seen, $cnps CNPs sent"
	else
		driver_up $peer || ktap_skip_all "no $peer device"
		gid=$(gid_index "$DEV" "$RROCE_IP4")
		vm_wait listening.$peer && read -r qpn psn <"$RROCE_SHARED/victim"
		before=$(link_stats "$DEV")
		[ $peer = rroce ] &&
			timeout $LIMIT tcpdump -i eth0 -c 20 -v -n "udp dst port 4791 and src $(peer_ip4)" >/tmp/ecn.dump 2>&1 &
		pingpong "$(peer_ip4)" &
		pid=$!
		run python3 "$SELFTESTS_DIR/ce_inject.py" "$(peer_ip4)" "$RROCE_IP4" "$qpn" "$psn" $COUNT
		injected=$?
		await $pid
		status=$?
		vm_signal injected.$peer
		[ $injected = 0 ] && [ $status = 0 ] && grep -Eq "$ITERS" /tmp/pp.out
		ktap_result $? "$peer peer: $COUNT marked ACKs sent to QP $qpn; rc_pingpong -c, client side, intact"
		vm_wait counted.$peer 300
		if [ $peer = rroce ]; then
			handled=$(($(link_counter rroce0 rp_cnp_handled) - $(stat_value rp_cnp_handled "$before")))
			ignored=$(($(link_counter rroce0 rp_cnp_ignored) - $(stat_value rp_cnp_ignored "$before")))
			[ $((handled + ignored)) = "$(cat "$RROCE_SHARED/cnps.$peer")" ] && [ $handled -ge 1 ]
			ktap_result $? "rroce peer: got each of the $((handled + ignored)) CNPs, $handled slowed its QP down"
			wait
			ect=$(grep -c 'tos 0x2,ECT(0)' /tmp/ecn.dump)
			sed -n 1p /tmp/ecn.dump | sed 's/^/# /'
			[ "$ect" -ge 10 ]
			ktap_result $? "rroce's packets leave ECN-capable: $ect of 20 seen ECT(0)"
		fi
		driver_down $peer
		ktap_result $? "$peer peer: delete the device and unload"
	fi
done
if [ "$RROCE_VM" = 1 ]; then
	driver_down rroce
	ktap_result $? "delete the device and unload"
fi
ktap_finish
