#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce against the C rdma_rxe, side by side, in one run:
#
# 1. One VM under QEMU's -icount with one vCPU, where guest time counts
#    guest instructions: perftest with client and server on one device,
#    rroce's and then rxe's, ib_write_bw over message sizes from 2 B to
#    1 MiB, and fio over NVMe-oF with target and host on the one device
#    (the kernel consumers' path): 4 KiB random reads, 1 MiB reads and
#    writes. The figures are what each driver costs per byte and per
#    message, and repeat from run to run. For scale, a TCP stream over
#    loopback (iperf3) in the same VM.
# 2. One VM under plain TCG with two vCPUs: the latency of 64-byte WRITE,
#    SEND and READ with client and server on one device, each spinning on
#    its own vCPU, LAT_RUNS runs per driver, alternating. What each driver
#    adds to a round trip. (Under -icount the vCPUs take turns, and a
#    ping-pong waits for the scheduler.)
#    UCX's ucx_perftest adds its tag-matching bandwidth (rc_verbs) to
#    stages 1 and 3, 64 KiB messages (which UCX copies, 8 KiB at a time)
#    and 1 MiB ones (a rendezvous: the receiver READs them), and its put
#    latency to stages 2 and 3.
# 3. Two VMs under plain TCG: the same tools as in 1 between the VMs,
#    rroce's and then rxe's, and iperf3 over UDP and ping on the link
#    itself for scale; then the same latencies between the VMs, where the
#    link's own round trip dominates them; then fio over NVMe-oF (target in
#    VM 1, host in VM 2): 4 KiB random reads and 1 MiB sequential reads.
#    Figures under plain TCG swing between runs; only their ratio in one
#    run means much.
#
#   scripts/bench.sh          (make bench builds everything first)
#   BENCH_STAGES=local scripts/bench.sh     (only the stages listed)
#
# The sweep is also drawn, bandwidth against size, as sweep.png in the
# first stage's output directory (with gnuplot, if it is installed).

. "$(dirname "$0")/../tools/testing/selftests/rroce/lib.sh"
. "$(dirname "$0")/../tools/testing/selftests/rroce/nvmeof.sh"

# tool, message size, iterations
BENCHES=(
	"ib_write_bw 65536 300"
	"ib_read_bw 65536 300"
	"ib_send_bw 65536 300"
	"ib_write_bw 64 3000"
	"ib_send_bw 64 3000"
	"ib_atomic_bw 8 2000"
)
SWEEP_SIZES="2 8 32 128 512 2048 8192 32768 131072 524288 1048576"
LAT_TOOLS="ib_write_lat ib_send_lat ib_read_lat ucp_put_lat"
# ucx_perftest tag_bw: message size and count, about 20 MiB each.
UCX_TAG_BW=("65536 300" "1048576 20")
LAT_RUNS=${LAT_RUNS:-5}
FIO_SECONDS=20
# Guest seconds under -icount.
FIO_LOCAL_SECONDS=5

# ratio R X: R / X to two decimals, or "-" without an X.
ratio() {
	awk -v r="${1:-0}" -v x="${2:-0}" 'BEGIN { if (x > 0) printf "%.2f", r / x; else print "-" }'
}

# median_range: the median, least and greatest of the numbers on stdin, one
# a line, or "- - -" if there are none.
median_range() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f %.1f %.1f\n", v[int((NR + 1) / 2)], v[1], v[NR]; else print "- - -" }'
}

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
		ratio=$(ratio "$r" "$x")
		printf '%-14s %8s %12s %12s %8s\n' "$1" "$2" "${r:--}" "${x:--}" "$ratio"
	done
}

# sweep_table OUT: the sweep's MB/s per size, and the plot.
sweep_table() {
	local out=$1 size r x
	echo
	echo "One VM, -icount, ib_write_bw over message sizes:"
	printf '%8s %12s %12s %8s\n' bytes "rroce MB/s" "rxe MB/s" ratio
	: >"$out/sweep.dat"
	for size in $SWEEP_SIZES; do
		r=$(cat "$out/sweep.rroce.$size" 2>/dev/null)
		x=$(cat "$out/sweep.rxe.$size" 2>/dev/null)
		echo "$size ${r:-0} ${x:-0}" >>"$out/sweep.dat"
		printf '%8s %12s %12s %8s\n' "$size" "${r:--}" "${x:--}" \
			"$(ratio "$r" "$x")"
	done
	command -v gnuplot >/dev/null || return 0
	gnuplot <<-EOF
		set terminal png size 800,500 noenhanced
		set output "$out/sweep.png"
		set title "ib_write_bw, one VM under QEMU -icount (guest instructions as time)"
		set xlabel "message size (bytes)"
		set ylabel "MB/s"
		set logscale xy 2
		set format x "%.0b%B"
		set key top left
		set grid
		plot "$out/sweep.dat" using 1:2 with linespoints title "rroce", \
		     "$out/sweep.dat" using 1:3 with linespoints title "rdma_rxe"
	EOF
	echo "plot: $out/sweep.png"
}

