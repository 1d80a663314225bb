#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots one or two VMs of the test kernel under QEMU, runs a command in each,
# and fails if the command fails in any VM or any VM's dmesg shows a kernel
# warning, BUG, oops, KASAN/UBSAN report, lockdep splat, leak or RCU stall.
#
#   scripts/vm.sh [options] -- COMMAND [ARG...]
#   scripts/vm.sh --shell            an interactive shell in one VM
#
#   -n N        number of VMs, 1 or 2 (default 1)
#   -t SECONDS  time limit for COMMAND in each VM (default 600)
#   -o DIR      output directory (default: a new one under the cache)
#   -q          print only the verdict, not the VMs' output
#
# The VMs share the host's root file system read-only (with an in-memory
# overlay on top), so COMMAND, rdma-core and perftest are the host's; the
# output directory is mounted read-write at its host path.  VM i (1 or 2) gets
# RROCE_VM=i, RROCE_SLOWDOWN (how many times its time limits were stretched:
# 1, or 4 on a KASAN kernel) and a NIC named eth0 on
# a private link to the other VM: 192.0.2.i/24 and 2001:db8::i/64.  The
# command runs with the host's working directory when it lies in the repo.
# Each VM writes vmI.log (the command's output), vmI.status, vmI.dmesg and
# vmI.console into the output directory, which both VMs see: tests use it to
# wait for each other (tools/testing/selftests/rroce/lib.sh).
#
# Environment: KDIR (default: the cached test kernel), RROCE_ACCEL=kvm to use
# KVM where it boots a stock kernel, RROCE_VM_MEM (MiB), RROCE_VM_SMP,
# RROCE_QEMU_OPTS (extra QEMU options, e.g. "-icount shift=0,sleep=off"),
# RROCE_RXE_COMPARE=1 to have the tests run their rdma_rxe comparisons.

set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/scripts/env.sh"

die() { printf 'vm: error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '/^#   scripts/,/^#   -q/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

vms=1 limit=600 out= quiet= shell=
while [ $# -gt 0 ]; do
	case "$1" in
	-n) vms=$2; shift 2 ;;
	-t) limit=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	-q) quiet=1; shift ;;
	--shell) shell=1; shift ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ "$vms" = 1 ] || [ "$vms" = 2 ] || die "-n takes 1 or 2"
