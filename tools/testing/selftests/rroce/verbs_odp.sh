#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# On-demand paging on one device (verbs_odp.c): every operation on MRs of
# untouched memory, pages taken away by MADV_DONTNEED, fork and compaction
# with every byte checked, ibv_advise_mr, a WRITE to unmapped memory
# refused; then libibverbs' and perftest's own ODP modes (SEND/RECV, WRITE,
# READ; perftest 4.5 refuses atomics with --odp), client and server on the
# one device.

. "$(dirname "$0")/lib.sh"

in_vm || build_prog verbs_odp -libverbs -lpthread
vm_main 1 "$PROG"
prog=$1

require_cmd ibv_rc_pingpong ib_write_bw ib_read_bw rdma
ktap_plan 6

driver_up rroce
ktap_result $? "rroce0 on eth0"
run "$prog" rroce0
ktap_result $? "verbs_odp: $(grep -c '^ok' <<<"$RUN_OUTPUT") passed, $(grep -c '^not ok' <<<"$RUN_OUTPUT") failed"
gid=$(gid_index rroce0 "$RROCE_IP4")
loop "ibv_rc_pingpong -o" 18950 "iters in [0-9.]+ seconds" \
	ibv_rc_pingpong -d rroce0 -g "$gid" -p 18950 -n 200 -s 4096 -c -o
loop "ib_write_bw --odp" 18951 "$(bw_row 65536 200)" \
	ib_write_bw -d rroce0 -x "$gid" -p 18951 -F -s 65536 -n 200 --odp
loop "ib_read_bw --odp" 18952 "$(bw_row 65536 200)" \
	ib_read_bw -d rroce0 -x "$gid" -p 18952 -F -s 65536 -n 200 --odp
driver_down rroce
ktap_result $? "delete the device and unload"
ktap_finish
