#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Checks that KDIR is a kernel build tree rroce can be built against, and that
# the tools are there, before make would bury the cause under errors.
#
#   scripts/check-kdir.sh KDIR default|given

set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

kdir=$1 origin=${2:-given}

die() {
	printf 'rroce: %s\n' "$1" >&2
	shift
	for hint; do printf '       %s\n' "$hint" >&2; done
	exit 1
}

if [ -z "$kdir" ] || [ ! -d "$kdir" ]; then
	if [ "$origin" = default ]; then
		die "no test kernel is built yet${kdir:+ (expected at $kdir)}." \
			"Run 'make kernel' to build it (about 30 minutes on 2 cores), or" \
			"pass KDIR=/path/to/a/kernel/build/tree built with CONFIG_RUST=y."
	fi
	die "KDIR=$kdir does not exist." "Pass the build tree (O=...) of a kernel built with CONFIG_RUST=y."
fi
[ -f "$kdir/Makefile" ] && [ -f "$kdir/.config" ] ||
	die "KDIR=$kdir is not a kernel build tree (no Makefile or .config)." \
		"Pass the directory the kernel was built in (its O=... directory)."
grep -q '^CONFIG_RUST=y' "$kdir/.config" ||
	die "the kernel in KDIR=$kdir is built without CONFIG_RUST=y; rroce is a Rust module." \
		"Rebuild it with CONFIG_RUST=y (tools/testing/selftests/rroce/config lists what rroce needs)," \
		"or drop KDIR to use the test kernel ('make kernel')."
grep -Eq '^CONFIG_INFINIBAND=(y|m)' "$kdir/.config" && grep -Eq '^CONFIG_INFINIBAND_USER_ACCESS=(y|m)' "$kdir/.config" ||
	die "the kernel in KDIR=$kdir has no RDMA core (CONFIG_INFINIBAND and CONFIG_INFINIBAND_USER_ACCESS)." \
		"Enable them as in tools/testing/selftests/rroce/config."
[ -f "$kdir/rust/libkernel.rmeta" ] ||
	die "the kernel's Rust crates are not built in KDIR=$kdir." "Build that kernel first ('make' in its tree)."
[ -f "$kdir/Module.symvers" ] ||
	die "KDIR=$kdir has no Module.symvers." "Build that kernel's modules first ('make modules' in its tree)."

for tool in "$RUSTC" "$BINDGEN"; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing." "Run 'make setup' (or scripts/setup.sh) to install the toolchain."
done
want=$(sed -n 's/^CONFIG_RUSTC_VERSION_TEXT="\(.*\)"/\1/p' "$kdir/.config")
have=$("$RUSTC" --version)
[ -z "$want" ] || [ "$want" = "$have" ] ||
	die "the kernel in KDIR=$kdir was built by '$want', but RUSTC=$RUSTC is '$have'." \
		"A module must be built by the same rustc as its kernel: pass RUSTC=/path/to/that/rustc."
exit 0
