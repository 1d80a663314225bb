#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rsockets over rroce: rstream and riostream, socket calls carried by RC QPs
# that rdma_cm connects. rsockets closes with zero-length RDMA WRITEs with
# immediate data, whose key the IBTA lets be anything; rroce once refused
# them, and the client then waited for ever. Each run moves 100 transfers of
# 4 KiB each way with the data verified (-T v) and must end within its time
# limit: RSOCKETS_RUNS runs of rstream and one of riostream on one device
# (loopback, in VM 1), then as many between the VMs.  The hang came in 9
# of 10 runs: 50 runs make sure of it. The debug kernel, which is there for
# memory and locking errors, does 3 (12 took 1 080 s there).

. "$(dirname "$0")/lib.sh"
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2

require_cmd rstream riostream rdma
RUNS=${RSOCKETS_RUNS:-$((SLOWDOWN > 1 ? 3 : 50))}
LIMIT=$((30 * SLOWDOWN))
if [ "$RROCE_VM" = 1 ]; then ktap_plan 6; else ktap_plan 4; fi

modprobe rdma_ucm
load_rroce && rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0"
gid_index rroce0 "$RROCE_IP4" >/dev/null

# rs_server TOOL PORT: one run's server, in the background ($server), once
# it listens.
rs_server() {
	timeout "$LIMIT" "$1" -b "$RROCE_IP4" -p "$2" -S 4096 -C 100 -T v >"/tmp/$1.server" 2>&1 &
	server=$!
	wait_cm_listen "$2"
}

# rs_client TOOL ADDR PORT: one run's client; false if it fails or hangs.
rs_client() {
	timeout "$LIMIT" "$1" -s "$2" -p "$3" -S 4096 -C 100 -T v >"/tmp/$1.client" 2>&1 && return
	sed 's/^/#   client: /' "/tmp/$1.client" | tail -5
	return 1
}

# rs_loopback TOOL RUNS: RUNS runs of TOOL with server and client here.
rs_loopback() {
	local i ended=0
	for i in $(seq "$2"); do
		rs_server "$1" 7471 && rs_client "$1" "$RROCE_IP4" 7471 && wait $server || break
		ended=$((ended + 1))
	done
	kill $server 2>/dev/null
	echo "# $1 on one device: $ended of $2 runs ended"
	[ $ended = "$2" ]
}

# rs_serve TOOL RUNS: serve RUNS runs of TOOL to the peer, one at a time.
rs_serve() {
	local i ended=0
	for i in $(seq "$2"); do
		rs_server "$1" 7472 && vm_signal "$1.$i" && await $server || break
		ended=$((ended + 1))
	done
	echo "# $1 served to vm2: $ended of $2 runs ended"
	[ $ended = "$2" ]
}

# rs_connect TOOL RUNS: connect to the peer's RUNS runs of TOOL.
rs_connect() {
	local i ended=0
	for i in $(seq "$2"); do
		vm_wait "$1.$i" 600 && rs_client "$1" "$(peer_ip4)" 7472 || break
		ended=$((ended + 1))
	done
	echo "# $1 from vm1: $ended of $2 runs ended"
	[ $ended = "$2" ]
}

if [ "$RROCE_VM" = 1 ]; then
	rs_loopback rstream "$RUNS"
	ktap_result $? "rstream, $RUNS runs on one device, none hangs"
	rs_loopback riostream 1
	ktap_result $? "riostream on one device"
	rs_serve rstream "$RUNS"
	ktap_result $? "rstream, $RUNS runs from vm2, server side"
	rs_serve riostream 1
	ktap_result $? "riostream from vm2, server side"
else
	rs_connect rstream "$RUNS"
	ktap_result $? "rstream, $RUNS runs to vm1, client side"
	rs_connect riostream 1
	ktap_result $? "riostream to vm1, client side"
fi

rdma link delete rroce0 && rmmod rroce
ktap_result $? "delete the device and unload"
ktap_finish
