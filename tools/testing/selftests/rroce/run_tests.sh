#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs rroce selftests on the host and prints KTAP, then one closing line
# "N passed, N failed, N skipped".  Exits non-zero if any test failed.
#
#   run_tests.sh [TEST...]     default: every test in the Makefile's TEST_PROGS

set -uo pipefail
cd "$(dirname "$0")"
. ../../../../scripts/env.sh

tests=("$@")
[ ${#tests[@]} -gt 0 ] || read -r -a tests < <(make -s list)

runs=$RROCE_CACHE/runs
mkdir -p "$runs"
find "$runs" -mindepth 1 -maxdepth 1 -mtime +7 -exec rm -rf {} + 2>/dev/null
run=$(mktemp -d "$runs/$(date +%Y%m%d-%H%M%S).XXXX")

echo "TAP version 13"
echo "1..${#tests[@]}"
passed=0 failed=0 skipped=0 n=0 failures=()
for test in "${tests[@]}"; do
	n=$((n + 1))
	name=${test%.sh}
	echo "# selftests: rroce: $name"
	start=$SECONDS
	KSFT_OUT=$run/$name "./$test" >"$run/$name.log" 2>&1
	status=$?
	# Everything a test prints is a KTAP diagnostic at this level.
	sed 's/^#*/#/; s/^#\([^ ]\)/# \1/' "$run/$name.log"
	case $status in
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
		echo "not ok $n $name # exit=$status"
		failures+=("$name: $(grep -E '^# (vm[0-9]*: (the|no)|    )|^not ok' "$run/$name.log" | head -n 12 | tr '\n' '|' | sed 's/|$//; s/|/\n    /g')")
		;;
	esac
	echo "# $name: $((SECONDS - start)) s"
done

if [ $failed -gt 0 ]; then
	echo "# Failed tests (logs in $run):"
	for f in "${failures[@]}"; do printf '#   %s\n' "$f"; done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
