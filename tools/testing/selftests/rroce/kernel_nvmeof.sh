#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics, a kernel RDMA user, over rroce: the target (nvmet-rdma,
# a memory-backed null_blk namespace) in VM 1, the host (nvme-rdma) in VM 2.
# The host connects through rdma_cm and registers its I/O buffers with fast
# registration (alloc_mr, map_mr_sg, IB_WR_REG_MR, LOCAL_INV or the
# target's SEND with Invalidate); the target reads and writes them with
# RDMA READ and WRITE.  fio writes 64 MiB of random data with O_DIRECT in
# sizes from 4 KiB to 1 MiB from four jobs at once, then reads it back and
# checks every block.  Rounds: rroce on both sides, then the target on the
# C rdma_rxe with the host on rroce, then the reverse.

. "$(dirname "$0")/lib.sh"
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2

require_cmd fio rdma
ktap_plan 12

NQN=nqn.2026-11.dev.rroce:test
CFS=/sys/kernel/config/nvmet

# target_up: export /dev/nullb0 as $NQN on port 4420 of our address.
target_up() {
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 &&
		modprobe nvmet-rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir $CFS/subsystems/$NQN &&
		echo 1 >$CFS/subsystems/$NQN/attr_allow_any_host &&
		mkdir $CFS/subsystems/$NQN/namespaces/1 &&
		echo -n /dev/nullb0 >$CFS/subsystems/$NQN/namespaces/1/device_path &&
		echo 1 >$CFS/subsystems/$NQN/namespaces/1/enable &&
		mkdir $CFS/ports/1 &&
		echo rdma >$CFS/ports/1/addr_trtype &&
		echo ipv4 >$CFS/ports/1/addr_adrfam &&
		echo "$RROCE_IP4" >$CFS/ports/1/addr_traddr &&
		echo 4420 >$CFS/ports/1/addr_trsvcid &&
		ln -s $CFS/subsystems/$NQN $CFS/ports/1/subsystems/$NQN
}

# target_down: the configuration undone in reverse, the modules unloaded.
target_down() {
	rm -f $CFS/ports/1/subsystems/$NQN
	rmdir $CFS/ports/1
	echo 0 >$CFS/subsystems/$NQN/namespaces/1/enable
	rmdir $CFS/subsystems/$NQN/namespaces/1 $CFS/subsystems/$NQN
	modprobe -r nvmet-rdma nvmet && rmmod null_blk
}

# host_connect: connect to the target in VM 1, and put the namespace's
# block device in NS.
host_connect() {
	local i
	modprobe nvme-rdma || return 1
	echo "transport=rdma,traddr=$(peer_ip4),trsvcid=4420,nqn=$NQN" >/dev/nvme-fabrics ||
		return 1
	for i in $(seq 60); do
		for NS in /dev/nvme*n1; do
			[ -b "$NS" ] && return 0
		done
		sleep 1
	done
	return 1
}

# host_disconnect: delete every fabrics controller, unload the host.
host_disconnect() {
	local ctrl
	for ctrl in /sys/class/nvme/nvme*; do
		[ -e "$ctrl/delete_controller" ] && echo 1 >"$ctrl/delete_controller"
	done
	modprobe -r nvme-rdma nvme-fabrics
}

# round TARGET_DRIVER HOST_DRIVER: one connection, 64 MiB through it.
round() {
	local mine=$1 dev
	[ "$RROCE_VM" = 2 ] && mine=$2
	driver_up $mine
	ktap_result $? "$DEV on eth0 (target: $1, host: $2)"
	dev=$DEV
	if [ "$RROCE_VM" = 1 ]; then
		target_up
		ktap_result $? "target: $NQN on $RROCE_IP4:4420 over $dev"
		vm_signal "target-$1-$2"
		vm_wait "host-done-$1-$2"
		# 64 MiB read from the host, in RDMA READ responses of at most
		# 4 KiB: at least 16384 packets arrived.
		[ "$(link_counter $dev rcvd_pkts)" -ge 16384 ]
		ktap_result $? "target: $(link_counter $dev rcvd_pkts) packets received"
		target_down
		ktap_result $? "target: taken down after the host left"
	else
		vm_wait "target-$1-$2" && host_connect
		ktap_result $? "host: connected over $dev"
		run timeout 600 fio --name=rroce --filename="$NS" --direct=1 \
			--ioengine=psync --rw=write --bsrange=4k-1m \
			--size=16m --numjobs=4 --offset_increment=16m \
			--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
			--group_reporting
		ktap_result $? "host: 64 MiB written in 4 KiB..1 MiB pieces by 4 jobs, read back, every block checked"
		host_disconnect
		ktap_result $? "host: disconnected"
		vm_signal "host-done-$1-$2"
	fi
	show_link_stats $dev
	driver_down $mine
	vm_signal "unloaded-$1-$2" && vm_wait "unloaded-$1-$2"
}

round rroce rroce
round rxe rroce
round rroce rxe
ktap_finish
