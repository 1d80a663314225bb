#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The soak (make soak; not part of make test): two VMs, SOAK_MINUTES (120)
# of mixed traffic over rroce under faults, every byte checked. At once:
#
#   - NVMe-oF (target in VM 1, host in VM 2): fio writes random sizes at
#     random offsets of the namespace, two jobs, and verifies every block;
#   - NFS over RDMA (server in VM 1): files of random sizes written, read
#     back past the page cache, compared;
#   - RC (rc_stream: SEND, WRITE with and without immediate, READ,
#     fetch-and-add in turn) both ways, every message checked;
#   - UD (ibv_ud_pingpong -c), a datagram lost under a fault allowed, a
#     wrong one not;
#   - rdma_cm churn: rping connects, checks 10 pings and disconnects;
#   - UCX (ucp_check: tagged, stream, put, get and atomics up to 256 KiB,
#     every byte checked) over ud_verbs and over rc_verbs in turn;
#   - Open MPI over UCX (mpi_check: point-to-point, collectives, one-sided,
#     every result checked), one rank per VM;
#   - libfabric (fi_check.c over the verbs provider's RDM endpoints,
#     ofi_rxm over RC: messages, RMA and atomics, every byte checked);
#
# The user-space programs sleep on completion events: polling without pause
# on a VM's one CPU would starve the kernel's work, soft RoCE's included,
# which NVMe-oF and NFS wait on. Open MPI cannot sleep: it yields the CPU
# whenever it has nothing to progress. (At nice 19 instead, the debug VMs'
# kernel work left it no CPU: no run ended in 25 minutes.) Starting the
# middleware costs more still: a debug VM spent 42 s of CPU on "mpirun -np
# 2 /bin/true" and 15 to 38 s on "ucx_info -d", loading their libraries
# and plugins. So the middleware clients take turns, UCX, Open MPI,
# libfabric, across both VMs: one run at a time, each followed by a pause
# in which its server starts again.
#
# while every SOAK_FAULT_SECONDS (180) a fault phase begins, in turn: netem
# loss, reordering, duplication, all of them, a clean link; VM 1's link
# down for 2 s; VM 1's NVMe-oF port removed for 10 s under I/O; and a
# device added and deleted on an idle netdev of each VM. At the end every
# workload must have run with no data error, the RDMA objects be back to
# their count at the start, slab memory back within 16 MiB, and the kernel
# log clean (scripts/vm.sh: no warning, KASAN, lockdep, kmemleak or hung
# task report). Each VM prints its figures (bytes verified, runs, faults,
# reconnects, retransmissions, peak slab).

. "$(dirname "$0")/lib.sh"
# The VMs get the host's settings as arguments.
MINUTES=${SOAK_MINUTES:-120}
FAULT_SECONDS=${SOAK_FAULT_SECONDS:-180}
VM_TIMEOUT=${VM_TIMEOUT:-$((MINUTES * 60 + 1800))}
in_vm || { build_prog rc_stream -libverbs && rc_stream=$PROG && build_prog ucp_check -lucp -lucs &&
	ucp_check=$PROG && build_prog fi_check -lfabric && fi_check=$PROG && CC=mpicc build_prog mpi_check; }
vm_main 2 "$rc_stream" "$ucp_check" "$fi_check" "$PROG" "$MINUTES" "$FAULT_SECONDS" "${SOAK_TRACE:-0}"
rc_stream=$1 ucp_check=$2 fi_check=$3 mpi_check=$4 MINUTES=$5 FAULT_SECONDS=$6 TRACE=$7
. "$SELFTESTS_DIR/nvmeof.sh"

require_cmd fio rping ibv_ud_pingpong tc rdma rpc.nfsd mount.nfs sha256sum ucx_info mpirun
ktap_plan $((RROCE_VM == 1 ? 11 : 13))

