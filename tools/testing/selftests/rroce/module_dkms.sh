#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS, as users install out-of-tree drivers (dkms.conf): on the host,
# `dkms add` and `dkms build` of this tree against the test kernel's build
# tree, in a DKMS tree of the test's own; in the VM, `dkms install` puts
# rroce.ko in the kernel's module tree (updates/dkms) and runs depmod, then
# `rdma link add ... type rroce` loads it and the device carries a pingpong;
# `dkms remove` takes it out again. The VM's /lib/modules is read-only: the
# test installs into a writable layer over it.

. "$(dirname "$0")/lib.sh"
if ! in_vm; then
	require_cmd dkms
	kdir=${KDIR:-$("$REPO/scripts/kernel.sh" dir)}
	kver=$(cat "$kdir/include/config/kernel.release")
	work=${XDG_CACHE_HOME:-$HOME/.cache}/rroce/dkms-test-$(basename "$kdir")
	# Another checkout's run of this test takes its turn: the lock is held
	# through the exec into the VM, until the test ends.
	mkdir -p "$(dirname "$work")" && exec {dkms_lock}>"$work.lock" && flock "$dkms_lock" || exit 1
	rm -rf "$work" && mkdir -p "$work/src/rroce-0.1" "$work/tree" || exit 1
	# The tree as it is checked out, tracked files only, as a user copies it.
	git -C "$REPO" ls-files -z | (cd "$REPO" && xargs -0 cp --parents -t "$work/src/rroce-0.1")
	dkms=(-m rroce -v 0.1 -k "$kver" --dkmstree "$work/tree" --sourcetree "$work/src")
	dkms add "${dkms[@]}" >"$work/add.log" 2>&1 &&
		dkms build "${dkms[@]}" --kernelsourcedir "$kdir" >"$work/build.log" 2>&1
	built=$?
	[ $built = 0 ] || tail -20 "$work/build.log" "$work"/tree/rroce/0.1/build/make.log 2>/dev/null | sed 's/^/# /'
fi
vm_main 1 "$work" "$built"
work=$1 built=$2

require_cmd dkms depmod ibv_rc_pingpong rdma
ktap_plan 6

[ "$built" = 0 ] && [ -f "$work/tree/rroce/0.1/$(uname -r)/x86_64/module/rroce.ko" ]
ktap_result $? "dkms add and build on the host, for $(uname -r)"

mods=/lib/modules/$(uname -r)
writable_modules
# DKMS records what it installed in its tree: a writable copy of it.
cp -a "$work/tree" /tmp/dkms-tree
dkms=(-m rroce -v 0.1 -k "$(uname -r)" --dkmstree /tmp/dkms-tree --sourcetree "$work/src")

run dkms install "${dkms[@]}" &&
	modinfo -n rroce | grep -q "^$mods/updates/dkms/rroce.ko" &&
	dkms status -m rroce --dkmstree /tmp/dkms-tree | grep -q installed
ktap_result $? "dkms install: $mods/updates/dkms/rroce.ko, known to depmod and dkms"

installed_link_up "the DKMS module"

rdma link delete rroce0 && modprobe -r rroce
ktap_result $? "delete the device and unload"

run dkms remove "${dkms[@]}" && ! modinfo -n rroce >/dev/null 2>&1
ktap_result $? "dkms remove: the module is gone from the module tree"
ktap_finish
