#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce's tracepoints (events/rroce/): with them on, a pingpong between two
# QPs of the device shows each QP's packets sent to the other and received,
# and their way from RESET to RTS; verbs_data's send to a QP number nobody
# has shows the timeouts that resend it, the RETRY_EXC_ERR completion and
# the QP's move to ERR.

. "$(dirname "$0")/lib.sh"
in_vm || build_prog verbs_data -libverbs
vm_main 1 "$PROG"
prog=$1

require_cmd ibv_rc_pingpong rdma
load_rroce || ktap_skip_all "rroce.ko does not load"
T=$TRACEFS
tracing_up
ktap_plan 6

events=$(ls $T/events/rroce 2>/dev/null | grep -v -e enable -e filter | tr '\n' ' ')
[ "$events" = "rroce_qp_state rroce_recv rroce_retransmit rroce_rnr_wait rroce_send rroce_wc_error " ]
ktap_result $? "events/rroce: $events"

echo 8192 >$T/buffer_size_kb && echo 1 >$T/events/rroce/enable &&
	rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0, its tracepoints on"

gid=$(gid_index rroce0 "$RROCE_IP4")
timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18920 -n 50 -s 1024 >/tmp/server 2>&1 &
pid=$!
wait_listen 18920 && run timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18920 -n 50 -s 1024 127.0.0.1 &&
	wait $pid
ktap_result $? "rc_pingpong, 50 round trips"
qpn() { printf '%u' "0x$(sed -n "s/.*$1 address: .*QPN 0x\([0-9a-f]*\).*/\1/p" /tmp/client | head -1)"; }
echo "$RUN_OUTPUT" >/tmp/client
client=$(qpn local) server=$(qpn remote)
cp $T/trace /tmp/trace.pp
sent=$(grep -c "rroce_send: qpn=$client dest_qpn=$server " /tmp/trace.pp)
rcvd=$(grep -c "rroce_recv: dest_qpn=$server .* waited_us=[0-9]*$" /tmp/trace.pp)
[ "$sent" -ge 50 ] && [ "$rcvd" -ge 50 ]
ktap_result $? "QP $client sent $sent packets to QP $server, which received $rcvd"
grep -q "rroce_qp_state: qpn=$client RESET -> INIT" /tmp/trace.pp &&
	grep -q "rroce_qp_state: qpn=$client INIT -> RTR" /tmp/trace.pp &&
	grep -q "rroce_qp_state: qpn=$client RTR -> RTS" /tmp/trace.pp
ktap_result $? "QP $client went RESET, INIT, RTR, RTS"

echo >$T/trace
run "$prog" rroce0 >/dev/null
for what in 'reason=timeout' 'status=12 ' 'RTS -> ERR'; do
	grep -m 1 -- "$what" $T/trace | sed 's/^ */# /'
done
grep -q 'rroce_retransmit: .* reason=timeout' $T/trace &&
	grep -q 'rroce_wc_error: .* status=12 ' $T/trace &&
	grep -q 'rroce_qp_state: .* RTS -> ERR' $T/trace
ktap_result $? "a send to nobody: resent after timeouts, RETRY_EXC_ERR, RTS -> ERR"

echo 0 >$T/events/rroce/enable
rdma link delete rroce0 && rmmod rroce
ktap_finish
