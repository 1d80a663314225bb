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
writable_modules

run make -C "$REPO" install KDIR="$kdir" &&
	[ -f "$mods/updates/rroce.ko" ] && modinfo -n rroce | grep -q "^$mods/updates/rroce.ko"
ktap_result $? "make install: $mods/updates/rroce.ko, known to depmod"

! grep -Eq '^(rroce|udp_tunnel|ip6_udp_tunnel) ' /proc/modules
ktap_result $? "neither rroce nor its dependencies are loaded"

installed_link_up "rroce with its dependencies"

rdma link delete rroce0 && modprobe -r rroce
ktap_result $? "delete the device and unload"
ktap_finish