END=$((SECONDS + MINUTES * 60))
OUT=/tmp/soak
EXPORT=/srv/rroce
MNT=/mnt/rroce
NFS_PORT=20049
RC_PORT=19100
UD_PORT=19200
# Datagrams a UD pingpong sends each way: at 2 % loss, 100 of them get
# through whole one time in eight (0.98^100); 400 hardly ever did, and a
# short soak then had no pingpong through.
UD_MESSAGES=50
RPING_PORT=19300
UCX_PORT=19400
# UCX's two transports for a RoCE device (rc_verbs wires up through
# ud_verbs), on the IPv4 GID; ucp_check sleeps on UCX's events (-w).
UCX_TRANSPORTS=(ud_verbs,self rc_verbs,ud_verbs,self)
UCX_ARGS="-w -r 1 -m 262144"
# One round of each of mpi_check's checks; one of fi_check's on rroce0's
# RDM endpoints, up to 1 MiB, sleeping on its CQ (-w).
MPI_ROUNDS=1
FI_PORT=19500
FI_ARGS="-w -d rroce0 -r 1 -m 1048576"
MIDDLEWARE_TURNS=(ucx mpi fi)
TURN=$RROCE_SHARED/middleware.turn
MIDDLEWARE_PAUSE=$((30 * SLOWDOWN))
# The RC ACK timeout: 537 ms, so that a QP rides out the 2 s link down
# within its 7 retries.
RC_TIMEOUT=17
RC_OPS=(send write-imm write read fetch-add)
# NFS writing nothing over STALL_MINUTES minute lines is a stall, and a QP
# that gives up (retransmitted retry_cnt times) is a failure: of such
# events the first STALL_DUMPS leave the state of both VMs in the run
# directory (dump_watch).
STALL_MINUTES=2
STALL_DUMPS=3
STALL_TRACE_SECONDS=20
mkdir -p $OUT

running() { [ $SECONDS -lt $END ]; }
# nap SECONDS: sleep that long, or until the end if that comes first.
nap() {
	local left=$((END - SECONDS))
	[ $left -gt 0 ] && sleep $(($1 < left ? $1 : left))
}

# turn_wait NAME: wait for middleware client NAME's turn; false if the
# soak ends first.
turn_wait() {
	local now
	while running; do
		read -r now <"$TURN" && [ "$now" = "$1" ] && return 0
		tick 5
	done
	return 1
}

# turn_pass NAME: once client NAME's run has ended, pause, then hand the
# turn to the next client.
turn_pass() {
	local i n=${#MIDDLEWARE_TURNS[@]}
	nap $MIDDLEWARE_PAUSE
	for i in "${!MIDDLEWARE_TURNS[@]}"; do
		[ "${MIDDLEWARE_TURNS[i]}" = "$1" ] || continue
		echo "${MIDDLEWARE_TURNS[(i + 1) % n]}" >"$TURN.tmp" && mv "$TURN.tmp" "$TURN"
	done
}

# once NAME COMMAND...: run COMMAND as workload NAME's current run, its
# output in $OUT/NAME.out and its PID in $OUT/NAME.pid, so that the end
# can stop a server still waiting for a client.
once() {
	local name=$1
	shift
	"$@" >"$OUT/$name.out" 2>&1 &
	echo $! >"$OUT/$name.pid"
	wait $!
}

# tally NAME RESULT: count one run of workload NAME as RESULT (ok, lost,
# failed), in $OUT/NAME.RESULT.
tally() { echo >>"$OUT/$1.$2"; }
count() { [ -f "$OUT/$1.$2" ] && wc -l <"$OUT/$1.$2" || echo 0; }
# ran_right NAME: workload NAME ran right at least once and never wrong.
ran_right() { [ "$(count "$1" failed)" = 0 ] && [ "$(count "$1" ok)" -gt 0 ]; }
# runs: every workload's tally so far.
runs() {
	local f
	for f in $OUT/*.ok $OUT/*.lost $OUT/*.unconnected $OUT/*.failed; do
		[ -f "$f" ] && printf '%s %s ' "$(basename "$f")" "$(wc -l <"$f")"
	done
}

# written: in VM 2, what the storage workloads have written so far (KiB
# to the NVMe-oF namespace, and to the NFS mount), so that a stall shows
# minute by minute; sets NFS_KIB.
written() {
	[ "$RROCE_VM" = 2 ] || return 0
	local nvme
	nvme=$(awk '{ print int($7 / 2) }' "/sys/block/${NS##*/}/stat" 2>/dev/null)
	NFS_KIB=$(awk -v mnt="$MNT" '$1 == "device" { here = ($5 == mnt) }
		here && $1 == "bytes:" { print int($7 / 1024); exit }' /proc/self/mountstats)
	echo "; written: NVMe-oF ${nvme:-?} KiB, NFS ${NFS_KIB:-?} KiB"
}

# stall_check: in VM 2, at each minute line: a stall if NFS has written
# nothing over STALL_MINUTES of them while a file is being written (not in
# the NFSv4 grace period at the start, before anything was).
stall_check() {
	[ "$RROCE_VM" = 2 ] || return 0
	if [ "${NFS_KIB:-0}" = 0 ] || [ "$NFS_KIB" != "$stall_kib" ]; then
		stall_kib=$NFS_KIB
		stall_minutes=0
		return 0
	fi
	stall_minutes=$((stall_minutes + 1))
	[ $stall_minutes = $STALL_MINUTES ] && ask_dump "NFS wrote nothing for $STALL_MINUTES minutes"
}

# cpu_top: the three commands that took the most of the CPU since the last
# call (kernel workers by kind; processes that ended meanwhile are not
# counted), each with its share, then the shares of interrupts (softirqs,
# where packets arrive, included) and of idle time, so that the minute
# lines show what left the kernel's work little.
cpu_top() {
	local now=$OUT/cpu.now prev=$OUT/cpu.prev
	local user nice system idle iowait irq softirq ticks key started
	# /proc/PID/stat: the command in parentheses, then utime and stime as
	# the 12th and 13th fields after them, in clock ticks (100 a second).
	cat /proc/[0-9]*/stat 2>/dev/null | awk '{
		comm = substr($0, index($0, "(") + 1); comm = substr(comm, 1, index(comm, ")") - 1)
		split(substr($0, index($0, ") ") + 2), f, " ")
		if (comm ~ /^kworker.*H/) comm = "kworker-highpri"; else if (comm ~ /^kworker/) comm = "kworker"
		gsub(/ /, "_", comm)
		print $1, comm, f[12] + f[13] }' >"$now"
	[ -f "$prev" ] && awk -v secs="$((SECONDS - cpu_since))" '
		NR == FNR { was[$1 " " $2] = $3; next }
		{ used[$2] += $3 - was[$1 " " $2] }
		END { if (secs < 1) secs = 1
		      for (c in used) if (used[c] >= secs) printf "%s %d%%\n", c, used[c] / secs }' "$prev" "$now" |
		sort -k2 -n -r | head -3 | tr '\n' ' ' | sed 's/ \([^ ]*%\) / \1, /g; s/^/; cpu: /; s/, *$//'
	mv "$now" "$prev"
	cpu_since=$SECONDS
	# /proc/stat's first line: the whole CPU's time by kind, in ticks; its
	# "processes" line: how many were started since boot, which the shares
	# above miss (a debug VM pays about 0.15 s of CPU for each).
	read -r _ user nice system idle iowait irq softirq _ </proc/stat
	while read -r key started _ && [ "$key" != processes ]; do :; done </proc/stat
	ticks=$((user + nice + system + idle + iowait + irq + softirq))
	[ -n "${cpu_ticks:-}" ] && [ $ticks -gt $cpu_ticks ] &&
		echo "; interrupts $(((irq + softirq - cpu_irq) * 100 / (ticks - cpu_ticks)))%," \
			"idle $(((idle + iowait - cpu_idle) * 100 / (ticks - cpu_ticks)))%," \
			"$((started - cpu_started)) processes started"
	cpu_ticks=$ticks cpu_irq=$((irq + softirq)) cpu_idle=$((idle + iowait)) cpu_started=$started
}

