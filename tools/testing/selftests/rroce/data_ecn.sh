#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Congestion notification between the VMs. VM 2 runs ib_send_bw against
# VM 1; both keep their QPs a while after the run, and meanwhile VM 2 sends
# VM 1's QP RC ACKs marked Congestion Experienced, stale, which the QP
# ignores but for their ECN bits (ce_inject.py). VM 1 counts them and
# answers with CNPs to VM 2's QP: rroce there counts each and slows the QP
# down (congestion control, on by default, which also makes its packets
# ECN-capable); rdma_rxe, which has no use for them, drops them and its run
# ends cleanly.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd ib_send_bw rdma python3 tcpdump
ktap_plan $((RROCE_VM == 1 ? 5 : 6))

COUNT=200
PORT=18610
# Both ends keep their QPs this long after the run, for the injection.
KEEP=$((20 * SLOWDOWN))

# bw [PEER]: ib_send_bw's server, or its client to PEER, in the background.
bw() {
	timeout $((300 * SLOWDOWN)) ib_send_bw -d "$DEV" -x "$gid" -p $PORT -F -s 4096 -n 500 \
		--wait_destroy $KEEP "$@" >/tmp/bw.out 2>&1 &
}

for peer in rroce rxe; do
	if [ "$RROCE_VM" = 1 ]; then
		[ $peer = rroce ] && { driver_up rroce || ktap_skip_all "no rroce0"; }
		gid=$(gid_index rroce0 "$RROCE_IP4")
		before=$(link_stats rroce0)
		bw && pid=$!
		wait_listen $PORT
		vm_signal listening.$peer
		vm_wait injected.$peer 300
		marked=$(($(link_counter rroce0 np_ecn_marked_roce_packets) - $(stat_value np_ecn_marked_roce_packets "$before")))
		cnps=$(($(link_counter rroce0 np_cnp_sent) - $(stat_value np_cnp_sent "$before")))
		echo $cnps >"$RROCE_SHARED/cnps.$peer"
		vm_signal counted.$peer
		await $pid && grep -q "^ *4096 *500 " /tmp/bw.out
		ktap_result $? "$peer peer: ib_send_bw, server side, whose QP got marked packets"
		[ $marked -le $COUNT ] && [ $marked -ge $((COUNT * 9 / 10)) ] &&
			[ $cnps -ge 1 ] && [ $cnps -le $marked ]
		ktap_result $? "$peer peer: $marked of $COUNT marked packets seen, $cnps CNPs sent"
	else
		driver_up $peer || ktap_skip_all "no $peer device"
		gid=$(gid_index "$DEV" "$RROCE_IP4")
		vm_wait listening.$peer
		before=$(link_stats "$DEV")
		[ $peer = rroce ] &&
			timeout $((60 * SLOWDOWN)) tcpdump -i eth0 -c 20 -v -n \
				"udp dst port 4791 and src $(peer_ip4)" >/tmp/ecn.dump 2>&1 &
		bw "$(peer_ip4)" && pid=$!
		# " remote address: LID 0000 QPN 0x0011 PSN 0x9d3f4e ...", once
		# the run is through and the QPs wait.
		wait_output /tmp/bw.out "^ *4096 *500 " $((120 * SLOWDOWN)) $pid
		read -r qpn psn <<<"$(sed -n 's/.*remote address:.*QPN \(0x[0-9a-f]*\) PSN \(0x[0-9a-f]*\).*/\1 \2/p' /tmp/bw.out)"
		run python3 "$SELFTESTS_DIR/ce_inject.py" "$(peer_ip4)" "$RROCE_IP4" "$qpn" "$psn" $COUNT
		injected=$?
		vm_signal injected.$peer
		vm_wait counted.$peer 300
		after=$(link_stats "$DEV")
		await $pid
		status=$?
		[ $injected = 0 ] && [ $status = 0 ]
		ktap_result $? "$peer peer: $COUNT marked ACKs sent to QP ${qpn:-?} after the run; its QPs went cleanly"
		if [ $peer = rroce ]; then
			handled=$(($(stat_value rp_cnp_handled "$after") - $(stat_value rp_cnp_handled "$before")))
			ignored=$(($(stat_value rp_cnp_ignored "$after") - $(stat_value rp_cnp_ignored "$before")))
			[ $((handled + ignored)) = "$(cat "$RROCE_SHARED/cnps.$peer")" ] && [ $handled -ge 1 ]
			ktap_result $? "rroce peer: got each of the $((handled + ignored)) CNPs, $handled cut its QP's rate"
			wait
			ect=$(grep -c 'tos 0x2,ECT(0)' /tmp/ecn.dump)
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
