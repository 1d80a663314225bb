# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics between the two VMs, for kernel_nvmeof.sh and make
# bench: the target (nvmet-rdma, a memory-backed null_blk namespace) in
# VM 1, the host (nvme-rdma) in VM 2. Sourced after lib.sh.

NQN=nqn.2026-11.dev.rroce:test
CFS=/sys/kernel/config/nvmet

# target_up: export /dev/nullb0 as $NQN on port 4420 of our address;
# nvmet-rdma posts its receives to shared receive queues if USE_SRQ=1.
target_up() {
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 &&
		modprobe nvmet-rdma use_srq=${USE_SRQ:-0} || return 1
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

# host_connect: connect to the target in VM 1 (or at TRADDR), with
# POLL_QUEUES polled queues if set and NVME_OPTS (",option=value...")
# added, and put the namespace's block device in NS.
host_connect() {
	local i
	modprobe nvme-rdma || return 1
	# The keep-alive timeout (5 s by default) stretches on slow kernels:
	# the debug kernel's target missed it after a reconnect. So does a
	# command's (30 s), after which the host drops the connection and
	# makes it again.
	echo $((30 * ${SLOWDOWN:-1})) >/sys/module/nvme_core/parameters/io_timeout
	echo "transport=rdma,traddr=${TRADDR:-$(peer_ip4)},trsvcid=4420,nqn=$NQN${POLL_QUEUES:+,nr_poll_queues=$POLL_QUEUES},keep_alive_tmo=$((5 * ${SLOWDOWN:-1}))${NVME_OPTS:-}" \
		>/dev/nvme-fabrics || return 1
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
