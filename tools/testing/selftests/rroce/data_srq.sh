#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce on both VMs: ibv_srq_pingpong runs 16 RC QPs that take their
# receive requests from one shared receive queue.  VM 1 serves, VM 2
# connects.

. "$(dirname "$0")/lib.sh"
vm_main 2

require_cmd ibv_srq_pingpong rdma
ktap_plan 3

load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"
gid=$(gid_index rroce0 "$RROCE_IP4")

pair srq_pingpong 18530 "iters in [0-9.]+ seconds" \
	ibv_srq_pingpong -d rroce0 -g "$gid" -p 18530 -n 100 -s 2048 -q 16

rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
