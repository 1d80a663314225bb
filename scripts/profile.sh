#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where rroce and the C rdma_rxe spend their instructions: one perftest run
# per driver in one VM under QEMU's -icount with one vCPU (as `make bench`'s
# first stage), sampled by perf's cpu-clock, whose clock then counts guest
# instructions. Prints each driver's hottest kernel symbols.
#
#   scripts/profile.sh [TOOL [SIZE [ITERATIONS]]]   default: ib_write_bw 65536 300
#
# perf comes from the host (linux-perf), which the VM sees as its root.

. "$(dirname "$0")/../tools/testing/selftests/rroce/lib.sh"

TOOL=${1:-ib_write_bw}
SIZE=${2:-65536}
ITERS=${3:-300}

if ! in_vm; then
	command -v perf >/dev/null || { echo "profile: needs perf (apt-get install linux-perf)" >&2; exit 1; }
	base=${RROCE_CACHE:-$HOME/.cache/rroce}
	mkdir -p "$base"
	out=$(mktemp -d "$base/profile.XXXXXX")
	RROCE_QEMU_OPTS="-icount shift=0,sleep=off" RROCE_VM_SMP=1 \
		"$REPO/scripts/vm.sh" -n 1 -q -t 1800 -o "$out" -- "$0" "$TOOL" "$SIZE" "$ITERS"
	status=$?
	for drv in rroce rxe; do
		echo
		echo "$drv: $TOOL -s $SIZE -n $ITERS, share and count of samples by symbol:"
		head -n 40 "$out/report.$drv" 2>/dev/null || echo "(none)"
		echo "$drv: counters: $(cat "$out/stats.$drv" 2>/dev/null)"
		echo "$drv: result: $(grep -E '^ *[0-9]+ +[0-9]+ ' "$out/out.$drv" 2>/dev/null | tail -n 1)"
	done
	echo "profile: perf data and full reports in $out"
	exit $status
fi

port=19100
for drv in rroce rxe; do
	driver_up $drv || exit 1
	gid=$(gid_index $DEV "$RROCE_IP4") || exit 1
	port=$((port + 1))
	cmd=("$TOOL" -d $DEV -x "$gid" -p $port -F -s "$SIZE" -n "$ITERS")
	"${cmd[@]}" >/dev/null 2>&1 &
	wait_listen $port || exit 1
	perf record -q -e cpu-clock -a -o "$RROCE_SHARED/perf.$drv" -- "${cmd[@]}" 127.0.0.1 \
		>"$RROCE_SHARED/out.$drv" 2>&1
	wait
	# Client and server share the device: its counters are both ends'.
	link_stats $DEV >"$RROCE_SHARED/stats.$drv"
	perf report -q -n -i "$RROCE_SHARED/perf.$drv" --kallsyms=/proc/kallsyms --sort sym --stdio 2>/dev/null |
		grep -v '^$' >"$RROCE_SHARED/report.$drv"
	driver_down $drv
done