# ask_dump WHY: have both VMs leave what they see now (dump_watch).
ask_dump() { mkdir -p "$RROCE_SHARED/ask" && echo "$1" >"$RROCE_SHARED/ask/vm$RROCE_VM.$SECONDS"; }

# dump NAME: what this VM sees, into the run directory as dump.NAME.vmK.*:
# the QPs and rroce's counters, the RPC tasks waiting, the NVMe-oF host's
# commands in flight, the stacks of the NFS server's threads and of every
# blocked task, and rroce's tracepoints: the last of what they kept with
# SOAK_TRACE=1, else the next STALL_TRACE_SECONDS.
dump() {
	local f=$RROCE_SHARED/dump.$1.vm$RROCE_VM t=$TRACEFS
	echo "# $1 ($(cat "$RROCE_SHARED/ask/$1")): dumped into $(basename "$f").*"
	{ rdma res show qp; link_stats rroce0; } >$f.qp 2>&1
	{ cat /sys/kernel/debug/sunrpc/rpc_clnt/*/tasks; grep -h "xprt:" /proc/self/mountstats
	  cat /proc/net/rpc/nfsd; } >$f.rpc 2>/dev/null
	grep -H . /sys/kernel/debug/block/nvme*/hctx*/busy >$f.nvme 2>/dev/null
	for pid in $(pgrep -x nfsd) $(ps -eo pid=,stat= | awk '$2 ~ /^D/ { print $1 }'); do
		echo "== $pid $(cat /proc/$pid/comm)"
		cat /proc/$pid/stack
	done >$f.stacks 2>&1
	[ "$TRACE" = 1 ] || { trace_on && sleep $STALL_TRACE_SECONDS; }
	echo 0 >$t/tracing_on && cat $t/trace >$f.trace && echo >$t/trace
	if [ "$TRACE" = 1 ]; then echo 1 >$t/tracing_on; else echo 0 >$t/events/rroce/enable; fi
}

# stop_trace_at_nvme_timeout: with SOAK_TRACE=1, the host's trace stops
# where nvme-rdma times a command out (a kprobe whose trigger turns
# tracing off; dump turns it on again), so that its dump holds the packets
# of the 30 s before, not of the reconnect after.
stop_trace_at_nvme_timeout() {
	echo 'p:rroce_soak/nvme_timeout nvme_rdma:nvme_rdma_timeout' >>$TRACEFS/kprobe_events &&
		echo traceoff >$TRACEFS/events/rroce_soak/nvme_timeout/trigger
}

# What nvme-rdma logs for a command that timed out (nvme_rdma_timeout).
NVME_TIMEOUT='QID [0-9]* timeout'
# stuck_lines: the kernel log's reports of a task blocked for minutes, an
# NFS server not responding or an NVMe-oF command timed out, counted.
stuck_lines() { dmesg | grep -c -e 'blocked for more than' -e 'not responding' -e "$NVME_TIMEOUT"; }

# stuck_check: at each minute line, ask for a dump if the kernel reported
# a stuck task, NFS server or NVMe-oF command since the line before.
stuck_check() {
	local now
	now=$(stuck_lines)
	[ "$now" != "$stuck_before" ] && ask_dump "vm$RROCE_VM's kernel reports a stuck task, NFS server or NVMe-oF command"
	stuck_before=$now
}

# read_retries: rroce0's retry_exceeded_err into $retries, from sysfs
# without starting a process.
RETRIES=/sys/class/infiniband/rroce0/ports/1/hw_counters/retry_exceeded_err
read_retries() { read -r retries <$RETRIES || retries=$(link_counter rroce0 retry_exceeded_err); }

# dump_watch: every 5 s times SLOWDOWN, ask for a dump when a QP of this
# VM gave up (retry_exceeded_err moved; an NFS write that crawls escapes
# stall_check); make each dump asked for, by either VM, by stuck_check or
# by hand (a file ask/NAME in the run directory, holding why), the first
# STALL_DUMPS of them. It starts no process but for the dumps (each look
# used to start nine, and a debug VM pays about 0.15 s of CPU for each).
dump_watch() {
	local f name made=" " n=0 last retries
	read_retries
	last=$retries
	while running; do
		read_retries
		[ "$retries" != "$last" ] && ask_dump "a QP of vm$RROCE_VM gave up: retry_exceeded_err $last -> $retries"
		last=$retries
		for f in "$RROCE_SHARED"/ask/*; do
			name=${f##*/}
			[ -e "$f" ] && [ "${made/ $name /}" = "$made" ] || continue
			made="$made$name "
			n=$((n + 1))
			[ $n -le $STALL_DUMPS ] && dump "$name"
		done
		tick $((5 * SLOWDOWN))
	done
}

