#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libfabric over rroce, as Debian ships it (1.17; it has no fabtests):
# fi_pingpong with its data checks (-c) over every endpoint type the verbs
# provider offers on a RoCE device: MSG (RC through rdma_cm), RDM (ofi_rxm
# over MSG, whose CQ of 262,144 entries the C rxe refuses) and DGRAM (UD),
# every size fi_pingpong knows (-S all: 0 bytes to 6 MiB, the datagrams to
# the MTU), on one device (each VM some of the types on its own device, at
# the same time) and between the VMs. fi_check.c checks what fi_pingpong
# does not, over RDM: tagged and untagged messages, RMA writes and reads,
# atomics, every byte checked, on one device and between the VMs. With
# RROCE_RXE_COMPARE=1, then the same on the C rdma_rxe, whose outcome is
# printed, not tested.

. "$(dirname "$0")/lib.sh"
in_vm || build_prog fi_check -lfabric
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2 "$PROG"

FI_CHECK=$1
require_cmd fi_pingpong fi_info rdma
if [ "$RROCE_VM" = 1 ]; then ktap_plan 9; else ktap_plan 11; fi
LIMIT=$((120 * SLOWDOWN))
# Iterations of each size on one device, and between the VMs, whose link
# is slower.
LOOP_ITERS=$((4 / SLOWDOWN + 1))
PAIR_ITERS=$((1 / SLOWDOWN + 1))
ENDPOINTS="verbs:msg verbs;ofi_rxm:rdm verbs:dgram"
# The types each VM runs on its own device: RDM takes about as long as the
# other two and fi_check.
if [ "$RROCE_VM" = 1 ]; then LOOP_ENDPOINTS="verbs;ofi_rxm:rdm"; else LOOP_ENDPOINTS="verbs:msg verbs:dgram"; fi
# fi_check's rounds and largest message: one round up to 256 KiB on the
# debug kernel.
if [ "$SLOWDOWN" = 1 ]; then FI_CHECK_ARGS="-r 2 -m 4194304"; else FI_CHECK_ARGS="-r 1 -m 262144"; fi

# fi_loop PROVIDER EP: fi_pingpong with server and client on one device;
# false unless both end well, having moved every size.
fi_loop() {
	local server status
	timeout "$LIMIT" fi_pingpong -p "$1" -e "$2" -c -S all -I $LOOP_ITERS -B 47600 >/tmp/fi.server 2>&1 &
	server=$!
	wait_listen 47600 &&
		timeout "$LIMIT" fi_pingpong -p "$1" -e "$2" -c -S all -I $LOOP_ITERS -P 47600 "$RROCE_IP4" \
			>/tmp/fi.client 2>&1
	status=$?
	wait $server || status=1
	sed 's/^/#   /' /tmp/fi.client
	[ $status = 0 ] && grep -Eq "$(fi_last_row "$2" $LOOP_ITERS)" /tmp/fi.client
}

# fi_last_row EP ITERS: the result row of the largest size fi_pingpong -S
# all moves on EP, ITERS times: 6 MiB, or 1 KiB datagrams (the MTU).
fi_last_row() {
	if [ "$1" = dgram ]; then echo "^1k +$2 +=$2 "; else echo "^6m +$2 +=$2 "; fi
}

# fi_run DRIVER: this VM's endpoint types on one device, then every type
# between the VMs; KTAP lines, or under REFERENCE comment lines.
fi_run() {
	local ep prov type port=47610
	for ep in $LOOP_ENDPOINTS; do
		prov=${ep%:*} type=${ep#*:}
		fi_loop "$prov" "$type"
		ktap_result $? "fi_pingpong -p '$prov' -e $type -c, all sizes, on one device"
	done
	[ "$RROCE_VM" = 2 ] &&
		loop "fi_check_$1" 47620 "fi_check: [0-9]+ passed, 0 failed" \
			"$FI_CHECK" $FI_CHECK_ARGS -d "$DEV" -p 47620
	vm_signal "one-device-$1" && vm_wait "one-device-$1" 600
	for ep in $ENDPOINTS; do
		prov=${ep%:*} type=${ep#*:} port=$((port + 1))
		PAIR_ADDR_OPT="-P $port" pair "fi_${type}_$1" "$port" "$(fi_last_row "$type" $PAIR_ITERS)" \
			fi_pingpong -p "$prov" -e "$type" -c -S all -I $PAIR_ITERS -B "$port"
	done
	pair "fi_check_pair_$1" 47630 "fi_check: [0-9]+ passed, 0 failed" \
		"$FI_CHECK" $FI_CHECK_ARGS -d "$DEV" -p 47630
}

driver_up rroce
ktap_result $? "rroce0 on eth0"
listed=0
for type in FI_EP_MSG FI_EP_RDM FI_EP_DGRAM; do
	fi_info -p verbs -t $type | grep -q "domain: *rroce0" && listed=$((listed + 1))
done
[ $listed = 3 ]
ktap_result $? "fi_info lists rroce0 with MSG, RDM and DGRAM endpoints"
sent=$(link_counter "$DEV" sent_pkts)
fi_run rroce
ktap_sent "$DEV" "$sent" "rroce0 sent the traffic"
show_link_stats "$DEV"
driver_down rroce
ktap_result $? "delete the device and unload"

if rxe_reference && driver_up rxe; then
	REFERENCE=rxe fi_run rxe
	driver_down rxe
fi
ktap_finish
