#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One completion vector per online CPU, and each CQ's completion handler
# run on its vector's CPU, as a NIC's per-CPU interrupts would: in a VM of
# two CPUs, NVMe over Fabrics over loopback on one rroce device (target and
# host in the same VM) spreads its I/O queues' CQs over the vectors
# (nvme-rdma, nvmet-rdma's CQ pool). rdma_core's tracepoints give each CQ's
# vector at allocation (cq_alloc) and the CPU its handler ran on each time
# (cq_schedule, which ib_core's handler traces).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nvmeof.sh"
export RROCE_VM_SMP=${RROCE_VM_SMP:-2}
VM_TIMEOUT=${VM_TIMEOUT:-600}
vm_main 1

require_cmd fio rdma ibv_devinfo
ncpus=$(nproc)
[ "$ncpus" -ge 2 ] || ktap_skip_all "a VM of one CPU"
load_rroce || ktap_skip_all "rroce.ko does not load"
T=$TRACEFS
tracing_up
echo 8192 >$T/buffer_size_kb &&
	echo 1 >$T/events/rdma_core/cq_alloc/enable &&
	echo 1 >$T/events/rdma_core/cq_schedule/enable || ktap_skip_all "no rdma_core tracepoints"
ktap_plan 6

rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rroce0 on eth0, $ncpus CPUs"

vectors=$(ibv_devinfo -v -d rroce0 | awk '/num_comp_vectors/ {print $2}')
[ "$vectors" = "$ncpus" ]
ktap_result $? "num_comp_vectors $vectors: one per online CPU"

target_up && TRADDR=$RROCE_IP4 host_connect &&
	timeout $((300 * ${SLOWDOWN:-1})) fio --name=rroce --filename="$NS" --direct=1 --ioengine=psync \
		--rw=write --bsrange=4k-256k --size=4m --numjobs=2 --offset_increment=4m \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fio.out 2>&1
ktap_result $? "NVMe-oF over loopback: 8 MiB written from both CPUs and checked"
echo 0 >$T/tracing_on

# cq_alloc: "cq.id=N nr_cqe=N comp_vector=V ..."; cq_schedule: "[CPU] ...
# cq.id=N". Vectors map to CPUs in order (one NUMA node here).
awk -v ncpus="$ncpus" '
	/ cq_alloc: / { match($0, /cq\.id=[0-9]+/); id = substr($0, RSTART + 6, RLENGTH - 6)
		match($0, /comp_vector=[0-9]+/); vec[id] = substr($0, RSTART + 12, RLENGTH - 12) }
	/ cq_schedule: / { match($0, /\[[0-9]+\]/); cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0
		match($0, /cq\.id=[0-9]+/); id = substr($0, RSTART + 6, RLENGTH - 6)
		if (!(id in vec)) { unknown++; next }
		events++; used[vec[id]] = 1; ran[cpu] = 1
		if (cpu != vec[id] % ncpus) { wrong++; if (wrong <= 3) print "#   " $0 " (vector " vec[id] ")" } }
	END { printf "events=%d wrong=%d unknown=%d used=%d ran=%d\n", events, wrong, unknown,
		length(used), length(ran) }' $T/trace >/tmp/vectors
grep '^#' /tmp/vectors
summary=$(grep '^events=' /tmp/vectors)
echo "# $summary"
eval "$summary"	# events, wrong, unknown, used (vectors), ran (CPUs)
[ "${used:-0}" -ge 2 ] && [ "${ran:-0}" -ge 2 ]
ktap_result $? "the CQs spread: ${events:-0} completion calls on ${used:-0} vectors, ${ran:-0} CPUs"
[ "${events:-0}" -gt 0 ] && [ "${wrong:-1}" = 0 ]
ktap_result $? "every one on its vector's CPU (${wrong:-?} elsewhere)"

host_disconnect && target_down && rdma link delete rroce0 && rmmod rroce
ktap_result $? "disconnect, delete the device and unload"
ktap_finish
