#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue pairs through unmodified libibverbs: numbered, sized, their rings
# mapped by the provider, bad requests refused, and what a process leaves
# open cleaned up (verbs_qp.c).

. "$(dirname "$0")/lib.sh"

in_vm || build_prog verbs_qp -libverbs
vm_main 1 "$PROG"

require_cmd rdma
ktap_plan 4
load_rroce
ktap_result $? "insmod rroce.ko"
run rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rdma link add rroce0 type rroce netdev eth0"
gid=$(gid_index rroce0 "$RROCE_IP4")
run "$1" rroce0 "$gid"
ktap_result $? "verbs_qp: $(grep -c '^ok' <<<"$RUN_OUTPUT") passed, $(grep -c '^not ok' <<<"$RUN_OUTPUT") failed"
rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