# rdma_objects: rroce0's object counts, as `rdma res` prints them, but
# CQs: ib_core's CQ pool, which NVMe-oF's queues draw on, keeps its CQs
# until the device goes (the first soak: 1 CQ at the start, 2 at the end).
rdma_objects() { rdma res show | grep -o 'rroce0: .*' | sed 's/ cq [0-9]*//'; }
# slab_kib: unreclaimable slab memory, once what can be is reclaimed.
slab_kib() {
	echo 3 >/proc/sys/vm/drop_caches
	awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo
}

# rc_server OP: rc_stream's server of OP until the end, on its own port,
# so that a client's failed try cannot put the two sides out of step.
rc_server() {
	local k=$1
	while running; do
		once rc$k timeout $((600 * SLOWDOWN)) "$rc_stream" -e -o ${RC_OPS[k]} -T $RC_TIMEOUT rroce0 \
			$((RC_PORT + k)) 200 8192
		[ -e $OUT/stopped ] && break
		rc_result $k
	done
}

# rc_client: rc_stream over the operations in turn until the end. A try
# that could not connect (the server between runs) is made again; a run
# that connected must end intact.
rc_client() {
	local i=0 k
	while running; do
		k=$((i % ${#RC_OPS[@]}))
		sleep 1
		once rc$k timeout $((600 * SLOWDOWN)) "$rc_stream" -e -o ${RC_OPS[k]} -T $RC_TIMEOUT rroce0 \
			$((RC_PORT + k)) 200 8192 "$(peer_ip4)"
		rc_result $k && i=$((i + 1))
	done
}

# rc_result K: tally operation K's last run; false if it never connected.
rc_result() {
	local out=$OUT/rc$1.out
	if grep -q "all intact, in order, once" $out; then
		tally rc ok
	elif grep -q "connecting to the peer failed" $out; then
		# Before any message (the server between runs, or a fault on
		# the TCP exchange): counted, and tried again.
		tally rc unconnected
		return 1
	else
		tally rc failed
		sed "s/^/# rc_stream -o ${RC_OPS[$1]}: /" $out
	fi
}

# ud_loop SIDE: UD pingpongs of 1 KiB, each datagram checked; under loss
# a run may stall (UD does not resend), and is then given up after 60 s.
ud_loop() {
	local status gid
	while running; do
		# The link going down may renumber the GIDs.
		gid=$(gid_index rroce0 "$RROCE_IP4")
		if [ "$1" = server ]; then
			once ud timeout $((60 * SLOWDOWN)) ibv_ud_pingpong -e -d rroce0 -g "$gid" -p $UD_PORT -s 1024 -n $UD_MESSAGES -c
		else
			sleep 2
			once ud timeout $((60 * SLOWDOWN)) ibv_ud_pingpong -e -d rroce0 -g "$gid" -p $UD_PORT -s 1024 -n $UD_MESSAGES -c \
				"$(peer_ip4)"
		fi
		status=$?
		[ -e $OUT/stopped ] && break
		case $status in
		0) tally ud ok ;;
		124) tally ud lost ;;
		*) grep -q "Couldn't connect\|Connection refused" $OUT/ud.out && continue
			# The TCP exchange of addresses broke (a fault, or the
			# peer's run given up just then): no datagram was sent.
			if grep -q "Couldn't read/write remote address" $OUT/ud.out; then
				tally ud unconnected
				continue
			fi
			tally ud failed
			sed 's/^/# ibv_ud_pingpong: /' $OUT/ud.out ;;
		esac
	done
}

