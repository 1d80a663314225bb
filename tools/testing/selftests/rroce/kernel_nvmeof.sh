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
# checks every block.  Rounds: rroce on both sides (the target's receives
# on kernel SRQs, the host with a polled queue too), then the target on the
# C rdma_rxe with the host on rroce, then the reverse; then rroce on both
# sides over a link that loses and reorders (16 MiB); then the life cycle:
# the target's module removed under a live controller, which reconnects to
# a fresh device, then the host's device deleted under it, each in bounded
# time and without a kernel report.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nvmeof.sh"
VM_TIMEOUT=${VM_TIMEOUT:-900}
vm_main 2

# The debug kernel moved 64 MiB at 143 KiB/s here, beside other VMs: on it
# (RROCE_SLOWDOWN=4) each round moves a quarter of the data, in time limits
# four times as long.

require_cmd fio tc rdma
modprobe sch_netem || ktap_skip_all "no sch_netem"
ktap_plan $((RROCE_VM == 1 ? 23 : 24))

BAD_LINK="delay 1ms reorder 10% 50% loss 1%"

# write_check MIB: fio writes MIB MiB to the namespace in 4 KiB..1 MiB
# pieces from 4 jobs, reads it back and checks every block.
write_check() {
	timeout $((600 * SLOWDOWN)) fio --name=rroce --filename="$NS" --direct=1 \
		--ioengine=psync --rw=write --bsrange=4k-1m \
		--size=$(($1 * 256))k --numjobs=4 --offset_increment=$(($1 * 256))k \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fio.out 2>&1 && return
	grep -v "multiple writers" /tmp/fio.out | tail -5 | sed 's/^/#   /'
	return 1
}

