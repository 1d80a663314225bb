#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where rroce and the C rdma_rxe spend their instructions: one perftest run
# per driver in one VM under QEMU's -icount with one vCPU (as `make bench`'s
# first stage), sampled by perf's cpu-clock, whose clock then counts guest
# instructions. Prints each driver's hottest kernel symbols.
#
#   scripts/profile.sh [TOOL [SIZE [ITERATIONS [-g]]]]   default: ib_write_bw 65536 300
#
# -g records call stacks too (perf record -g). The perf data and the
# guest's symbols stay in the output directory, for reports on the host:
#   perf report -i DIR/perf.rroce --kallsyms=DIR/kallsyms.rroce --children
#
# TOOL nvmeof samples fio's SIZE-byte random reads over NVMe-oF, target and
# host on the one device, 16 in flight, for ITERATIONS guest seconds after 3
# seconds of warm-up that are not sampled (fio opens the device and the
# connections fill: idle time that is not the steady state); each
# report then also gives the samples' share by where they ran: the driver,
# the rest of the kernel, user space.
#
# perf comes from the host (linux-perf), which the VM sees as its root.

. "$(dirname "$0")/../tools/testing/selftests/rroce/lib.sh"

TOOL=${1:-ib_write_bw}
SIZE=${2:-65536}
ITERS=${3:-300}
CALLGRAPH=${4:-}

if ! in_vm; then
	command -v perf >/dev/null || { echo "profile: needs perf (apt-get install linux-perf)" >&2; exit 1; }
	base=${RROCE_CACHE:-$HOME/.cache/rroce}
	mkdir -p "$base"
	out=$(mktemp -d "$base/profile.XXXXXX")
	RROCE_QEMU_OPTS="-icount shift=0,sleep=off" RROCE_VM_SMP=1 \
		"$REPO/scripts/vm.sh" -n 1 -q -t 1800 -o "$out" -- "$0" "$TOOL" "$SIZE" "$ITERS" $CALLGRAPH
	status=$?
	for drv in rroce rxe; do
		echo
		echo "$drv: $TOOL -s $SIZE -n $ITERS, share and count of samples by symbol:"
		head -n 40 "$out/report.$drv" 2>/dev/null || echo "(none)"
		echo "$drv: counters: $(cat "$out/stats.$drv" 2>/dev/null)"
		echo "$drv: result: $(grep -E '^ *[0-9]+ +[0-9]+ ' "$out/out.$drv" 2>/dev/null | tail -n 1)"
		grep -E '^(fio|share): ' "$out/out.$drv" 2>/dev/null | sed "s/^/$drv: /"
	done
	echo "profile: perf data and full reports in $out"
	exit $status
fi

# perftest DRIVER: one run of TOOL, client and server on the device, sampled.
perftest() {
	local gid cmd
	gid=$(gid_index $DEV "$RROCE_IP4") || return 1
	port=$((port + 1))
	cmd=("$TOOL" -d $DEV -x "$gid" -p $port -F -s "$SIZE" -n "$ITERS")
	"${cmd[@]}" >/dev/null 2>&1 &
	wait_listen $port || return 1
	perf record -q -e cpu-clock $CALLGRAPH -a -o "$RROCE_SHARED/perf.$1" -- "${cmd[@]}" 127.0.0.1 \
		>"$RROCE_SHARED/out.$1" 2>&1
	wait
}

# nvmeof DRIVER: fio's random reads over NVMe-oF on the device, sampled.
nvmeof() {
	. "$SELFTESTS_DIR/nvmeof.sh"
	target_up && TRADDR=$RROCE_IP4 host_connect || return 1
	perf record -q -e cpu-clock $CALLGRAPH -D 3000 -a -o "$RROCE_SHARED/perf.$1" -- \
		fio --name=randread --filename="$NS" --direct=1 --ioengine=libaio --rw=randread \
		--bs="$SIZE" --iodepth=16 --size=64m --time_based --ramp_time=3 --runtime="$ITERS" \
		>"$RROCE_SHARED/out.$1" 2>&1
	sed -n 's/^ *read: IOPS=\([^,]*\), BW=\([^ ]*\).*/fio: \1 IOPS, \2/p' "$RROCE_SHARED/out.$1" \
		>>"$RROCE_SHARED/out.$1"
	host_disconnect
	target_down
}

# shares DRIVER MODULE: the share of samples in MODULE, the rest of the
# kernel and user space.
shares() {
	perf report -q --no-children -i "$RROCE_SHARED/perf.$1" --kallsyms=/proc/kallsyms --sort dso --stdio \
		2>/dev/null | awk -v m="[$2]" '
		/%/ { p = $1 + 0; if ($2 == m) d += p; else if ($2 ~ /^\[/) k += p; else u += p }
		END { printf "share: %s %.1f %%, other kernel %.1f %%, user %.1f %%\n", m, d, k, u }'
}

port=19100
for drv in rroce rxe; do
	driver_up $drv || exit 1
	if [ "$TOOL" = nvmeof ]; then
		nvmeof $drv || exit 1
		shares $drv "$([ $drv = rxe ] && echo rdma_rxe || echo rroce)" >>"$RROCE_SHARED/out.$drv"
	else
		perftest $drv || exit 1
	fi
	# Client and server share the device: its counters are both ends'.
	link_stats $DEV >"$RROCE_SHARED/stats.$drv"
	# The symbols as loaded, for `perf report --kallsyms` on the host.
	cp /proc/kallsyms "$RROCE_SHARED/kallsyms.$drv"
	perf report -q -n --no-children -g none -i "$RROCE_SHARED/perf.$drv" --kallsyms=/proc/kallsyms \
		--sort sym --stdio 2>/dev/null |
		grep -v '^$' >"$RROCE_SHARED/report.$drv"
	driver_down $drv
done