# fio_loop: 64 MiB of random writes of 4 to 128 KiB per run, two jobs on
# their own halves of the namespace, every block verified.
fio_loop() {
	while running; do
		if timeout $((1800 * SLOWDOWN)) fio --name=soak --filename="$NS" --direct=1 --ioengine=libaio \
			--rw=randwrite --bsrange=4k-128k --iodepth=8 --numjobs=2 --size=64m --offset_increment=256m \
			--verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 --group_reporting \
			>$OUT/fio.out 2>&1; then
			tally fio ok
		else
			tally fio failed
			tail -n 20 $OUT/fio.out | sed 's/^/# fio: /'
		fi
	done
}

# nfs_loop: a file of random size up to 8 MiB written, read back past the
# page cache, compared. Written 256 KiB at a time, each synchronously, as
# one writes over a slow link: xprtrdma ends the connection whenever an RPC
# goes 60 s without a reply (xprt_rdma_timer), and sends again what it had
# in flight. Buffered, a file's dirty pages went out at once, as WRITEs
# queued behind one another at the server, whose debug kernel reads their
# data at 100 kB/s or less in the fault phases: the last of them timed
# out, the connection was made again, the same WRITEs queued again, and dd
# waited in fsync for minutes (a hung task report).
nfs_loop() {
	local size sum
	while running; do
		size=$((RANDOM * 256 + RANDOM % 4096))
		head -c $size /dev/urandom >$OUT/nfs.src
		sum=$(sha256sum <$OUT/nfs.src)
		if timeout $((600 * SLOWDOWN)) dd if=$OUT/nfs.src of=$MNT/soak bs=256k oflag=dsync conv=fsync status=none &&
			[ "$(timeout $((600 * SLOWDOWN)) dd if=$MNT/soak bs=64k iflag=direct status=none | sha256sum)" = "$sum" ]; then
			tally nfs ok
			echo $size >>$OUT/nfs.bytes
		else
			tally nfs failed
		fi
	done
}

# rping_loop: connect, 10 pings of 1 KiB checked (-V), disconnect. A
# connection that a fault breaks is no error; data that differs is.
rping_loop() {
	while running; do
		if timeout $((120 * SLOWDOWN)) rping -c -V -C 10 -S 1024 -a "$(peer_ip4)" -p $RPING_PORT \
			>$OUT/rping.out 2>&1; then
			tally rping ok
		elif grep -q "mismatch" $OUT/rping.out; then
			tally rping failed
			sed 's/^/# rping: /' $OUT/rping.out | tail -5
		else
			tally rping lost
		fi
		sleep 1
	done
}

