#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce on both VMs: perftest's bandwidth and latency tools for SEND, RDMA
# WRITE, RDMA READ and atomics.  The bandwidth tools sweep message sizes
# (-a: 2 bytes to 8 MiB); iterations are few, as the VMs are emulated.  On
# the debug kernel they move 1 MiB messages instead: the sweep's 80 MiB per
# tool took 29 min there.  VM 1 serves, VM 2 connects.

. "$(dirname "$0")/lib.sh"
# About 130 s on the test kernel.
VM_TIMEOUT=${VM_TIMEOUT:-600}
vm_main 2

require_cmd ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw rdma
ktap_plan 11

load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"
gid=$(gid_index rroce0 "$RROCE_IP4")
ktap_result $? "RoCE v2 GID for $RROCE_IP4 ($gid)"

# A latency result row: bytes, iterations, then times.
LAT='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+'
port=18600
# perf CHECK TOOL ARG...: one perftest tool, as a pair.
perf() {
	local check=$1 tool=$2
	shift 2
	port=$((port + 1))
	pair "$tool $*" $port "$check" "$tool" -d rroce0 -x "$gid" -p $port -F "$@"
}
PAIR_TIMEOUT=300
# -a ends with 8 MiB messages.
BW_SIZES=(-a -n 5) BW_LAST=(8388608 5)
[ "$SLOWDOWN" -gt 1 ] && BW_SIZES=(-s 1048576 -n 8) BW_LAST=(1048576 8)
perf "$(bw_row "${BW_LAST[@]}")" ib_send_bw "${BW_SIZES[@]}"
perf "$(bw_row "${BW_LAST[@]}")" ib_write_bw "${BW_SIZES[@]}"
perf "$(bw_row "${BW_LAST[@]}")" ib_read_bw "${BW_SIZES[@]}"
perf "$(bw_row 8 200)" ib_atomic_bw -n 200
perf "$LAT" ib_send_lat -s 64 -n 100
perf "$LAT" ib_write_lat -s 64 -n 100
# Their servers print no result: their exit status tells.
SERVER_CHECK=. perf "$LAT" ib_read_lat -s 64 -n 100
SERVER_CHECK=. perf "$LAT" ib_atomic_lat -n 100

# How the transport fared: retransmissions, NAKs, duplicates.
show_link_stats rroce0
rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
