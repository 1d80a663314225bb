#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a test VM booted by scripts/vm.sh.  The root file system is the
# host's, read-only over 9p; this puts a writable in-memory overlay on it,
# mounts the output directory at its host path and the test kernel's modules
# on /lib/modules, sets up the test link, runs the job, saves its status and
# dmesg, and powers off.  The kernel passes RROCE_VM (this VM's
# index), RROCE_OUT (the output directory) and RROCE_SLOWDOWN (how many
# times the time limits were stretched) as environment variables.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-linux}

# Stage 1: make the read-only root writable with an overlay whose changes
# live in memory, and continue inside it.  The host's files stay untouched.
if [ "$1" != stage2 ]; then
	mount -t tmpfs -o mode=0755 tmpfs /run
	mkdir -p /run/overlay/upper /run/overlay/work /run/overlay/root
	mount -t overlay overlay \
		-o lowerdir=/,upperdir=/run/overlay/upper,workdir=/run/overlay/work /run/overlay/root
	exec chroot /run/overlay/root "$0" stage2
fi

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# What udev makes on a booted system, and bash's process substitution
# (<(...)) opens.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /lib/modules
mount -t 9p -o trans=virtio,version=9p2000.L,ro modules /lib/modules
# The output directory is the one writable window onto the host.
mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 out "$RROCE_OUT"
. "$RROCE_OUT/job"

hostname "vm$RROCE_VM"
ip link set lo up
# The test link is the NIC with our MAC; call it eth0 whatever the kernel named it.
for nic in /sys/class/net/*; do
	if [ "$(cat "$nic/address")" = "$RROCE_MAC" ]; then
		name=${nic##*/}
		[ "$name" = eth0 ] || ip link set "$name" name eth0
	fi
done
ip addr add "$RROCE_IP4/24" dev eth0
ip addr add "$RROCE_IP6/64" dev eth0 nodad
ip link set eth0 up

# Leaks from before the job (boot) are not the job's: find them now and mark
# them reported, so that the scan after the job shows only new ones.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	echo clear >/sys/kernel/debug/kmemleak
fi

log="$RROCE_OUT/vm$RROCE_VM"
cd "$RROCE_CWD" 2>/dev/null || cd "$RROCE_REPO"
if [ -n "$RROCE_SHELL" ]; then
	echo "rroce test VM $RROCE_VM: eth0 $RROCE_IP4 $RROCE_IP6; exit the shell to power off"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
	status=$?
else
	timeout -k 5 "$RROCE_TIMEOUT" "${RROCE_CMD[@]}" >"$log.log" 2>&1 </dev/null
	status=$?
	if [ $status = 124 ]; then
		echo "vm-init: the command timed out after $RROCE_TIMEOUT s" >>"$log.log"
		# What was stuck: the processes left, and the blocked tasks'
		# stacks in the kernel log.
		ps -eo pid,stat,wchan:32,args >>"$log.log" 2>&1
		echo w >/proc/sysrq-trigger
	fi
fi

# kmemleak reports an object only once it has stayed unreferenced across two
# scans a few seconds apart.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >"$log.kmemleak"
fi
dmesg >"$log.dmesg"
echo $status >"$log.status"
sync
echo o >/proc/sysrq-trigger
sleep 10
