#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load, add a device, open it, delete it, unload: many times over, leaving
# no more slab objects behind than the C rxe does for the same cycle, and,
# through the harness, a clean dmesg.
#
# Slab counts are noisy: small kmalloc caches swing by a hundred objects
# either way between identical rounds, for rxe as for rroce. The check
# therefore looks at the caches of 512 bytes and more, where a device, a
# user context or a PD lands and where the noise is a few objects; kmemleak
# on the debug kernel is the exact check for everything else.

. "$(dirname "$0")/lib.sh"
vm_main 1

# 30 rounds; 10 on the debug kernel, where kmemleak is the exact check and
# 30 rounds of both drivers took 1043 s of its 1200.
ROUNDS=$((SLOWDOWN > 1 ? 10 : 30))
require_cmd rdma ibv_devinfo
ktap_plan 3

cycle_rroce() {
	load_rroce &&
		rdma link add rroce0 type rroce netdev eth0 &&
		ibv_devinfo -d rroce0 >/dev/null &&
		rdma link delete rroce0 &&
		rmmod rroce
}

cycle_rxe() {
	modprobe rdma_rxe &&
		rdma link add rxe0 type rxe netdev eth0 &&
		ibv_devinfo -d rxe0 >/dev/null &&
		rdma link delete rxe0 &&
		rmmod rdma_rxe
}

# active_objs of the large kmalloc caches, as "name count", after the
# per-CPU slabs are flushed so that freed objects stop counting.
slabs() {
	local cache
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for cache in /sys/kernel/slab/kmalloc-*; do echo 1 >"$cache/shrink"; done
	awk 'NR > 2 && $1 ~ /^kmalloc-([0-9]+k|512)$/ { print $1, $2 }' /proc/slabinfo | sort
}

# growth KIND: run ROUNDS cycles of KIND after two to warm up, and print
# "cache growth" for each cache.
growth() {
	local i
	"cycle_$1" && "cycle_$1" || return 1
	slabs >"/tmp/slabs.$1.before"
	for i in $(seq $ROUNDS); do "cycle_$1" || return 1; done
	slabs >"/tmp/slabs.$1.after"
	join "/tmp/slabs.$1.before" "/tmp/slabs.$1.after" | awk '{ print $1, $3 - $2 }' >"/tmp/growth.$1"
}

growth rroce
ktap_result $? "$ROUNDS rounds of load, add, open, delete, unload of rroce"
growth rxe
ktap_result $? "the same with the C rxe, for comparison"

# A leak adds at least one object per round; the counts move a slab
# (8 objects of 1 KiB, say) at a time, and noise is a slab or two.
join /tmp/growth.rroce /tmp/growth.rxe | awk '{ printf "#   %s: rroce %+d, rxe %+d\n", $1, $2, $3 }'
grown=$(join /tmp/growth.rroce /tmp/growth.rxe |
	awk -v n=$((ROUNDS / 2)) '$2 - ($3 > 0 ? $3 : 0) >= n { print $1, "+" $2, "(rxe +" $3 ")" }')
[ -z "$grown" ] || echo "$grown" | sed 's/^/#   grew: /'
[ -z "$grown" ]
ktap_result $? "no kmalloc cache of 512 bytes or more grew by $((ROUNDS / 2)) objects more than with rxe"
ktap_finish
