#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce against the C rdma_rxe, side by side, in one run:
#
# 1. One VM under QEMU's -icount with one vCPU, where guest time counts
#    guest instructions: perftest with client and server on one device,
#    rroce's and then rxe's. The figures are what each driver costs per
#    byte and per message, and repeat from run to run.
# 2. Two VMs under plain TCG: the same tools between the VMs, rroce's and
#    then rxe's, and iperf3 over UDP on the link itself for scale. These
#    figures swing between runs; only their ratio in one run means much.
#
#   scripts/bench.sh          (make bench builds everything first)
#
# Latency is not measured: it means nothing under -icount, and needs many
# repeated runs under plain TCG (Documentation/testing.rst).

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

# table OUT TITLE: the results of one stage, with rroce/rxe ratios.
table() {
	local out=$1 r x ratio
	echo
	echo "$2"
	printf '%-14s %8s %12s %12s %8s\n' test bytes "rroce MB/s" "rxe MB/s" ratio
	for b in "${BENCHES[@]}"; do
		set -- $b
		r=$(cat "$out/result.rroce.$1.$2" 2>/dev/null)
		x=$(cat "$out/result.rxe.$1.$2" 2>/dev/null)
		ratio=$(awk -v r="${r:-0}" -v x="${x:-0}" 'BEGIN { if (x > 0) printf "%.2f", r / x; else print "-" }')
		printf '%-14s %8s %12s %12s %8s\n' "$1" "$2" "${r:--}" "${x:--}" "$ratio"
	done
}

if ! in_vm; then
	base=${RROCE_CACHE:-$HOME/.cache/rroce}
	mkdir -p "$base"
	local_out=$(mktemp -d "$base/bench-local.XXXXXX")
	link_out=$(mktemp -d "$base/bench-link.XXXXXX")
	echo "bench: one VM under -icount, then two VMs (several minutes)"
	RROCE_QEMU_OPTS="-icount shift=0,sleep=off" RROCE_VM_SMP=1 \
		"$REPO/scripts/vm.sh" -n 1 -q -t 1800 -o "$local_out" -- "$0" local
	s1=$?
	"$REPO/scripts/vm.sh" -n 2 -q -t 1800 -o "$link_out" -- "$0" link
	s2=$?
	table "$local_out" "One VM, -icount, client and server on one device:"
	table "$link_out" "Two VMs, plain TCG, between the VMs:"
	echo "iperf3 -u on the link: $(cat "$link_out/result.link" 2>/dev/null || echo -) MB/s delivered"
	echo "bench: $(date -u +%F), $(nproc) CPUs:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	[ $s1 = 0 ] && [ $s2 = 0 ] || echo "bench: a run failed; details in $local_out and $link_out"
	exit $((s1 | s2))
fi

mode=$1
port=19000
# result DRIVER TOOL SIZE OUTPUT: keep the average MB/s of a result row.
result() {
	local avg
	avg=$(awk -v s="$3" '$1 == s && NF >= 5 { print $4 }' <<<"$4")
	echo "$1 $2 $3: ${avg:-failed} MB/s"
	echo "${avg:-0}" >"$RROCE_SHARED/result.$1.$2.$3"
}

for drv in rroce rxe; do
	driver_up $drv || exit 1
	dev=$DEV
	gid=$(gid_index $dev "$RROCE_IP4") || exit 1
	for b in "${BENCHES[@]}"; do
		set -- $b
		port=$((port + 1))
		cmd=("$1" -d $dev -x "$gid" -p $port -F -s "$2" -n "$3")
		if [ "$mode" = local ]; then
			"${cmd[@]}" >/dev/null 2>&1 &
			wait_listen $port && result $drv "$1" "$2" "$("${cmd[@]}" 127.0.0.1 2>&1)"
			wait
		elif [ "$RROCE_VM" = 1 ]; then
			timeout 600 "${cmd[@]}" >/dev/null 2>&1 &
			wait_listen $port && vm_signal "$drv.$1.$2"
			await $!
		else
			vm_wait "$drv.$1.$2" 300 &&
				result $drv "$1" "$2" "$(timeout 600 "${cmd[@]}" "$(peer_ip4)" 2>&1)"
		fi
	done
	driver_down $drv
	[ "$mode" = link ] && { vm_signal "unloaded.$drv"; vm_wait "unloaded.$drv" 300; }
done

[ "$mode" = link ] || exit 0
if [ "$RROCE_VM" = 1 ]; then
	timeout 60 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	wait_listen 5201 && vm_signal iperf3
	await $!
else
	vm_wait iperf3 && iperf3 -c "$(peer_ip4)" -p 5201 -u -b 0 -l 1400 -t 5 -J |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["end"]["sum"]; print("%.2f" % (r["bits_per_second"] / 8e6 * (1 - r["lost_percent"] / 100)))' \
		>"$RROCE_SHARED/result.link"
	echo "link iperf3 -u: $(cat "$RROCE_SHARED/result.link") MB/s delivered"
fi