# latency_table OUT WHERE: the median of each driver's runs, with their range.
latency_table() {
	local out=$1 t drv
	echo
	echo "$2, 64-byte latency, median (min..max) of $LAT_RUNS runs, usec:"
	printf '%-14s %24s %24s %8s\n' test rroce rxe ratio
	for t in $LAT_TOOLS; do
		for drv in rroce rxe; do
			cat "$out"/lat.$drv.$t.* 2>/dev/null | median_range >"$out/lat.$drv.$t"
		done
		read -r rm rlo rhi <"$out/lat.rroce.$t"
		read -r xm xlo xhi <"$out/lat.rxe.$t"
		printf '%-14s %24s %24s %8s\n' "$t" "$rm ($rlo..$rhi)" "$xm ($xlo..$xhi)" \
			"$(ratio "$rm" "$xm")"
	done
}

# figures_table OUT KIND TEST...: the figures of KIND (nvmeof, ucx), rroce
# against rxe.
figures_table() {
	local out=$1 kind=$2 t r x
	shift 2
	printf '%-22s %12s %12s %8s\n' test rroce rxe ratio
	for t in "$@"; do
		r=$(cat "$out/$kind.rroce.$t" 2>/dev/null)
		x=$(cat "$out/$kind.rxe.$t" 2>/dev/null)
		printf '%-22s %12s %12s %8s\n' "$t" "${r:--}" "${x:--}" \
			"$(ratio "$r" "$x")"
	done
}

# Which stages run: BENCH_STAGES, a list of local, latency and link.
STAGES=${BENCH_STAGES:-local latency link}
staged() {
	[[ " $STAGES " == *" $1 "* ]]
}

