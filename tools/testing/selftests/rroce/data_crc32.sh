#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each form of the ICRC's CRC-32 that the CPU has (the module's crc32
# parameter: the table, and the SSE and AVX2 folds) seals and checks
# packets as the C rdma_rxe does: rroce with that form in VM 1 against rxe
# in VM 2. 64-byte and 8 KiB SENDs both ways with their data checked, 1 MiB
# READs whose 1 KiB responses rroce hashes as it copies them in (one pass,
# with a fold), and 64 KiB WRITEs whose packets it checks; none dropped for
# its ICRC. The parameter takes no other name.

. "$(dirname "$0")/lib.sh"
VM_TIMEOUT=${VM_TIMEOUT:-600}
vm_main 2

require_cmd ibv_rc_pingpong ib_read_bw ib_write_bw rdma

forms=table
if grep -qw pclmulqdq /proc/cpuinfo && grep -qw sse4_1 /proc/cpuinfo; then
	forms="$forms sse"
	grep -qw avx2 /proc/cpuinfo && forms="$forms avx2"
fi
set -- $forms
if [ "$RROCE_VM" = 1 ]; then ktap_plan $((1 + 6 * $#)); else ktap_plan $((5 * $#)); fi
echo "# forms on this CPU: $forms"

ITERS="iters in [0-9.]+ seconds"

if [ "$RROCE_VM" = 1 ]; then
	out=$(load_rroce crc32=sse4 2>&1)
	status=$?
	echo "# $out"
	[ $status != 0 ] && ! grep -q '^rroce ' /proc/modules
	ktap_result $? "crc32=sse4: insmod fails"
fi

port=19500
for form in $forms; do
	if [ "$RROCE_VM" = 1 ]; then
		load_rroce crc32=$form && DEV=rroce0 && rdma link add $DEV type rroce netdev eth0 &&
			dmesg | grep 'rroce: CRC-32 by' | tail -1 | grep -q "by $form, as the crc32 parameter asks" &&
			! dmesg | grep -q 'disagrees with crc32_le'
		ktap_result $? "crc32=$form: $DEV computes by $form"
	else
		driver_up rxe
		ktap_result $? "$DEV on eth0 (vm1: rroce, crc32=$form)"
	fi
	gid=$(gid_index $DEV "$RROCE_IP4")
	for size in 64 8192; do
		port=$((port + 1))
		pair "rc_pingpong -s $size, $form" $port "$ITERS" \
			ibv_rc_pingpong -d $DEV -g "$gid" -p $port -n $((50 / SLOWDOWN)) -s $size -c
	done
	port=$((port + 1))
	# perftest wants 5 iterations at least.
	reads=$((20 / SLOWDOWN < 5 ? 5 : 20 / SLOWDOWN))
	PAIR_TIMEOUT=300 pair "ib_read_bw 1 MiB, $form" $port "$(bw_row 1048576 $reads)" \
		ib_read_bw -d $DEV -x "$gid" -p $port -F -s 1048576 -n $reads
	port=$((port + 1))
	pair "ib_write_bw 64 KiB, $form" $port "$(bw_row 65536 $((100 / SLOWDOWN)))" \
		ib_write_bw -d $DEV -x "$gid" -p $port -F -s 65536 -n $((100 / SLOWDOWN))
	if [ "$RROCE_VM" = 1 ]; then
		show_link_stats $DEV
		bad=$(link_counter $DEV drop_bad_icrc)
		[ "$bad" = 0 ]
		ktap_result $? "crc32=$form: no packet dropped for its ICRC (${bad:-no counter})"
		driver_down rroce
	else
		driver_down rxe
	fi
	vm_signal "unloaded.$form" && vm_wait "unloaded.$form"
done
ktap_finish