[ -n "$shell" ] && vms=1
[ -n "$shell" ] || [ $# -gt 0 ] || usage

KDIR=${KDIR:-$("$REPO/scripts/kernel.sh" dir)}
bzimage=$KDIR/arch/x86/boot/bzImage

accel=${RROCE_ACCEL:-tcg}
mem=${RROCE_VM_MEM:-1536}
smp=${RROCE_VM_SMP:-1}
kparams=${RROCE_KPARAMS:-}
# How long a VM may take to boot and shut down around its command.
boot=240
if grep -q '^CONFIG_KASAN=y' "$KDIR/.config"; then
	mem=${RROCE_VM_MEM:-2560}
	# Under TCG the debug kernel's ACPI interpreter is so slow that each PCI
	# _PRT evaluation runs into its 30 s loop timeout: route PCI interrupts
	# without ACPI. Poison freed and new slab objects (config.debug says why
	# here rather than SLUB_DEBUG_ON). Stay on 4-level paging: with TCG's
	# 5-level paging (-cpu max) KASAN reports a wild access in the first
	# interrupt, during identify_cpu, before any module is loaded.
	kparams=${RROCE_KPARAMS:-pci=noacpi slub_debug=P no5lvl}
	# Everything takes several times longer there.
	slowdown=${RROCE_DEBUG_SLOWDOWN:-4}
	limit=$((limit * slowdown))
	boot=900
fi
modules=$KDIR/modroot/lib/modules
[ -f "$bzimage" ] || die "no kernel at $bzimage: run 'make kernel' (or set KDIR)"
[ -d "$modules" ] || die "no installed modules at $modules: run 'make INSTALL_MOD_PATH=$KDIR/modroot modules_install' in the kernel tree"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing: run 'make setup'"

if [ -z "$out" ]; then
	mkdir -p "$RROCE_CACHE/runs"
	out=$(mktemp -d "$RROCE_CACHE/runs/vm.XXXXXX")
fi
mkdir -p "$out" && out=$(cd "$out" && pwd)
rm -f "$out"/vm[12].*

cwd=$PWD
case "$cwd/" in "$REPO"/*) ;; *) cwd=$REPO ;; esac
{
	printf 'RROCE_REPO=%q\nRROCE_CWD=%q\nRROCE_VMS=%q\nRROCE_TIMEOUT=%q\nRROCE_SHELL=%q\n' \
		"$REPO" "$cwd" "$vms" "$limit" "$shell"
	printf 'RROCE_RXE_COMPARE=%q\n' "${RROCE_RXE_COMPARE:-0}"
	printf 'RROCE_CMD=('; printf ' %q' "$@"; printf ' )\n'
	echo 'RROCE_MAC=52:54:00:52:52:0$RROCE_VM RROCE_IP4=192.0.2.$RROCE_VM RROCE_IP6=2001:db8::$RROCE_VM'
	echo 'RROCE_SHARED=$RROCE_OUT'
	echo 'export RROCE_VM RROCE_VMS RROCE_OUT RROCE_SHARED RROCE_REPO RROCE_IP4 RROCE_IP6 RROCE_RXE_COMPARE'
} >"$out/job"

# Two free UDP ports on loopback carry the link between the VMs.
read -r port1 port2 < <(python3 -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')


# Sets qemu=(...), the command line of VM $1 whose end of the link is
# 127.0.0.1:$2 and whose peer's is 127.0.0.1:$3.
qemu_command() {
	local i=$1 mine=$2 peer=$3 console
	local fs="security_model=none,multidevs=remap"
	if [ -n "$shell" ]; then console=(-serial mon:stdio); else console=(-serial "file:$out/vm$i.console"); fi
	# no_timer_check: under TCG on a busy host, the boot-time check that
	# timer interrupts arrive can time out and panic the kernel ("IO-APIC +
	# timer doesn't work!").
	# shellcheck disable=SC2206
	qemu=(qemu-system-x86_64 -name "rroce-vm$i" -machine "pc,accel=$accel" -cpu max -smp "$smp" -m "$mem" \
		-nodefaults -no-user-config -display none -no-reboot "${console[@]}" \
		-kernel "$bzimage" \
		-append "console=ttyS0 loglevel=5 panic=-1 no_timer_check root=/dev/root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=1048576 ro init=$REPO/scripts/vm-init.sh RROCE_VM=$i RROCE_OUT=$out RROCE_SLOWDOWN=${slowdown:-1} $kparams" \
		-fsdev "local,id=root,path=/,readonly=on,$fs" -device virtio-9p-pci,fsdev=root,mount_tag=/dev/root \
		-fsdev "local,id=out,path=$out,$fs" -device virtio-9p-pci,fsdev=out,mount_tag=out \
		-fsdev "local,id=modules,path=$modules,readonly=on,$fs" -device virtio-9p-pci,fsdev=modules,mount_tag=modules \
		-netdev "socket,id=link,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$mine" \
		-device "virtio-net-pci,netdev=link,mac=52:54:00:52:52:0$i" \
		-device virtio-rng-pci \
		${RROCE_QEMU_OPTS:-})
}

if [ -n "$shell" ]; then
	qemu_command 1 "$port1" "$port2"
	exec "${qemu[@]}"
fi

# What counts as a dirty kernel: any of these in a VM's dmesg.
BAD='WARNING:|BUG:|Oops|Kernel panic|kernel BUG|KASAN|UBSAN|general protection fault|Call Trace:|'\
'possible recursive locking|possible circular locking|inconsistent lock state|suspicious RCU usage|'\
'rcu_.*detected stalls|rcu: INFO|unreferenced object|suspected memory leak|blocked for more than|'\
'soft lockup|hard LOCKUP|list_add corruption|list_del corruption|refcount_t:|cut here'

# Boots the VMs and waits for them. A VM that ends without a status (its
# kernel died, or it hung) is marked failed for its peer, which then stops
# waiting for it (lib.sh's peer_gone).
run_vms() {
	local i ended
	local -A vm_of=()
	for i in $(seq "$vms"); do
		if [ "$i" = 1 ]; then qemu_command 1 "$port1" "$port2"; else qemu_command 2 "$port2" "$port1"; fi
		# The guest enforces the limit itself; this catches a VM that hangs.
		timeout -k 10 $((limit + boot)) "${qemu[@]}" >"$out/vm$i.qemu" 2>&1 </dev/null &
		vm_of[$!]=$i
	done
	while [ ${#vm_of[@]} -gt 0 ]; do
		ended=
		wait -n -p ended "${!vm_of[@]}"
		[ -n "$ended" ] || break
		i=${vm_of[$ended]}
		unset "vm_of[$ended]"
		[ -s "$out/vm$i.status" ] || touch "$out/failed.vm$i"
	done
}

# Whether VM $1's kernel died before the command began: nothing of the
# test had run, nor rroce, which only the command loads.
died_booting() {
	[ ! -e "$out/vm$1.status" ] && [ ! -e "$out/vm$1.log" ] &&
		grep -Eq "$BAD" "$out/vm$1.console" 2>/dev/null
}

# A kernel that dies while booting is booted again, up to twice: under TCG
# with two vCPUs, the boot's own code patching hits a stale int3 (an "Oops:
# int3" in sched_clock_cpu, no module loaded) in about one boot in seven,
# which is the emulator's fault and not the test's. The files of the last
# attempt that died are kept.
start=$SECONDS
before=$(ls -A "$out")
for attempt in 1 2 3; do
	run_vms
	crashed=
	for i in $(seq "$vms"); do died_booting "$i" && crashed+=" vm$i"; done
	{ [ -z "$crashed" ] || [ "$attempt" = 3 ]; } && break
	kept=$out/boot-crash
	rm -rf "$kept"
	mkdir -p "$kept"
	for f in "$out"/* "$out"/.[!.]*; do
		[ -e "$f" ] && [ "$f" != "$kept" ] || continue
		grep -qxF "${f##*/}" <<<"$before" || mv "$f" "$kept/"
	done
	for i in $crashed; do
		printf '# vm: %s died while booting, before the test began: %s; booting again (its console: %s)\n' \
			"$i" "$(grep -Eh -m 1 "$BAD" "$kept/$i.console")" "$kept/$i.console"
	done
