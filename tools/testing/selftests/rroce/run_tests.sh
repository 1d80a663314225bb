#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs rroce selftests on the host and prints KTAP, then one closing line
# "N passed, N failed, N skipped".  Exits non-zero if any test failed.
#
#   run_tests.sh [TEST...]     default: every test in the Makefile's TEST_PROGS
#
# Each VM is one emulated CPU, so tests run side by side as long as their VMs
# fit in RROCE_JOBS CPUs (default: the host's): on two CPUs, two one-VM tests
# at once, a two-VM test alone.  A test that does not fit waits, and a later
# one that fits may start before it; results are printed in the given order.

set -uo pipefail
cd "$(dirname "$0")"
. ../../../../scripts/env.sh

tests=("$@")
[ ${#tests[@]} -gt 0 ] || read -r -a tests < <(make -s list)

runs=$RROCE_CACHE/runs
mkdir -p "$runs"
find "$runs" -mindepth 1 -maxdepth 1 -mtime +7 -exec rm -rf {} + 2>/dev/null
run=$(mktemp -d "$runs/$(date +%Y%m%d-%H%M%S).XXXX")

cpus=${RROCE_JOBS:-$(nproc)}
[ "$cpus" -ge 1 ] 2>/dev/null || cpus=1

# vms_of TEST: how many VMs TEST boots at once: its vm_main's count, else 2.
vms_of() {
	local n
	n=$(sed -n 's/^vm_main \([12]\)\b.*/\1/p' "$1" | head -n 1)
	n=${n:-2}
	echo $((n < cpus ? n : cpus))
}

# start I: run test I in the background, its output in $run/NAME.log.
start() {
	local name=${tests[$1]%.sh}
	started[$1]=$SECONDS
	KSFT_OUT=$run/$name "./${tests[$1]}" >"$run/$name.log" 2>&1 &
	index_of[$!]=$1
	free=$((free - need[$1]))
}

# report I: test I's KTAP lines, once it has ended.
report() {
	local name=${tests[$1]%.sh} n=$(($1 + 1))
	echo "# selftests: rroce: $name"
	# Everything a test prints is a KTAP diagnostic at this level.
	sed 's/^#*/#/; s/^#\([^ ]\)/# \1/' "$run/$name.log"
	case ${status[$1]} in
	0)
		passed=$((passed + 1))
		echo "ok $n $name"
		;;
	4)
		skipped=$((skipped + 1))
		echo "ok $n $name # SKIP"
		;;
	*)
		failed=$((failed + 1))
		echo "not ok $n $name # exit=${status[$1]}"
		failures+=("$name: $(grep -E '^# (vm[0-9]*: (the|no)|    )|^not ok' "$run/$name.log" | head -n 12 | tr '\n' '|' | sed 's/|$//; s/|/\n    /g')")
		;;
	esac
	echo "# $name: ${took[$1]} s"
}

echo "TAP version 13"
echo "1..${#tests[@]}"
passed=0 failed=0 skipped=0 failures=()
need=() started=() took=() status=() index_of=() waiting=()
for i in "${!tests[@]}"; do
	need[i]=$(vms_of "${tests[$i]}")
	waiting+=("$i")
done
free=$cpus reported=0
while [ $reported -lt ${#tests[@]} ]; do
	left=()
	for i in "${waiting[@]}"; do
		if [ "${need[$i]}" -le $free ]; then start "$i"; else left+=("$i"); fi
	done
	waiting=("${left[@]}")
	wait -n -p pid
	code=$?
	[ -n "${pid:-}" ] || { echo "Bail out! lost track of the running tests"; exit 1; }
	i=${index_of[$pid]:-}
	[ -n "$i" ] || continue
	status[i]=$code
	took[i]=$((SECONDS - started[i]))
	free=$((free + need[i]))
	while [ $reported -lt ${#tests[@]} ] && [ -n "${status[$reported]:-}" ]; do
		report $reported
		reported=$((reported + 1))
	done
done

if [ $failed -gt 0 ]; then
	echo "# Failed tests (logs in $run):"
	for f in "${failures[@]}"; do printf '#   %s\n' "$f"; done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
