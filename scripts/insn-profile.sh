#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Exactly how many guest instructions each kernel function executes per
# message, for rroce and the C rdma_rxe. perftest's TOOL runs on one device
# in one VM with one vCPU under -icount (as `make bench`'s first stage, but
# with sleep=on: a guest waiting for its 9p root then waits in real time
# instead of jumping its clock into the tools' timeouts; busy, it runs the
# same). Per driver, a first run warms the caches; then a run of SHORT and
# one of LONG iterations. A QEMU plugin (insn_count.c) counts the
# instructions of every translation block, and the guest calls sync(2)
# around each run to have the counts written. What the long run executed
# beyond the short one, divided by the messages it added, is the steady
# state's cost per message, set-up and teardown cancelled out. Unlike
# scripts/profile.sh's samples, the counts have no skid and do not alias
# with the workload's period: a change of a few instructions per message
# shows.
#
#   scripts/insn-profile.sh [TOOL [SIZE [SHORT [LONG]]]]
#                           default: ib_send_bw 64 10000 50000
#
# TOOL nvmeof counts fio's SIZE-byte random reads over NVMe-oF instead,
# target and host on the one device, 16 in flight: SHORT and LONG are then
# numbers of reads (a message is a read); nvmeof-write, sequential writes.
#
# Prints, per driver, the instructions per message by where they ran (the
# driver, the rest of the kernel, user space), by kernel module, and its
# costliest functions. The counts stay in the output directory: with a
# module built with debug information (make KRUSTFLAGS=-Cdebuginfo=1),
# `scripts/insn-report.py DIR MESSAGES 40 --lines rroce.ko` also gives
# rroce's costliest source lines, and `... --in FUNCTION` those of one
# function, by the calls inlined into it.

. "$(dirname "$0")/../tools/testing/selftests/rroce/lib.sh"

TOOL=${1:-ib_send_bw}
SIZE=${2:-64}
SHORT=${3:-10000}
LONG=${4:-50000}

if ! in_vm; then
	base=${RROCE_CACHE:-$HOME/.cache/rroce}
	mkdir -p "$base"
	out=$(mktemp -d "$base/insn-profile.XXXXXX")
	kdir=${KDIR:-$("$REPO/scripts/kernel.sh" dir)}
	cc -O2 -shared -fPIC -o "$out/insn_count.so" "$REPO/scripts/insn_count.c" || exit 1
	trigger=$(awk '$3 == "ksys_sync" { print $1 }' "$kdir/System.map")
	[ -n "$trigger" ] || { echo "insn-profile: no ksys_sync in $kdir/System.map" >&2; exit 1; }
	RROCE_QEMU_OPTS="-icount shift=0,sleep=on -plugin file=$out/insn_count.so,trigger=$trigger,out=$out/count" \
		RROCE_VM_SMP=1 RROCE_KPARAMS=nokaslr \
		"$REPO/scripts/vm.sh" -n 1 -q -t 1800 -o "$out" -- "$0" "$TOOL" "$SIZE" "$SHORT" "$LONG"
	status=$?
	python3 "$REPO/scripts/insn-report.py" "$out" $((LONG - SHORT)) || status=1
	echo "insn-profile: counts in $out"
	exit $status
fi

# workload DRIVER ITERATIONS: one perftest run, client and server on the
# device, or ITERATIONS reads or writes by fio over NVMe-oF. (Not `run`:
# lib.sh's run shows a command's output.)
workload() {
	local gid
	if [ -n "$FIO_RW" ]; then
		fio --name="$FIO_RW" --filename="$NS" --direct=1 --ioengine=libaio --rw="$FIO_RW" \
			--bs="$SIZE" --iodepth=16 --size=64m --io_size=$(($2 * SIZE)) \
			>>"$RROCE_SHARED/out.$1" 2>&1
		return
	fi
	gid=$(gid_index $DEV "$RROCE_IP4") || return 1
	port=$((port + 1))
	"$TOOL" -d $DEV -x "$gid" -p $port -F -s "$SIZE" -n "$2" >/dev/null 2>&1 &
	wait_listen $port || return 1
	"$TOOL" -d $DEV -x "$gid" -p $port -F -s "$SIZE" -n "$2" 127.0.0.1 >>"$RROCE_SHARED/out.$1" 2>&1
	wait
}

# latest: the number of the newest count dump, which the host wrote when the
# guest last called sync(2).
latest() {
	local f n=0
	for f in "$RROCE_SHARED"/count.*; do
		f=${f##*.}
		[ "$f" -gt "$n" ] 2>/dev/null && n=$f
	done
	echo "$n"
}

port=19100
FIO_RW=
case $TOOL in
nvmeof) FIO_RW=randread ;;
nvmeof-write) FIO_RW=write ;;
esac
[ -n "$FIO_RW" ] && . "$SELFTESTS_DIR/nvmeof.sh"
for drv in rroce rxe; do
	driver_up $drv || exit 1
	if [ -n "$FIO_RW" ]; then
		target_up && TRADDR=$RROCE_IP4 host_connect || exit 1
	fi
	# A first run, not counted: what only the first run does (reading the
	# tool from the 9p root, seeding random numbers) would count against
	# the short run.
	workload $drv "$SHORT" || exit 1
	for phase in short long; do
		sync
		workload $drv "$([ $phase = short ] && echo "$SHORT" || echo "$LONG")" || exit 1
		sync
		echo "$drv $phase $(latest)" >>"$RROCE_SHARED/dumps"
	done
	cp /proc/kallsyms "$RROCE_SHARED/kallsyms.$drv"
	if [ -n "$FIO_RW" ]; then
		host_disconnect
		target_down
	fi
	driver_down $drv
done