# ucx_server K: ucp_check's server over UCX_TRANSPORTS[K] until the end,
# on its own port, as rc_server. A run that no client came to before its
# time limit (a server's client comes every other UCX turn) counts for
# nothing.
ucx_server() {
	local k=$1
	while running; do
		once ucx$k ucx_run $k
		[ -e $OUT/stopped ] && break
		grep -q "^ok\|^not ok" $OUT/ucx$k.out || continue
		ucx_result $k
	done
}

# ucx_client: ucp_check over the transports in turn until the end, a run
# in each of UCX's turns.
ucx_client() {
	local i=0
	while turn_wait ucx; do
		sleep 1
		once ucx$((i % 2)) ucx_run $((i % 2)) "$(peer_ip4)"
		ucx_result $((i % 2))
		turn_pass ucx
		i=$((i + 1))
	done
}

# ucx_run K [SERVER]: one ucp_check over UCX_TRANSPORTS[K], in place of
# the shell that runs this (once's PID is then ucp_check's timeout).
ucx_run() {
	exec env $(ucx_env rroce0 "$(gid_index rroce0 "$RROCE_IP4")" "${UCX_TRANSPORTS[$1]}") \
		timeout $((600 * SLOWDOWN)) "$ucp_check" $UCX_ARGS -p $((UCX_PORT + $1)) ${2:-}
}

# ucx_result K: tally transport K's last run, as check_result.
ucx_result() { check_result ucx $OUT/ucx$1.out "ucp_check over ${UCX_TRANSPORTS[$1]}"; }

# check_result NAME OUT WHAT: tally workload NAME's last run of WHAT, a
# check program (ucp_check.c, fi_check.c) whose output is in OUT. Data
# that the middleware delivered wrong fails the soak; a run that it gave
# up (its peer unreachable for longer than its timeouts) is counted as
# lost; false if the run found no server.
check_result() {
	local name=$1 out=$2 what=$3
	if grep -q "_check: [0-9]* passed, 0 failed" "$out"; then
		tally "$name" ok
	elif grep -q "connecting to the server failed" "$out"; then
		tally "$name" unconnected
		return 1
	elif grep -q "([1-9][0-9]* with wrong data)" "$out"; then
		tally "$name" failed
		grep "not ok\|differs\|_check:" "$out" | sed "s/^/# $what: /"
	else
		tally "$name" lost
		[ "$(count "$name" lost)" -le 5 ] &&
			grep -m 3 "not ok\|_check:\|Fatal\|ERROR" "$out" | sed "s/^/# $what, given up: /"
	fi
	return 0
}

# mpi_loop: in VM 1, mpi_check with one rank per VM until the end, a run
# in each of Open MPI's turns: mpirun here starts its daemon in VM 2
# through rexec.sh (VM 2's rexec_serve). A wrong result ("not ok", even
# in a run that then aborted) fails the soak; a run that ends otherwise
# (Open MPI aborts when UCX gives up on its peer) is counted as lost. Each
# rank takes the GID UCX prefers, its VM's IPv4 one, whatever its index
# after the link went down.
mpi_loop() {
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	while turn_wait mpi; do
		sleep 1
		timeout $((900 * SLOWDOWN)) mpirun -np 2 --host "$RROCE_IP4,$(peer_ip4)" \
			--mca plm_rsh_agent "$SELFTESTS_DIR/rexec.sh" --mca oob_tcp_if_include 192.0.2.0/24 \
			--mca pml ucx --mca osc ucx --mca btl self --mca mpi_yield_when_idle 1 \
			-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_NET_DEVICES=rroce0:1 \
			"$mpi_check" $MPI_ROUNDS >$OUT/mpi.out 2>&1
		if grep -q "^mpi_check: [0-9]* passed, 0 failed" $OUT/mpi.out; then
			tally mpi ok
		elif grep -q "^not ok" $OUT/mpi.out; then
			tally mpi failed
			grep "^not ok\|^mpi_check:" $OUT/mpi.out | sed 's/^/# mpi_check: /'
		else
			tally mpi lost
			sleep 10
			[ "$(count mpi lost)" -le 5 ] && { grep -m 3 -i "error\|abort" $OUT/mpi.out || head -n 3 $OUT/mpi.out; } |
				sed 's/^/# mpi_check, given up: /'
		fi
		turn_pass mpi
	done
	vm_signal mpi_over
}

# fi_server: fi_check's server until the end, as ucx_server: a run that
# no client came to before its time limit printed nothing and counts for
# nothing.
fi_server() {
	while running; do
		once fi timeout $((600 * SLOWDOWN)) "$fi_check" $FI_ARGS -p $FI_PORT
		[ -e $OUT/stopped ] && break
		[ -s $OUT/fi.out ] || continue
		check_result fi $OUT/fi.out fi_check
	done
}