done

# Reports of other kernel code that a test can trigger but not avoid, and
# that are not bugs; each is named in the verdict and judged no further.
# - nvmet-rdma: an I/O queue's connect command that arrives before the
#   target has seen ESTABLISHED (a fast host's; real hardware's too) runs
#   under that connection's rdma_cm handler_mutex and takes
#   nvmet_config_sem; removing a port takes nvmet_config_sem and then the
#   listening id's handler_mutex. One lock class covers both ids, but no
#   path takes a listener's handler_mutex and then nvmet_config_sem.
# Lockdep stops after its first report, so one of these ends its checking
# in that VM: the nvmet one comes only when the target's port is removed.
KNOWN='nvmet-rdma connect before ESTABLISHED (nvmet_config_sem, handler_mutex)'
judged_log() {
	awk -v known="$KNOWN" '
	/WARNING: possible circular locking dependency detected/ { held = 1; report = "" }
	held {
		report = report $0 "\n"
		if ($0 !~ /<\/TASK>/) next
		held = 0
		if (report ~ /nvmet_config_sem/ && report ~ /id_priv->handler_mutex/ &&
		    report ~ /nvmet_execute_io_connect/ && report ~ /nvmet_rdma_disable_port/)
			print "rroce: known report: " known
		else
			printf "%s", report
		report = ""
		next
	}
	{ print }
	END { printf "%s", report }' "$@"
}

verdict=0 skipped=0 reasons=()
for i in $(seq "$vms"); do
	if [ -z "$quiet" ] && [ -s "$out/vm$i.log" ]; then
		sed "s/^/# vm$i: /" "$out/vm$i.log"
	fi
	status=$(cat "$out/vm$i.status" 2>/dev/null)
	case "$status" in
	0) ;;
	4) skipped=1 ;;
	"")
		verdict=1
		reasons+=("vm$i: no exit status: the VM crashed or timed out; last console lines:")
		while IFS= read -r line; do reasons+=("    $line"); done < <(tail -n 15 "$out/vm$i.console" 2>/dev/null; tail -n 5 "$out/vm$i.qemu")
		;;
	*) verdict=1 reasons+=("vm$i: the command exited with status $status") ;;
	esac
	log=$out/vm$i.dmesg
	[ -f "$log" ] || log=$out/vm$i.console
	judged_log "$log" >"$out/vm$i.judged" 2>/dev/null
	known=$(grep -m 1 -o 'known report: .*' "$out/vm$i.judged")
	[ -z "$known" ] || reasons+=("vm$i: $known")
	if grep -Eq "$BAD" "$out/vm$i.judged" "$out/vm$i.kmemleak" 2>/dev/null; then
		verdict=1
		reasons+=("vm$i: the kernel log is not clean:")
		while IFS= read -r line; do reasons+=("    $line"); done < <(grep -Eh -m 10 "$BAD" "$out/vm$i.judged" "$out/vm$i.kmemleak" 2>/dev/null)
	fi
done
for r in "${reasons[@]}"; do printf '# %s\n' "$r"; done
printf '# vm: %s VM(s), %d s, output in %s\n' "$vms" $((SECONDS - start)) "$out"
[ $verdict = 0 ] && [ $skipped = 1 ] && exit 4
exit $verdict
