#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce on both VMs: libibverbs' pingpong examples exchange and check data
# over RoCEv2 GIDs of IPv4 and IPv6.  VM 1 serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd ibv_rc_pingpong ibv_uc_pingpong rdma python3
ktap_plan 7

load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"
gid4=$(gid_index rroce0 "$RROCE_IP4")
gid6=$(gid6_index rroce0 "$RROCE_IP6")
ktap_result $? "RoCE v2 GIDs for $RROCE_IP4 ($gid4) and $RROCE_IP6 ($gid6)"

ITERS="iters in [0-9.]+ seconds"
pair rc_pingpong_v4 18515 "$ITERS" ibv_rc_pingpong -d rroce0 -g "$gid4" -p 18515 -n 200 -s 4096 -c
pair uc_pingpong_v4 18516 "$ITERS" ibv_uc_pingpong -d rroce0 -g "$gid4" -p 18516 -n 200 -s 1024 -c
# The TCP exchange stays on IPv4; the RDMA traffic uses the IPv6 GID.
pair rc_pingpong_v6 18517 "$ITERS" \
	ibv_rc_pingpong -d rroce0 -g "$gid6" -p 18517 -n 200 -s 10000 -c

# The counters saw the traffic, and no packet with a bad ICRC.
stats=$(link_stats rroce0)
echo "# $stats"
counter() { stat_value $1 "$stats"; }
[ "$(counter sent_pkts)" -gt 600 ] && [ "$(counter rcvd_pkts)" -gt 600 ] &&
	[ "$(counter drop_bad_icrc)" = 0 ]
ktap_result $? "rdma statistic: $(counter sent_pkts) packets sent, $(counter rcvd_pkts) received, none with a bad ICRC"

rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