if ! in_vm; then
	base=${RROCE_CACHE:-$HOME/.cache/rroce}
	mkdir -p "$base"
	status=0
	echo "bench: stages $STAGES (tens of minutes)"
	if staged local; then
		local_out=$(mktemp -d "$base/bench-local.XXXXXX")
		RROCE_QEMU_OPTS="-icount shift=0,sleep=off" RROCE_VM_SMP=1 \
			"$REPO/scripts/vm.sh" -n 1 -q -t 3600 -o "$local_out" -- "$0" local ||
			{ status=1; echo "bench: the local stage failed; details in $local_out"; }
	fi
	if staged latency; then
		lat_out=$(mktemp -d "$base/bench-latency.XXXXXX")
		RROCE_VM_SMP=2 "$REPO/scripts/vm.sh" -n 1 -q -t 3600 -o "$lat_out" -- "$0" latency ||
			{ status=1; echo "bench: the latency stage failed; details in $lat_out"; }
	fi
	if staged link; then
		link_out=$(mktemp -d "$base/bench-link.XXXXXX")
		"$REPO/scripts/vm.sh" -n 2 -q -t 3600 -o "$link_out" -- "$0" link ||
			{ status=1; echo "bench: the link stage failed; details in $link_out"; }
	fi
	if staged local; then
		table "$local_out" "One VM, -icount, client and server on one device:"
		sweep_table "$local_out"
		echo
		echo "One VM, -icount, NVMe over Fabrics on one device, fio for ${FIO_LOCAL_SECONDS}s each:"
		figures_table "$local_out" nvmeof randread-4k-iops read-1m-mbs write-1m-mbs
		echo
		tcp=$(cat "$local_out/result.tcp-loopback" 2>/dev/null)
		echo "One VM, -icount, a TCP stream over loopback (iperf3): ${tcp:--} MB/s;" \
			"64 KiB WRITE is $(ratio "$(cat "$local_out/result.rroce.ib_write_bw.65536" 2>/dev/null)" "$tcp")" \
			"of it on rroce, $(ratio "$(cat "$local_out/result.rxe.ib_write_bw.65536" 2>/dev/null)" "$tcp") on rxe"
		echo
		echo "One VM, -icount, UCX on one device, ucx_perftest -t tag_bw over rc_verbs, MB/s:"
		figures_table "$local_out" ucx tag-bw-65536 tag-bw-1048576
	fi
	if staged latency; then
		latency_table "$lat_out" "One VM, plain TCG, two vCPUs, client and server on one device"
	fi
	if staged link; then
		table "$link_out" "Two VMs, plain TCG, between the VMs:"
		echo "iperf3 -u on the link: $(cat "$link_out/result.link" 2>/dev/null || echo -) MB/s delivered"
		latency_table "$link_out" "Two VMs, plain TCG, between the VMs"
		echo "ICMP echo of 64 bytes between the VMs, median round trip: $(cat "$link_out/result.ping-rtt" 2>/dev/null || echo -) usec"
		echo
		echo "Two VMs, NVMe over Fabrics, fio reads for ${FIO_SECONDS}s each:"
		figures_table "$link_out" nvmeof randread-4k-iops read-1m-mbs
		echo
		echo "Two VMs, UCX, ucx_perftest -t tag_bw over rc_verbs, MB/s:"
		figures_table "$link_out" ucx tag-bw-65536 tag-bw-1048576
	fi
	# The CRC-32's form, which rroce times at load: a fold under -icount,
	# the table under plain TCG, where the emulated PCLMULQDQ is slow.
	for stage_out in $local_out $lat_out $link_out; do
		form=$(grep -ho 'rroce: CRC-32 by [A-Za-z0-9]*' "$stage_out"/vm*.dmesg 2>/dev/null | sort -u | sed 's/.* by //')
		stage=${stage_out##*/bench-}
		echo "bench: rroce's CRC-32 in the ${stage%%.*} stage: $(echo ${form:--})"
	done
	echo "bench: $(date -u +%F), $(nproc) CPUs:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	exit $status
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

# pair TAG CMD...: CMD's server and its client, which prints what the
# client printed: in one VM over 127.0.0.1, or between the VMs (the server
# in VM 1 and the client in VM 2, which alone prints).
pair() {
	local tag=$1
	shift
	if [ "$mode" != link ]; then
		timeout 600 "$@" >/dev/null 2>&1 &
		wait_listen $port && timeout 600 "$@" 127.0.0.1 2>&1
		wait
	elif [ "$RROCE_VM" = 1 ]; then
		timeout 600 "$@" >/dev/null 2>&1 &
		wait_listen $port && vm_signal "$tag"
		await $!
	else
		vm_wait "$tag" 300 && timeout 600 "$@" "$(peer_ip4)" 2>&1
	fi
}

# Whether this VM prints the clients' results.
reports() {
	[ "$mode" != link ] || [ "$RROCE_VM" = 2 ]
}

# bench_ucx_env: the environment for UCX's own benchmark, ucx_perftest, on
# $dev's IPv4 GID over rc_verbs (and ud_verbs, through which it wires up).
# The C rxe needs UCX's check of a UD packet's destination GID turned off
# (see the user guide).
bench_ucx_env() {
	ucx_env "$dev" "$gid" rc_verbs,ud_verbs,self
	[ "$drv" = rxe ] && echo UCX_UD_ETH_DGID_CHECK=n
}

# ucx_final COLUMN OUTPUT: a column of ucx_perftest's final row (4 the
# average latency in usec, 7 the overall bandwidth in MB/s).
ucx_final() {
	awk -v c="$1" '$1 == "Final:" { print $c }' <<<"$2"
}

# The sweep: about 8 MiB, or 2000 messages, a size.
sweep() {
	local size n out
	for size in $SWEEP_SIZES; do
		n=$((8388608 / size))
		[ $n -gt 2000 ] && n=2000
		[ $n -lt 20 ] && n=20
		port=$((port + 1))
		out=$(pair "sweep.$drv.$size" ib_write_bw -d $dev -x "$gid" -p $port -F -s $size -n $n)
		awk -v s=$size '$1 == s && NF >= 5 { print $4 }' <<<"$out" >"$RROCE_SHARED/sweep.$drv.$size"
		if [ -s "$RROCE_SHARED/sweep.$drv.$size" ]; then
			echo "$drv sweep $size: $(cat "$RROCE_SHARED/sweep.$drv.$size") MB/s"
		else
			echo "$drv sweep $size: failed:"
			echo "$out" | sed 's/^/  /'
		fi
	done
}

# fio_job SECONDS NAME read|write FIO-ARGS...: prints IOPS and MB/s of a
# job that reads or writes the namespace.
fio_job() {
	local seconds=$1 name=$2 dir=$3
	shift 3
	fio --name="$name" --filename="$NS" --direct=1 --ioengine=libaio --rw=randread \
		--time_based --runtime="$seconds" --output-format=json "$@" 2>/dev/null |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["jobs"][0][sys.argv[1]]; print("%.0f %.2f" % (r["iops"], r["bw_bytes"] / 1e6))' "$dir"
}

# fio_read SECONDS NAME FIO-ARGS...: prints IOPS and MB/s of a read job.
fio_read() {
	fio_job "$1" "$2" read "${@:3}"
}

# nvmeof_local: the local stage's NVMe-oF runs, target and host in this VM:
# 4 KiB random reads, 1 MiB sequential reads and writes.
nvmeof_local() {
	local iops rd wr
	target_up || return 1
	if TRADDR=$RROCE_IP4 host_connect; then
		iops=$(fio_read $FIO_LOCAL_SECONDS randread --bs=4k --iodepth=16 --size=64m)
		rd=$(fio_read $FIO_LOCAL_SECONDS seqread --rw=read --bs=1m --iodepth=4 --size=256m)
		wr=$(fio_job $FIO_LOCAL_SECONDS seqwrite write --rw=write --bs=1m --iodepth=4 --size=256m)
		echo "${iops%% *}" >"$RROCE_SHARED/nvmeof.$drv.randread-4k-iops"
		echo "${rd##* }" >"$RROCE_SHARED/nvmeof.$drv.read-1m-mbs"
		echo "${wr##* }" >"$RROCE_SHARED/nvmeof.$drv.write-1m-mbs"
		echo "$drv NVMe-oF on one device: 4 KiB random reads ${iops%% *} IOPS," \
			"1 MiB reads ${rd##* } MB/s, 1 MiB writes ${wr##* } MB/s"
		host_disconnect
	fi
	target_down
}

# tcp_limit: what a TCP stream over loopback moves in this VM, MB/s (two
# copies a byte, no checksum): the scale for the figures of one device.
tcp_limit() {
	local try server mbs=
	for try in 1 2 3; do
		timeout 60 iperf3 -s -1 -p 5202 >/dev/null 2>&1 &
		server=$!
		if wait_listen 5202; then
			mbs=$(iperf3 -c 127.0.0.1 -p 5202 -t 5 -J | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d.get("end", {}).get("sum_received")
# Nothing received is no result: a loaded host can stall the guest for
# the whole run under -icount (Documentation/performance.rst), so try again.
if r and r["bits_per_second"] > 0:
    print("%.2f" % (r["bits_per_second"] / 8e6))
else:
    print("iperf3:", d.get("error", "nothing received"), file=sys.stderr)')
		fi
		kill $server 2>/dev/null
		wait $server
		[ -n "$mbs" ] && break
	done
	echo "${mbs:-0}" >"$RROCE_SHARED/result.tcp-loopback"
	echo "TCP over loopback: $(cat "$RROCE_SHARED/result.tcp-loopback") MB/s"
}

[ "$mode" = local ] && tcp_limit

# The benches; the latency stage runs none of them.
for drv in rroce rxe; do
	[ "$mode" = latency ] && break
	driver_up $drv || exit 1
	dev=$DEV
	gid=$(gid_index $dev "$RROCE_IP4") || exit 1
	for b in "${BENCHES[@]}"; do
		set -- $b
		port=$((port + 1))
		out=$(pair "$drv.$1.$2" "$1" -d $dev -x "$gid" -p $port -F -s "$2" -n "$3")
		reports && result $drv "$1" "$2" "$out"
	done
	for b in "${UCX_TAG_BW[@]}"; do
		set -- $b
		port=$((port + 1))
		out=$(pair "$drv.ucx.tag_bw.$1" env $(bench_ucx_env) ucx_perftest -p $port -t tag_bw -s "$1" -n "$2")
		reports || continue
		ucx_final 7 "$out" >"$RROCE_SHARED/ucx.$drv.tag-bw-$1"
		echo "$drv ucx_perftest tag_bw $1: $(cat "$RROCE_SHARED/ucx.$drv.tag-bw-$1") MB/s"
	done
	[ "$mode" = local ] && { sweep; nvmeof_local; }
	driver_down $drv
	[ "$mode" = link ] && { vm_signal "unloaded.$drv"; vm_wait "unloaded.$drv" 300; }
done

[ "$mode" = local ] && exit 0

# The link itself, for scale: UDP throughput.
if [ "$mode" = link ] && [ "$RROCE_VM" = 1 ]; then
	timeout 60 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	wait_listen 5201 && vm_signal iperf3
	await $!
elif [ "$mode" = link ]; then
	vm_wait iperf3 && iperf3 -c "$(peer_ip4)" -p 5201 -u -b 0 -l 1400 -t 5 -J |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["end"]["sum"]; print("%.2f" % (r["bits_per_second"] / 8e6 * (1 - r["lost_percent"] / 100)))' \
		>"$RROCE_SHARED/result.link"
	echo "link iperf3 -u: $(cat "$RROCE_SHARED/result.link") MB/s delivered"
fi

# The round trip of an ICMP echo, answered by the peer's kernel: the floor
# under ib_read_lat (a round trip that no process at the far end takes part
# in) and, halved, under ib_write_lat and ib_send_lat (which report half of
# their ping-pong's round trip).
if [ "$mode" = link ] && [ "$RROCE_VM" = 2 ]; then
	ping -c 200 -i 0.01 -s 64 "$(peer_ip4)" |
		sed -n 's/.* time=\([0-9.]*\) ms/\1/p' | awk '{ print $1 * 1000 }' |
		median_range | { read -r median _ && echo "$median"; } >"$RROCE_SHARED/result.ping-rtt"
	echo "link ICMP echo round trip: $(cat "$RROCE_SHARED/result.ping-rtt") usec"
fi

# Latency: the drivers take turns, so that a slow spell of the host falls
# on both.
for run in $(seq "$LAT_RUNS"); do
	for drv in rroce rxe; do
		driver_up $drv || exit 1
		dev=$DEV
		gid=$(gid_index $dev "$RROCE_IP4") || exit 1
		for t in $LAT_TOOLS; do
			port=$((port + 1))
			if [ "$t" = ucp_put_lat ]; then
				out=$(pair "lat.$run.$drv.$t" env $(bench_ucx_env) ucx_perftest -p $port -t $t -s 64 -n 1000)
				reports || continue
				grep '^Final:' <<<"$out" >"$RROCE_SHARED/row.$drv.$t.$run"
				ucx_final 4 "$out" >"$RROCE_SHARED/lat.$drv.$t.$run"
			else
				out=$(pair "lat.$run.$drv.$t" "$t" -d $dev -x "$gid" -p $port -F -s 64 -n 1000)
				reports || continue
				# t_avg, the sixth column of the result row; the whole
				# row (t_min, t_max, t_typical, ...) is kept beside it.
				awk '$1 == 64 && NF >= 6' <<<"$out" >"$RROCE_SHARED/row.$drv.$t.$run"
				awk '{ print $6 }' "$RROCE_SHARED/row.$drv.$t.$run" >"$RROCE_SHARED/lat.$drv.$t.$run"
			fi
			echo "$drv $t run $run: $(cat "$RROCE_SHARED/lat.$drv.$t.$run") usec"
		done
		driver_down $drv
		[ "$mode" = link ] || continue
		vm_signal "lat-unloaded.$run.$drv"
		vm_wait "lat-unloaded.$run.$drv" 300
	done
done

[ "$mode" = link ] || exit 0

# NVMe over Fabrics: fio's figure for each driver, the target in VM 1.
for drv in rroce rxe; do
	driver_up $drv || exit 1
	if [ "$RROCE_VM" = 1 ]; then
		target_up || exit 1
		vm_signal "nvmeof-target.$drv"
		vm_wait "nvmeof-done.$drv" 600
		target_down
	else
		vm_wait "nvmeof-target.$drv" 300 && host_connect || exit 1
		# No process substitution: the VM has no /dev/fd.
		iops=$(fio_read $FIO_SECONDS randread --bs=4k --iodepth=16 --size=256m)
		iops=${iops%% *}
		mbs=$(fio_read $FIO_SECONDS seqread --rw=read --bs=1m --iodepth=4 --size=256m)
		mbs=${mbs##* }
		echo "${iops:-0}" >"$RROCE_SHARED/nvmeof.$drv.randread-4k-iops"
		echo "${mbs:-0}" >"$RROCE_SHARED/nvmeof.$drv.read-1m-mbs"
		echo "$drv NVMe-oF: 4 KiB random reads ${iops:-failed} IOPS, 1 MiB reads ${mbs:-failed} MB/s"
		host_disconnect
		vm_signal "nvmeof-done.$drv"
	fi
	driver_down $drv
	vm_signal "nvmeof-unloaded.$drv"
	vm_wait "nvmeof-unloaded.$drv" 300
done