# poll_qid: the NVMe queue id of the host's polled queue: blk-mq numbers
# its hardware contexts from 0, nvme-rdma its I/O queues from 1.
poll_qid() {
	local type hctx
	for type in /sys/kernel/debug/block/nvme*/hctx*/type; do
		[ "$(cat "$type")" = poll ] || continue
		hctx=${type%/type}
		echo $((${hctx##*hctx} + 1))
		return
	done
	return 1
}

# polled_check MIB: MIB MiB written and checked with polled I/O (io_uring
# with IORING_SETUP_IOPOLL; in 6.12 a synchronous RWF_HIPRI does not
# poll), in 4 KiB..64 KiB pieces, 4 at a time. The commands go to the
# polled queue, whose CQ nvme-rdma polls directly (IB_POLL_DIRECT): nvme's
# trace events must count at least one there per 64 KiB each way.
polled_check() {
	local qid events=/sys/kernel/tracing/events/nvme/nvme_setup_cmd n
	[ "$(cat /sys/block/${NS#/dev/}/queue/io_poll)" = 1 ] && qid=$(poll_qid) || return 1
	tracing_up
	echo >/sys/kernel/tracing/trace &&
		echo "qid == $qid" >$events/filter &&
		echo 1 >$events/enable || return 1
	timeout $((300 * SLOWDOWN)) fio --name=polled --filename="$NS" --direct=1 \
		--ioengine=io_uring --hipri=1 --iodepth=4 --rw=write --bsrange=4k-64k --size=$1m \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fio.out 2>&1
	local rc=$?
	echo 0 >$events/enable
	n=$(grep -c nvme_setup_cmd /sys/kernel/tracing/trace)
	echo "# $n commands on the polled queue (qid $qid)"
	[ $rc = 0 ] && [ "$n" -ge $(($1 * 16 * 2)) ] && return
	tail -5 /tmp/fio.out | sed 's/^/#   /'
	return 1
}

# round TARGET_DRIVER HOST_DRIVER [MIB [NETEM]]: one connection, MIB MiB
# (default 64, divided by SLOWDOWN) through it, over a link netem makes
# NETEM if given.
round() {
	local mine=$1 mib=$((${3:-64} / SLOWDOWN)) tag=$1-$2-${3:-64} dev
	[ "$RROCE_VM" = 2 ] && mine=$2
	driver_up $mine
	ktap_result $? "$DEV on eth0 (target: $1, host: $2)"
	dev=$DEV
	if [ -n "${4:-}" ]; then
		tc qdisc add dev eth0 root netem $4
		ktap_result $? "eth0: netem $4"
	fi
	if [ "$RROCE_VM" = 1 ]; then
		target_up
		ktap_result $? "target: $NQN on $RROCE_IP4:4420 over $dev"
		vm_signal "target-$tag"
		if [ "${USE_SRQ:-0}" = 1 ]; then
			vm_wait "connected-$tag" &&
				rdma resource show srq dev $dev | grep -q nvmet
			ktap_result $? "target: nvmet-rdma receives on kernel SRQs"
		fi
		vm_wait "host-done-$tag"
		# MIB MiB read from the host, in RDMA READ responses of at most
		# 4 KiB: at least 256 packets a MiB arrived.
		[ "$(link_counter $dev rcvd_pkts)" -ge $((mib * 256)) ]
		ktap_result $? "target: $(link_counter $dev rcvd_pkts) packets received"
		target_down
		ktap_result $? "target: taken down after the host left"
	else
		vm_wait "target-$tag" && host_connect
		ktap_result $? "host: connected over $dev"
		vm_signal "connected-$tag"
		write_check $mib
		ktap_result $? "host: $mib MiB written in 4 KiB..1 MiB pieces by 4 jobs, read back, every block checked"
		if [ -n "${POLL_QUEUES:-}" ]; then
			polled_check $((4 / SLOWDOWN))
			ktap_result $? "host: $((4 / SLOWDOWN)) MiB written and read back with polled I/O, checked"
		fi
		host_disconnect
		ktap_result $? "host: disconnected"
		vm_signal "host-done-$tag"
	fi
	[ -n "${4:-}" ] && tc qdisc del dev eth0 root
	show_link_stats $dev
	driver_down $mine
	vm_signal "unloaded-$tag" && vm_wait "unloaded-$tag"
}

# life_cycle: rroce on both sides. The target's module is removed under a
# live controller; the host's controller reconnects once the target has a
# fresh device and port. Then the host's device is deleted under the live
# controller, which nvme-rdma must let go of.
life_cycle() {
	local t i
	driver_up rroce
	ktap_result $? "rroce0 on eth0 (life cycle)"
	if [ "$RROCE_VM" = 1 ]; then
		target_up
		ktap_result $? "target: $NQN on $RROCE_IP4:4420 over rroce0"
		vm_signal life-target
		vm_wait life-connected 300
		t=$SECONDS
		timeout $((60 * SLOWDOWN)) rmmod rroce
		ktap_result $? "target: rmmod rroce under a live controller, in $((SECONDS - t)) s"
		# nvmet-rdma's listener went with the device; linking the
		# subsystem to the port again listens on the fresh one. The
		# namespace stays, so the host finds the same one again.
		load_rroce && rdma link add rroce0 type rroce netdev eth0 &&
			rm $CFS/ports/1/subsystems/$NQN &&
			ln -s $CFS/subsystems/$NQN $CFS/ports/1/subsystems/$NQN
		ktap_result $? "target: a fresh rroce0, the port listening on it"
		vm_signal life-target-back
		vm_wait life-host-done 300
		target_down
		ktap_result $? "target: taken down after the host left"
		show_link_stats rroce0
		driver_down rroce
	else
		vm_wait life-target && host_connect
		ktap_result $? "host: connected over rroce0"
		vm_signal life-connected
		# The keep-alive timeout notices the loss; nvme-rdma then tries
		# again every 10 s (reconnect_delay).
		vm_wait life-target-back 300 && for i in $(seq $((120 * SLOWDOWN))); do
			dmesg | grep -q "nvme nvme.*: Successfully reconnected" && break
			sleep 1
		done
		dmesg | grep -q "nvme nvme.*: Successfully reconnected" &&
			grep -qx live /sys/class/nvme/nvme*/state
		ktap_result $? "host: the controller reconnected to the target's fresh device"
		write_check $((4 / SLOWDOWN))
		ktap_result $? "host: $((4 / SLOWDOWN)) MiB written, read back, every block checked"
		show_link_stats rroce0
		t=$SECONDS
		timeout $((60 * SLOWDOWN)) rdma link delete rroce0
		ktap_result $? "host: rroce0 deleted under a live controller, in $((SECONDS - t)) s"
		! ls /sys/class/nvme/ 2>/dev/null | grep -q nvme
		ktap_result $? "host: nvme-rdma removed the controller with the device"
		rmmod rroce && modprobe -r nvme-rdma nvme-fabrics
		vm_signal life-host-done
	fi
}

USE_SRQ=1 POLL_QUEUES=1 round rroce rroce
round rxe rroce
round rroce rxe
round rroce rroce 16 "$BAD_LINK"
life_cycle
ktap_finish
