#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce on both VMs: ibv_ud_pingpong sends datagrams through address
# handles, on IPv4 and IPv6 GIDs.  VM 1 serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd ibv_ud_pingpong rdma python3
ktap_plan 4

load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"
gid4=$(gid_index rroce0 "$RROCE_IP4")
gid6=$(gid6_index rroce0 "$RROCE_IP6")

ITERS="iters in [0-9.]+ seconds"
pair ud_pingpong_v4 18520 "$ITERS" ibv_ud_pingpong -d rroce0 -g "$gid4" -p 18520 -n 200 -s 1024
# The TCP exchange stays on IPv4; the datagrams use the IPv6 GID.
pair ud_pingpong_v6 18521 "$ITERS" ibv_ud_pingpong -d rroce0 -g "$gid6" -p 18521 -n 200 -s 512

rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
