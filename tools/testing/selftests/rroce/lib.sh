# SPDX-License-Identifier: GPL-2.0
#
# Sourced by every rroce selftest.  A test is one script: started on the host,
# it boots the VMs it needs through scripts/vm.sh, which run the same script
# again inside each VM (RROCE_VM=1 or 2 there).  The VM part prints KTAP
# subtest lines and exits 0 (pass), 4 (skip) or anything else (fail).

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SELFTESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SELFTESTS_DIR/../../../.." && pwd)
RROCE_KO=${RROCE_KO:-$REPO/rroce.ko}
# How many times slower this kernel is than the test kernel (4 for the debug
# kernel): time limits stretch by it, and the heaviest rounds shrink by it.
SLOWDOWN=${RROCE_SLOWDOWN:-1}

in_vm() { [ -n "${RROCE_VM:-}" ]; }

# tick SECONDS: wait SECONDS, a fraction allowed, without starting a
# process, for the loops that poll: a `sleep` is a fork and an exec each
# time, which a debug VM under emulation pays dearly for. `read` times out
# (status over 128) on a pipe that this shell holds open both ways, so
# nothing ever comes; should it fail otherwise, `sleep` waits instead.
exec {TICK_FD}<> <(:)
tick() { read -r -t "$1" -u "$TICK_FD"; [ $? -gt 128 ] || sleep "$1"; }

# backoff: tick for $pause tenths of a second, then double $pause, up to
# 2 s, for the long waits on the shared 9P directory: each look is a round
# trip to the host, which a debug VM pays for (rexec.sh, looking twice
# every 0.2 s, took 7 to 9 % of VM 1 while mpi_check ran in a debug soak).
# The caller sets pause=2 to start, and again whenever something happens.
backoff() {
	tick "$((pause / 10)).$((pause % 10))"
	pause=$((pause * 2 > 20 ? 20 : pause * 2))
}

# vm_main N [ARG...]: on the host, boot N VMs that run this script with ARGs
# and exit with their verdict; inside a VM, return and let the script go on.
vm_main() {
	in_vm && return 0
	local n=$1
	shift
	exec "$REPO/scripts/vm.sh" -n "$n" -t "${VM_TIMEOUT:-300}" ${KSFT_OUT:+-o "$KSFT_OUT"} -- "$0" "$@"
}

# KTAP subtest results, counted so the script can exit with the verdict.
ktap_count=0
ktap_failed=0
ktap_planned=
ktap_plan() { ktap_planned=$1; echo "TAP version 13"; echo "1..$1"; }
# While REFERENCE names a driver that is only compared with (the C rxe),
# results are comment lines ("# rxe: ok: ..."), which count for nothing.
# On a slow (debug) kernel each result follows the time it came at, to show
# which parts of a test take the time there.
ktap_time() { [ "$SLOWDOWN" = 1 ] || echo "# at ${SECONDS} s"; }
ktap_ok() {
	ktap_time
	if [ -n "${REFERENCE:-}" ]; then echo "# $REFERENCE: ok: $*"; return; fi
	ktap_count=$((ktap_count + 1))
	echo "ok $ktap_count $*"
}
ktap_fail() {
	ktap_time
	if [ -n "${REFERENCE:-}" ]; then echo "# $REFERENCE: FAILED: $*"; return; fi
	ktap_count=$((ktap_count + 1))
	ktap_failed=$((ktap_failed + 1))
	echo "not ok $ktap_count $*"
	# Tell the peer VM not to wait for us any longer.
	in_vm && touch "$RROCE_SHARED/failed.vm$RROCE_VM"
}
ktap_result() { if [ "$1" = 0 ]; then ktap_ok "${@:2}"; else ktap_fail "${@:2}"; fi; }
# rxe_reference: whether to run a test's rdma_rxe comparison, which is
# printed, not tested: only when RROCE_RXE_COMPARE=1 asks for it. The
# comparisons took a sixth of the suite's time (data_faults' alone 210 s,
# the middleware tests' 55 to 80 s each), for outcomes no run checks.
rxe_reference() {
	[ "${RROCE_RXE_COMPARE:-0}" = 1 ] && return 0
	echo "# rdma_rxe's comparison left out (RROCE_RXE_COMPARE=1 runs it)"
	return 1
}
ktap_skip_all() { echo "1..0 # SKIP $*"; exit $KSFT_SKIP; }
# The verdict: a pass only if every planned result came, and passed.
ktap_finish() {
	if [ -n "$ktap_planned" ] && [ "$ktap_count" != "$ktap_planned" ]; then
		echo "# planned $ktap_planned results, reported $ktap_count"
		exit $KSFT_FAIL
	fi
	[ $ktap_failed = 0 ] && exit $KSFT_PASS
	exit $KSFT_FAIL
}