# fi_client: fi_check's client until the end, a run in each of
# libfabric's turns; a try that found no server (between its runs) is made
# again.
fi_client() {
	while turn_wait fi; do
		sleep 2
		once fi timeout $((600 * SLOWDOWN)) "$fi_check" $FI_ARGS -p $FI_PORT "$(peer_ip4)"
		check_result fi $OUT/fi.out fi_check && turn_pass fi
	done
}

# faults: one phase per FAULT_SECONDS, the same schedule in both VMs.
NETEM=("loss 2%" "delay 1ms reorder 10% 50%" "duplicate 2%" "delay 1ms reorder 5% 50% loss 1% duplicate 1%" "")
fault_loop() {
	local phase=0 kind
	while running; do
		kind=$((phase % 8))
		case $kind in
		[0-4])
			tc qdisc del dev eth0 root 2>/dev/null
			[ -n "${NETEM[kind]}" ] && tc qdisc add dev eth0 root netem ${NETEM[kind]}
			echo "netem ${NETEM[kind]:-off}" >>$OUT/faults ;;
		5)
			tc qdisc del dev eth0 root 2>/dev/null
			if [ "$RROCE_VM" = 1 ]; then
				ip link set eth0 down && sleep 2 && ip link set eth0 up
				echo "link down 2 s" >>$OUT/faults
			fi ;;
		6)
			if [ "$RROCE_VM" = 1 ]; then
				rm $CFS/ports/1/subsystems/$NQN && sleep $((10 * SLOWDOWN)) &&
					ln -s $CFS/subsystems/$NQN $CFS/ports/1/subsystems/$NQN
				echo "NVMe-oF port away 10 s" >>$OUT/faults
			fi ;;
		7)
			rdma link add rroce1 type rroce netdev dummy0 && [ -e /sys/class/infiniband/rroce1 ] &&
				rdma link delete rroce1 && [ ! -e /sys/class/infiniband/rroce1 ] ||
				echo >>$OUT/idle_device.failed
			echo "rroce1 added and deleted" >>$OUT/faults ;;
		esac
		phase=$((phase + 1))
		nap "$FAULT_SECONDS"
	done
	tc qdisc del dev eth0 root 2>/dev/null
}

# --- Set up -----------------------------------------------------------

modprobe -a sch_netem dummy rdma_ucm || ktap_skip_all "no sch_netem, dummy or rdma_ucm"
ip link add dummy0 type dummy && ip link set dummy0 up
# For dump.
tracing_up && { mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; }
driver_up rroce
ktap_result $? "rroce0 on eth0"
gid_index rroce0 "$RROCE_IP4" >/dev/null
# What ib_core's own users (the MAD agents) hold once the device is up.
sleep 2
objects_before=$(rdma_objects)
slab_before=$(slab_kib)

if [ "$RROCE_VM" = 1 ]; then
	target_up &&
		mkdir -p $EXPORT /var/lib/nfs/v4recovery && mount -t tmpfs tmpfs $EXPORT &&
		modprobe nfsd && mount -t nfsd nfsd /proc/fs/nfsd && rpcbind -w && rpc.mountd &&
		exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 "*:$EXPORT" &&
		rpc.nfsd --rdma=$NFS_PORT 2
	ktap_result $? "NVMe-oF target and NFS/RDMA server up"
	echo "${MIDDLEWARE_TURNS[0]}" >"$TURN"
	vm_signal serving
	timeout $((MINUTES * 60 + 600)) rping -s -P -V -S 1024 -a "$RROCE_IP4" -p $RPING_PORT >$OUT/rping.server 2>&1 &
	rping_server=$!
	for k in "${!RC_OPS[@]}"; do
		rc_server $k &
	done
	for k in "${!UCX_TRANSPORTS[@]}"; do
		ucx_server $k &
	done
	mpi_loop &
	fi_server &
	ud_loop server &
else
	vm_wait serving 600 && NVME_OPTS=",ctrl_loss_tmo=-1" host_connect &&
		modprobe rpcrdma && mkdir -p $MNT &&
		mount -t nfs4 -o proto=rdma,port=$NFS_PORT "$(peer_ip4):/" $MNT
	ktap_result $? "NVMe-oF namespace $NS and the NFS/RDMA mount"
	[ "$TRACE" = 1 ] && { stop_trace_at_nvme_timeout || echo "# no trace stop at an NVMe-oF timeout"; }
	fio_loop &
	nfs_loop &
	rc_client &
	ucx_client &
	rexec_serve mpi_over &
	fi_client &
	ud_loop client &
	rping_loop &
fi
fault_loop &
faults=$!

# --- Run, watching memory -----------------------------------------------

