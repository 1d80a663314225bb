#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce against the C rdma_rxe, side by side in one pair of VMs: the same
# perftest runs on each driver in turn, then iperf3 over UDP on the link
# itself, and a table of the results and their ratios.
#
#   scripts/bench.sh          (make bench builds everything first)
#
# The VMs run with QEMU's -icount and one vCPU, so that guest time counts
# guest instructions: the figures measure what each driver costs per byte
# and per message, and repeat from run to run (Documentation/testing.rst).
# Latency is not measured here, as it means nothing under -icount.

. "$(dirname "$0")/../tools/testing/selftests/rroce/lib.sh"

# tool, message size, iterations
BENCHES=(
	"ib_write_bw 65536 300"
	"ib_read_bw 65536 300"
	"ib_send_bw 65536 300"
	"ib_write_bw 64 3000"
	"ib_send_bw 64 3000"
	"ib_atomic_bw 8 2000"
)

if ! in_vm; then
	out=$(mktemp -d "${RROCE_CACHE:-$HOME/.cache/rroce}/bench.XXXXXX")
	echo "bench: booting two VMs under -icount (several minutes)"
	RROCE_QEMU_OPTS="-icount shift=0,sleep=off" RROCE_VM_SMP=1 \
		"$REPO/scripts/vm.sh" -n 2 -q -t 1800 -o "$out" -- "$0"
	status=$?
	echo
	printf '%-14s %8s %12s %12s %8s\n' test bytes "rroce MB/s" "rxe MB/s" ratio
	for b in "${BENCHES[@]}" "iperf3_udp 1400 0"; do
		set -- $b
		r=$(cat "$out/result.rroce.$1.$2" 2>/dev/null)
		x=$(cat "$out/result.rxe.$1.$2" 2>/dev/null)
		[ "$1" = iperf3_udp ] && { r=$(cat "$out/result.link.$1.$2" 2>/dev/null); x=$r; }
		ratio=$(awk -v r="${r:-0}" -v x="${x:-0}" 'BEGIN { if (x > 0) printf "%.2f", r / x; else print "-" }')
		printf '%-14s %8s %12s %12s %8s\n' "$1" "$2" "${r:--}" "${x:--}" "$ratio"
	done
	echo "bench: $(date -u +%F), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	[ $status = 0 ] || echo "bench: a run failed (status $status); details in $out"
	exit $status
fi

# In the VMs: each driver in turn, then the bare link.
port=19000
for drv in rroce rxe; do
	if [ $drv = rroce ]; then
		load_rroce && rdma link add rroce0 type rroce netdev eth0 && dev=rroce0
	else
		modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 && dev=rxe0
	fi || exit 1
	gid=$(gid_index $dev "$RROCE_IP4") || exit 1
	for b in "${BENCHES[@]}"; do
		set -- $b
		port=$((port + 1))
		if [ "$RROCE_VM" = 1 ]; then
			timeout 600 "$1" -d $dev -x "$gid" -p $port -F -s "$2" -n "$3" >/dev/null 2>&1 &
			wait_listen $port && vm_signal "$drv.$1.$2"
			await $!
		else
			vm_wait "$drv.$1.$2" 300 || exit 1
			result=$(timeout 600 "$1" -d $dev -x "$gid" -p $port -F -s "$2" -n "$3" "$(peer_ip4)" |
				awk -v s="$2" '$1 == s && NF >= 5 { print $4 }')
			echo "$drv $1 $2: ${result:-failed} MB/s"
			echo "${result:-0}" >"$RROCE_SHARED/result.$drv.$1.$2"
		fi
	done
	rdma link delete $dev
	if [ $drv = rroce ]; then rmmod rroce; else rmmod rdma_rxe; fi
	vm_signal "unloaded.$drv" && vm_wait "unloaded.$drv" 300
done

if [ "$RROCE_VM" = 1 ]; then
	timeout 60 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	wait_listen 5201 && vm_signal iperf3
	await $!
else
	vm_wait iperf3 && result=$(iperf3 -c "$(peer_ip4)" -p 5201 -u -b 0 -l 1400 -t 5 -J |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["end"]["sum"]; print("%.2f" % (r["bits_per_second"] / 8e6 * (1 - r["lost_percent"] / 100)))')
	echo "link iperf3 -u: ${result:-failed} MB/s delivered"
	echo "${result:-0}" >"$RROCE_SHARED/result.link.iperf3_udp.1400"
fi
