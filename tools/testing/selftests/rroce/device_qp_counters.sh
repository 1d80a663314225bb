#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-QP counters (`rdma statistic qp`): QPs bound to a counter set count
# there, automatically (one set per process) or by hand, and the port's
# totals stay whole: `rdma statistic show link` is the port's own counts
# plus every set's, live or gone, so a count in both places would show.
# 500 SENDs of 4 KiB between two QPs of one device, 1 KiB packets: 2000
# packets one way, 500 ACKs the other.

. "$(dirname "$0")/lib.sh"
vm_main 1

require_cmd ib_send_bw rdma
load_rroce || ktap_skip_all "rroce.ko does not load"
rdma link add rroce0 type rroce netdev eth0 || ktap_skip_all "no rroce0"
gid=$(gid_index rroce0 "$RROCE_IP4")
ktap_plan 7

MSGS=500 PKTS=2000
# bw [-c] ARGS...: ib_send_bw's server, or with -c its client, in the
# background with ARGS; both keep their QP for a while after the run.
bw() {
	local to=
	[ "$1" = -c ] && { to=127.0.0.1; shift; }
	ib_send_bw -d rroce0 -x "$gid" -p 18931 -F -s 4096 "$@" \
		--wait_destroy $((20 * SLOWDOWN)) $to >/tmp/bw.${to:-server} 2>&1 &
}
# set_of PID: the counter set line of process PID in $sets, one reading.
set_of() { grep " pid $1 " <<<"$sets"; }
# moved NAME BEFORE: how far the link's counter NAME moved since BEFORE.
moved() { echo $(($(link_counter rroce0 "$1") - $(stat_value "$1" "$2"))); }
# done_with PID: the client PID is through, its QP and the server's still
# there.
done_with() { wait_output /tmp/bw.127.0.0.1 "^ *4096 " 120 "$1"; }

rdma statistic qp set link rroce0/1 auto pid on &&
	rdma statistic qp mode link rroce0/1 | grep -q "auto pid on"
ktap_result $? "auto mode: a counter set for each process's QPs"

before=$(link_stats rroce0)
bw -n $MSGS && server=$!
wait_listen 18931 && bw -c -n $MSGS && client=$! && done_with $client
sets=$(rdma statistic qp show link rroce0/1)
c=$(set_of $client) s=$(set_of $server)
echo "# client: ${c:0:120}"
echo "# server: ${s:0:120}"
# At least the run's packets, and more if any was sent again.
[ "$(grep -c 'LQPN: <[0-9]' <<<"$sets")" = 2 ] &&
	[ "$(stat_value sent_pkts "$c")" -ge $PKTS ] &&
	[ "$(stat_value rcvd_pkts "$s")" = "$(stat_value sent_pkts "$c")" ]
ktap_result $? "each process's QP in its own set: the $(stat_value sent_pkts "$c") packets one sent, the other received"
[ "$(stat_value sent_pkts "$s")" = "$(stat_value rcvd_pkts "$c")" ] &&
	[ "$(stat_value sent_pkts "$s")" -ge 1 ] &&
	[ "$(stat_value sent_bytes "$c")" = "$(stat_value rcvd_bytes "$s")" ] &&
	[ "$(stat_value sent_bytes "$s")" = "$(stat_value rcvd_bytes "$c")" ]
ktap_result $? "the ACKs and the bytes agree: $(stat_value sent_pkts "$s") ACKs, $(stat_value sent_bytes "$c") bytes"
ok=0
for n in sent_pkts rcvd_pkts sent_bytes rcvd_bytes; do
	sum=$(($(stat_value $n "$c") + $(stat_value $n "$s")))
	[ "$(moved $n "$before")" = $sum ] || { ok=1; echo "# $n moved $(moved $n "$before"), sets $sum"; }
done
ktap_result $ok "the link's totals moved by the sets' sum, and no more"

during=$(link_stats rroce0)
wait $server $client
[ -z "$(rdma statistic qp show link rroce0/1)" ] &&
	[ "$(link_stats rroce0)" = "$during" ] &&
	[ "$(cat /sys/class/infiniband/rroce0/ports/1/counters/port_xmit_packets)" = \
		"$(link_counter rroce0 sent_pkts)" ]
ktap_result $? "the sets go with their QPs, what they counted stays in the link's and PMA's totals"

# By hand: the server's QP, bound while a 4 s run is under way.
rdma statistic qp set link rroce0/1 auto off
before=$(link_stats rroce0)
bw -D $((4 * SLOWDOWN)) && server=$!
wait_listen 18931 && bw -c -D $((4 * SLOWDOWN)) && client=$!
for i in $(seq 100); do
	qpn=$(rdma res show qp link rroce0/1 | sed -n "s/.* lqpn \([0-9]*\) .*type RC .*pid $server .*/\1/p")
	[ -n "$qpn" ] && break
	sleep 0.1
done
rdma statistic qp bind link rroce0/1 lqpn "$qpn" && done_with $client
s=$(rdma statistic qp show link rroce0/1 | grep -A1 cntn)
echo "# server QP $qpn: ${s:0:120}"
cntn=$(stat_value cntn "$s")
rdma statistic qp unbind link rroce0/1 cntn "$cntn" lqpn "$qpn" &&
	[ -z "$(rdma statistic qp show link rroce0/1)" ]
ktap_result $? "unbound, its set goes while the QP lives on"
# Once both are gone, everything sent was received, once: a count in
# both the set and the port's own would show.
wait $server $client
[ "$(stat_value rcvd_pkts "$s")" -gt 0 ] && [ "$(stat_value sent_pkts "$s")" -gt 0 ] &&
	[ "$(moved sent_pkts "$before")" = "$(moved rcvd_pkts "$before")" ] &&
	grep -q "LQPN: <$qpn>" <<<"$s"
ktap_result $? "bound by hand mid-run, the server's QP counted there; the link's totals stay whole ($(moved sent_pkts "$before") packets each way)"

rdma link delete rroce0 && rmmod rroce
ktap_finish