# load_rroce [PARAM=VALUE...]: insmod rroce.ko with those parameters after
# the modules it depends on (insmod does not resolve dependencies, and
# rroce.ko is not in the VM's module tree).
load_rroce() {
	local deps
	deps=$(modinfo -F depends "$RROCE_KO") || return 1
	modprobe -a ${deps//,/ } && insmod "$RROCE_KO" "$@"
}

# driver_up DRIVER: rroce, or the C rdma_rxe (DRIVER rxe), loaded with its
# device on eth0, whose name it puts in DEV. Only one of them can hold UDP
# port 4791 at a time.
driver_up() {
	if [ "$1" = rroce ]; then
		DEV=rroce0
		load_rroce && rdma link add $DEV type rroce netdev eth0
	else
		DEV=rxe0
		modprobe rdma_rxe && rdma link add $DEV type rxe netdev eth0
	fi
}

# driver_down DRIVER: DEV deleted and DRIVER unloaded.
driver_down() {
	rdma link delete "$DEV"
	if [ "$1" = rroce ]; then rmmod rroce; else rmmod rdma_rxe; fi
}

# build_prog NAME [GCC ARG...]: on the host, compile NAME.c of this
# directory into the output directory, which the VM sees at the same path,
# and set PROG to the binary. Skips the test without a compiler.
build_prog() {
	local name=$1
	shift
	command -v "${CC:-gcc}" >/dev/null || ktap_skip_all "no C compiler"
	KSFT_OUT=${KSFT_OUT:-$(mktemp -d)}
	mkdir -p "$KSFT_OUT"
	PROG=$KSFT_OUT/$name
	"${CC:-gcc}" -O2 -Wall -Wextra -o "$PROG" "$SELFTESTS_DIR/$name.c" "$@" ||
		{ echo "# building $name.c failed"; exit $KSFT_FAIL; }
}

# run_verbs_prog PROG [ARG...]: in the VM, with rroce0 on eth0, run a
# libibverbs test program (PROG rroce0 ARG...) and report it as one KTAP line
# among four: load, add, the program's own results, delete and unload.
run_verbs_prog() {
	local prog=$1
	shift
	require_cmd rdma
	ktap_plan 4
	load_rroce
	ktap_result $? "insmod rroce.ko"
	run rdma link add rroce0 type rroce netdev eth0
	ktap_result $? "rdma link add rroce0 type rroce netdev eth0"
	run "$prog" rroce0 "$@"
	ktap_result $? "${prog##*/}: $(grep -c '^ok' <<<"$RUN_OUTPUT") passed," \
		"$(grep -c '^not ok' <<<"$RUN_OUTPUT") failed"
	rdma link delete rroce0 && rmmod rroce
	ktap_result $? "delete the device and unload"
	ktap_finish
}

# run_verbs_prog_vs_rxe PROG: in the VM, run a libibverbs test program on
# rroce0 (three KTAP lines: add, the program's own results, delete), then,
# with RROCE_RXE_COMPARE=1, on the C rxe, whose outcome is printed, not
# tested.
run_verbs_prog_vs_rxe() {
	local prog=$1
	require_cmd rdma
	ktap_plan 3
	driver_up rroce
	ktap_result $? "rroce0 on eth0"
	run "$prog" rroce0
	ktap_result $? "rroce: $(grep -c '^ok' <<<"$RUN_OUTPUT") passed," \
		"$(grep -c '^not ok' <<<"$RUN_OUTPUT") failed"
	driver_down rroce
	ktap_result $? "delete the device and unload"
	if rxe_reference && driver_up rxe; then
		"$prog" rxe0 >/tmp/rxe.out 2>&1
		sed 's/^/#   rxe: /' /tmp/rxe.out
		echo "# rxe: $(grep -c '^ok' /tmp/rxe.out) passed, $(grep -c '^not ok' /tmp/rxe.out) failed"
		driver_down rxe
	fi
	ktap_finish
}

# A failed precondition in the VM, not a failed test: exit 4.
require_cmd() {
	local cmd
	for cmd; do command -v "$cmd" >/dev/null || ktap_skip_all "$cmd is not installed"; done
}

# Runs a command, shows its output indented, and keeps it in $RUN_OUTPUT.
run() {
	RUN_OUTPUT=$("$@" 2>&1)
	local status=$?
	printf '%s\n' "$RUN_OUTPUT" | sed 's/^/#   /'
	return $status
}

# qp_target PROG ARG...: starts PROG, a program that holds a QP for a
# crafted peer and prints "target QPN PSN RKEY VA" (read_target.c,
# forged_target.c), in the background: its pid in target_pid, its output
# in /tmp/target.out, its line for the peer VM in RROCE_SHARED/target, its
# QP number in qpn, and the QP bound to a counter set of its own on rroce0.
qp_target() {
	stdbuf -oL "$@" >/tmp/target.out 2>&1 &
	target_pid=$!
	wait_output /tmp/target.out '^target ' 30 $target_pid &&
		grep '^target ' /tmp/target.out | cut -d' ' -f2- >"$RROCE_SHARED/target" &&
		read -r qpn _ <"$RROCE_SHARED/target" &&
		rdma statistic qp bind link rroce0/1 lqpn $((qpn))
}

# The two VMs meet through the output directory they both mount. PEER_VM
# is the other one's index, for the polling loops, where $(peer) would fork.
PEER_VM=$((3 - ${RROCE_VM:-0}))
peer() { echo $PEER_VM; }
peer_ip4() { echo "192.0.2.$(peer)"; }

vm_signal() { touch "$RROCE_SHARED/sync.$1.vm$RROCE_VM"; }

# True once the peer VM has failed a subtest or finished: nothing to wait for.
peer_gone() { [ -e "$RROCE_SHARED/failed.vm$PEER_VM" ] || [ -e "$RROCE_SHARED/vm$PEER_VM.status" ]; }

# vm_wait NAME [SECONDS]: wait for the peer's vm_signal NAME, SECONDS (120)
# times RROCE_SLOWDOWN at most.
vm_wait() {
	local flag="$RROCE_SHARED/sync.$1.vm$(peer)" limit=$((${2:-120} * SLOWDOWN)) waited=0
	while [ ! -e "$flag" ]; do
		if peer_gone || [ $waited -ge $((limit * 10)) ]; then
			echo "# gave up waiting for vm$(peer) to reach '$1'"
			return 1
		fi
		tick 0.1
		waited=$((waited + 1))
	done
}

# await PID: wait for a background server; stop it if the peer is gone, as
# its client will then never come.
await() {
	while kill -0 "$1" 2>/dev/null; do
		if peer_gone; then
			sleep 1
			kill "$1" 2>/dev/null && echo "# stopped the server: vm$(peer) failed or finished"
			break
		fi
		tick 0.1
	done
	wait "$1"
}

# wait_listen PORT [PID]: wait until a TCP server listens on PORT (a tool's
# out-of-band connection setup), so the peer's client finds it; false,
# saying so, after 120 s times RROCE_SLOWDOWN (as long as the peer waits
# for it in vm_wait), or at once if the server, PID, has ended. The limit
# is in seconds, not rounds: on a loaded debug VM one round of ss took
# seconds. Also run in other namespaces by its text alone (data_netns),
# where SLOWDOWN is not set.
wait_listen() {
	local slowdown=${SLOWDOWN:-1} end
	end=$((SECONDS + 120 * slowdown))
	while [ $SECONDS -lt $end ]; do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		if [ -n "$2" ] && ! kill -0 "$2" 2>/dev/null; then
			echo "# wait_listen: the server ended before it listened on port $1"
			return 1
		fi
		sleep 0.1
	done
	echo "# wait_listen: nothing listens on port $1 after $((120 * slowdown)) s"
	return 1
}

# wait_output FILE PATTERN SECONDS [PID]: wait until FILE, a background
# tool's line-buffered output, matches PATTERN; false after SECONDS times
# RROCE_SLOWDOWN, or at once if the tool, PID, has ended without.
wait_output() {
	local i
	for i in $(seq $(($3 * 10 * SLOWDOWN))); do
		grep -q "$2" "$1" && return 0
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

# gid_index DEV IPV4: the index of the RoCE v2 GID of IPV4 on port 1 of DEV.
# ib_core fills the GID table asynchronously, so this waits for it.
gid_index() {
	gid_wait "$1" "$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ })"
}

# gid_wait DEV GID: the index of GID (as sysfs spells it), a RoCE v2 one, on
# port 1 of DEV, once it appears.
gid_wait() {
	local dev=$1 want=$2 i try
	for try in $(seq 50); do
		for i in $(seq 0 15); do
			[ "$(cat "/sys/class/infiniband/$dev/ports/1/gids/$i" 2>/dev/null)" = "$want" ] &&
				[ "$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
				{ echo "$i"; return 0; }
		done
		sleep 0.1
	done
	return 1
}

# link_stats DEV: DEV's counters, on one line as `rdma statistic` prints them.
link_stats() { rdma statistic show link "$1"/1; }
# stat_value NAME STATS: the counter NAME in STATS, a link_stats line.
stat_value() { grep -o " $1 [0-9]*" <<<"$2" | cut -d' ' -f3; }
# link_counter DEV NAME: DEV's counter NAME now.
link_counter() { stat_value "$2" "$(link_stats "$1")"; }
# ktap_sent DEV BEFORE WHAT: one KTAP line, WHAT, that passes if DEV sent
# more than 1000 packets since its sent_pkts counter read BEFORE: the
# traffic went through the device, not around it.
ktap_sent() {
	local moved=$(($(link_counter "$1" sent_pkts) - $2))
	[ "$moved" -gt 1000 ]
	ktap_result $? "$3 ($moved packets)"
}
# tracing_up: tracefs at $TRACEFS, mounted unless it is.
TRACEFS=/sys/kernel/tracing
tracing_up() { mountpoint -q $TRACEFS || mount -t tracefs none $TRACEFS; }
# trace_on: rroce's tracepoints into a ring buffer of 16 MiB.
trace_on() {
	echo 16384 >$TRACEFS/buffer_size_kb && echo 1 >$TRACEFS/events/rroce/enable &&
		echo 1 >$TRACEFS/tracing_on
}
# writable_modules: a writable layer over the VM's read-only /lib/modules,
# for a test that installs the module there; the test is skipped without.
writable_modules() {
	mkdir -p /tmp/modlayer && mount -t tmpfs tmpfs /tmp/modlayer &&
		mkdir /tmp/modlayer/upper /tmp/modlayer/work &&
		mount -t overlay overlay -o lowerdir=/lib/modules,upperdir=/tmp/modlayer/upper,workdir=/tmp/modlayer/work /lib/modules ||
		ktap_skip_all "no writable layer over /lib/modules"
}
# installed_link_up WHAT: with nothing of RDMA but the core loaded,
# `rdma link add rroce0` loads rroce by its alias; then 100 checked
# pingpongs between two processes over it. Two KTAP lines about WHAT.
installed_link_up() {
	local gid pid
	modprobe -a ib_core ib_uverbs rdma_ucm
	rdma link add rroce0 type rroce netdev eth0 && grep -q '^rroce ' /proc/modules
	ktap_result $? "rdma link add ... type rroce loads $1"
	gid=$(gid_index rroce0 "$RROCE_IP4")
	timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18910 -n 100 -s 4096 -c >/tmp/server 2>&1 &
	pid=$!
	wait_listen 18910 && run timeout 120 ibv_rc_pingpong -d rroce0 -g "$gid" -p 18910 -n 100 -s 4096 -c 127.0.0.1 &&
		wait $pid && grep -q "iters in" /tmp/server
	ktap_result $? "rc_pingpong with data checks over $1"
}
# show_link_stats DEV: DEV's counters, as a comment in the test's output.
show_link_stats() { echo "# $(link_stats "$1")"; }

# bw_row BYTES ITERS: a perftest bandwidth result row for BYTES-byte messages
# and all ITERS iterations, printed only once every one of them completed
# successfully.  The figures after them are not checked: perftest derives
# them from a CPU clock estimate that fails under emulation now and then
# ("Correlation coefficient r^2: 0.59 < 0.9"), leaving 0.00.
bw_row() { echo "^ *$1 +$2 +[0-9.]+ +[0-9.]+[[:space:]]"; }

# pair NAME PORT CHECK CMD...: a client/server tool run across the VMs. VM 1
# runs CMD as the server, listening on TCP PORT; VM 2 runs CMD with the
# address $PEER (default: VM 1's IPv4 address) appended, after the option
# $PAIR_ADDR_OPT if the tool needs one (e.g. -s). Each side is one
# KTAP line, which passes if CMD succeeds and its output matches CHECK (the
# server's: $SERVER_CHECK, if set, for tools whose server prints no result).
# Each side may take PAIR_TIMEOUT seconds (default 120) times RROCE_SLOWDOWN.
pair() {
	local name=$1 port=$2 check=$3 pid status
	local limit=$((${PAIR_TIMEOUT:-120} * SLOWDOWN))
	shift 3
	if [ "$RROCE_VM" = 1 ]; then
		timeout "$limit" "$@" >"/tmp/$name.out" 2>&1 &
		pid=$!
		${PAIR_WAIT:-wait_listen} "$port" $pid && vm_signal "$name"
		await $pid
		status=$?
		sed 's/^/#   /' "/tmp/$name.out"
		[ $status = 0 ] && grep -Eq "${SERVER_CHECK:-$check}" "/tmp/$name.out"
		ktap_result $? "$name, server side"
	else
		vm_wait "$name" &&
			run timeout "$limit" "$@" $PAIR_ADDR_OPT "${PEER:-$(peer_ip4)}" &&
			grep -Eq "$check" <<<"$RUN_OUTPUT"
		ktap_result $? "$name, client side"
	fi
}

# loop NAME PORT CHECK CMD...: a client/server tool on one device of one
# VM, CMD as server and as client of itself (127.0.0.1), both of whose
# outputs must match CHECK; one KTAP line.
loop() {
	local name=$1 port=$2 check=$3 pid limit=$((120 * SLOWDOWN))
	shift 3
	timeout $limit "$@" >"/tmp/$name.server" 2>&1 &
	pid=$!
	wait_listen "$port" && run timeout $limit "$@" 127.0.0.1 && grep -Eq "$check" <<<"$RUN_OUTPUT" &&
		wait $pid && grep -Eq "$check" "/tmp/$name.server"
	ktap_result $? "$name, client and server on one device"
}

# wait_cm_listen PORT: wait until an rdma_cm ID listens on PORT (rping,
# ucmatose), which no TCP socket shows.
wait_cm_listen() {
	local i
	for i in $(seq 300); do
		rdma resource show cm_id 2>/dev/null | grep -Eq "LISTEN.*:$1( |$)" && return 0
		sleep 0.1
	done
	return 1
}

# gid6_index DEV IPV6: as gid_index, for a full IPv6 address.
gid6_index() {
	gid_wait "$1" "$(python3 -c 'import ipaddress,sys; print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$2")"
}

# rexec_serve FLAG: run what the peer's rexec.sh (Open MPI's remote shell)
# hands over, one command at a time, until the peer signals FLAG or is
# gone. True if it ran at least one and all ended well.
rexec_serve() {
	local job status ran=0 failed=0 pause=2
	until [ -e "$RROCE_SHARED/sync.$1.vm$PEER_VM" ] || peer_gone; do
		for job in "$RROCE_SHARED"/rexec.$PEER_VM.*.cmd; do
			[ -e "$job" ] || continue
			job=${job%.cmd}
			mv "$job.cmd" "$job.run"
			bash -c "$(cat "$job.run")" >"$job.out" 2>&1
			status=$?
			ran=$((ran + 1))
			[ $status = 0 ] || failed=$((failed + 1))
			# Whole, or not at all, to rexec.sh, which waits for it.
			echo $status >"$job.status.tmp" && mv "$job.status.tmp" "$job.status"
			pause=2
		done
		backoff
	done
	[ $ran -gt 0 ] && [ $failed = 0 ]
}

# ucx_env DEV GID TLS: the environment that puts UCX on port 1 of DEV, its
# GID index GID and the transports TLS, and nothing else.
ucx_env() { echo "UCX_NET_DEVICES=$1:1 UCX_IB_GID_INDEX=$2 UCX_TLS=$3"; }
