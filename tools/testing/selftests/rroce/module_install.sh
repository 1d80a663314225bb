#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install puts rroce.ko in the kernel's module tree and runs depmod;
# then `rdma link add ... type rroce` loads it, with the modules it depends
# on, through its alias (rdma-link-rroce), with nothing loaded beforehand,
# and the device carries a pingpong. The VM's /lib/modules is read-only:
# the test installs into a writable layer over it.

. "$(dirname "$0")/lib.sh"
in_vm || kdir=${KDIR:-$("$REPO/scripts/kernel.sh" dir)}
vm_main 1 "$kdir"
kdir=$1

require_cmd make depmod ibv_rc_pingpong rdma
ktap_plan 5

mods=/lib/modules/$(uname -r)
mkdir -p /tmp/modlayer && mount -t tmpfs tmpfs /tmp/modlayer &&
	mkdir /tmp/modlayer/upper /tmp/modlayer/work &&
	mount -t overlay overlay -o lowerdir=/lib/modules,upperdir=/tmp/modlayer/upper,workdir=/tmp/modlayer/work /lib/modules ||
	ktap_skip_all "no writable layer over /lib/modules"

run make -C "$REPO" install KDIR="$kdir" &&
	[ -f "$mods/updates/rroce.ko" ] && modinfo -n rroce | grep -q "^$mods/updates/rroce.ko"
ktap_result $? "make install: $mods/updates/rroce.ko, known to depmod"

! grep -Eq '^(rroce|udp_tunnel|ip6_udp_tunnel) ' /proc/modules
ktap_result $? "neither rroce nor its dependencies are loaded"

modprobe -a ib_core ib_uverbs rdma_ucm
rdma link add rroce0 type rroce netdev eth0 && grep -q '^rroce ' /proc/modules
ktap_result $? "rdma link add ... type rroce loads rroce with its dependencies"

gid=$(gid_index rroce0 "$RROCE_IP4")
timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18910 -n 100 -s 4096 -c >/tmp/server 2>&1 &
pid=$!
wait_listen 18910 && run timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18910 -n 100 -s 4096 -c 127.0.0.1 &&
	wait $pid && grep -q "iters in" /tmp/server
ktap_result $? "rc_pingpong with data checks over the installed module"

rdma link delete rroce0 && modprobe -r rroce
ktap_result $? "delete the device and unload"
ktap_finish
