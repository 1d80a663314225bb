#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The VM harness itself: a clean run passes, and a run fails when a VM's
# command fails or when a VM's kernel logs a WARN, so a broken VM can never
# look green; nor can a test that stops before its plan's last result.
# The WARN is a real one, from lkdtm.

. "$(dirname "$0")/lib.sh"

if in_vm; then
	case "$1" in
	pass) exit 0 ;;
	fail) exit 3 ;;
	warn)
		modprobe lkdtm || exit $KSFT_SKIP
		echo WARNING >/sys/kernel/debug/provoke-crash/DIRECT
		exit 0
		;;
	pair) if [ "$RROCE_VM" = 1 ]; then exec "$0" fail; else exec "$0" warn; fi ;;
	short)
		ktap_plan 2
		ktap_ok "the first of two"
		ktap_finish
		;;
	esac
	exit 1
fi

vm() { "$REPO/scripts/vm.sh" -t 60 -o "$KSFT_OUT/$1" -- "$0" "$@" >"$KSFT_OUT/$1.log" 2>&1; }
KSFT_OUT=${KSFT_OUT:-$(mktemp -d)}
mkdir -p "$KSFT_OUT"
ktap_plan 5

vm pass
ktap_result $? "a clean VM passes"

"$REPO/scripts/vm.sh" -n 2 -t 60 -o "$KSFT_OUT/pair" -- "$0" pair >"$KSFT_OUT/pair.log" 2>&1
status=$?
grep -E 'vm[12]: (the|no)|^#     ' "$KSFT_OUT/pair.log" | sed 's/^/#   /'
[ $status != 0 ]
ktap_result $? "a failing VM fails the run (status $status)"
grep -q 'vm1: the command exited with status 3' "$KSFT_OUT/pair.log"
ktap_result $? "the verdict names the VM and its exit status"
grep -q 'vm2: the kernel log is not clean' "$KSFT_OUT/pair.log" &&
	grep -Eq '^#     .*WARNING: CPU' "$KSFT_OUT/pair.log"
ktap_result $? "a WARN in dmesg fails the run and is quoted"
vm short
status=$?
grep -E 'planned' "$KSFT_OUT/short.log" | sed 's/^/#   /'
[ $status != 0 ] && grep -q 'planned 2 results, reported 1' "$KSFT_OUT/short.log"
ktap_result $? "a test that reports fewer results than it planned fails (status $status)"
ktap_finish