[ "$TRACE" = 1 ] && trace_on
stuck_before=$(stuck_lines)
dump_watch &
slab_peak=$slab_before
while running; do
	nap 60
	slab_now=$(slab_kib)
	[ "$slab_now" -gt "$slab_peak" ] && slab_peak=$slab_now
	written >$OUT/written
	cpu_top >$OUT/cpu
	echo "# $((SECONDS / 60)) min: slab $((slab_now / 1024)) MiB; runs $(runs)$(cat $OUT/written)$(tr -d '\n' <$OUT/cpu)"
	stall_check
	stuck_check
done
# The clients end once their run in progress does; then the servers, which
# wait for clients that will not come, are stopped.
wait $faults
[ "$RROCE_VM" = 2 ] && wait
vm_signal done
vm_wait done 1800
if [ "$RROCE_VM" = 1 ]; then
	touch $OUT/stopped
	kill $rping_server $(cat $OUT/rc*.pid $OUT/ucx*.pid $OUT/fi.pid $OUT/ud.pid 2>/dev/null) 2>/dev/null
fi
wait
echo "# runs: $(runs)"

# --- Check --------------------------------------------------------------

stats=$(link_stats rroce0)
if [ "$RROCE_VM" = 2 ]; then
	ran_right fio
	ktap_result $? "fio over NVMe-oF: $(count fio ok) runs of 128 MiB verified, $(count fio failed) failed"
	nfs_bytes=$(awk '{ s += $1 } END { print s + 0 }' $OUT/nfs.bytes 2>/dev/null)
	ran_right nfs
	ktap_result $? "NFS/RDMA: $(count nfs ok) files ($nfs_bytes bytes) read back equal, $(count nfs failed) not"
	ran_right rping
	ktap_result $? "rdma_cm: $(count rping ok) rping connections checked, $(count rping lost) refused under faults"
	reconnects=$(dmesg | grep -c "Successfully reconnected")
	echo "# NVMe-oF reconnects: $reconnects; commands timed out: $(dmesg | grep -c "$NVME_TIMEOUT")"
	host_disconnect && umount $MNT
	ktap_result $? "NVMe-oF disconnected, NFS unmounted"
	vm_signal released
else
	vm_wait released 600 &&
		rpc.nfsd 0 && exportfs -ua && umount /proc/fs/nfsd $EXPORT && target_down
	ktap_result $? "NVMe-oF target and NFS server down"
fi
ran_right rc
ktap_result $? "rc_stream: $(count rc ok) runs of 200 x 8 KiB each way intact, $(count rc failed) not ($(count rc unconnected) tries to connect failed)"
ran_right ucx
ktap_result $? "UCX: $(count ucx ok) ucp_check runs passed, $(count ucx failed) with wrong data, $(count ucx lost) given up under faults ($(count ucx unconnected) tries to connect failed)"
if [ "$RROCE_VM" = 1 ]; then
	ran_right mpi
	ktap_result $? "Open MPI: $(count mpi ok) mpi_check runs across the VMs right, $(count mpi failed) with a wrong result, $(count mpi lost) given up under faults"
fi
ran_right fi
ktap_result $? "libfabric: $(count fi ok) fi_check runs over RDM passed, $(count fi failed) with wrong data, $(count fi lost) given up under faults ($(count fi unconnected) tries to connect failed)"
ran_right ud
ktap_result $? "UD: $(count ud ok) pingpongs of $UD_MESSAGES x 1 KiB checked, $(count ud lost) stalled by loss, $(count ud unconnected) whose address exchange broke"
[ ! -e $OUT/idle_device.failed ] && grep -q rroce1 $OUT/faults
ktap_result $? "faults: $(wc -l <$OUT/faults) phases ($(sort $OUT/faults | uniq -c | sed 's/^ *//' | tr '\n' ';'))"
echo "# rroce0: retransmits $(stat_value retransmits "$stats"), seq NAKs received $(stat_value seq_nak_rcvd "$stats")," \
	"sent $(stat_value sent_pkts "$stats") packets, received $(stat_value rcvd_pkts "$stats")"
vm_signal down
vm_wait down 600
sleep 5
objects_after=$(rdma_objects)
slab_after=$(slab_kib)
[ "$objects_after" = "$objects_before" ] && [ $((slab_after - slab_before)) -lt 16384 ]
ktap_result $? "RDMA objects as at the start ($objects_before), now ($objects_after); slab $((slab_before / 1024)) MiB then, $((slab_after / 1024)) now, peak $((slab_peak / 1024))"
driver_down rroce
ktap_result $? "delete the device and unload"
ktap_finish
