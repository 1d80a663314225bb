#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rroce.ko loads and unloads ten times, logging each time, and leaves no
# trace: not in lsmod, not in dmesg (the harness fails on any warning).

. "$(dirname "$0")/lib.sh"
vm_main 1

ROUNDS=10
ktap_plan 3
if [ ! -f "$RROCE_KO" ]; then
	ktap_fail "rroce.ko is not built: run make"
	ktap_finish
fi
modprobe -a ib_core ib_uverbs || ktap_skip_all "the RDMA core modules do not load"

ok=0
for i in $(seq $ROUNDS); do
	load_rroce || break
	rmmod rroce || break
	ok=$i
done
[ $ok = $ROUNDS ]
ktap_result $? "insmod and rmmod $ROUNDS times ($ok succeeded)"

loaded=$(dmesg | grep -c 'rroce: loaded')
unloaded=$(dmesg | grep -c 'rroce: unloading')
[ "$loaded" = $ROUNDS ] && [ "$unloaded" = $ROUNDS ]
ktap_result $? "each load and unload logged once ($loaded loads, $unloaded unloads)"

! grep -q '^rroce ' /proc/modules
ktap_result $? "no rroce module left"
ktap_finish
