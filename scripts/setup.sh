#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs what building and testing rroce needs, and nothing that is already
# there.  Safe to run again: a machine that has everything only gets a check.
#
# Debian packages: the kernel source, a Rust compiler with its library source
# (the kernel builds `core` itself), the kernel build prerequisites, QEMU and
# the RDMA userspace the tests drive.  crates.io: bindgen-cli, pinned.
#
# Prints the toolchain it settled on; scripts/env.sh reads the same facts.

set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

log() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || die "not root and no sudo: install the packages listed in $0 by hand"
	SUDO=sudo
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'; }

APT_UPDATED=
apt_update() {
	[ -n "$APT_UPDATED" ] && return
	log "apt-get update"
	$SUDO apt-get update -qq || die "apt-get update failed"
	APT_UPDATED=1
}

apt_install() {
	log "installing: $*"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
		die "apt-get install $* failed"
}

# Build prerequisites of the kernel and of rroce, the VM, and the userspace
# the tests run inside it (the VM shares the host's root file system): RDMA
# tools, and the middleware people build on (UCX, Open MPI, libfabric); for
# make bench and scripts/profile.sh, gnuplot and perf; tcpdump, for the
# capture test.
PACKAGES=(
	linux-source-6.12
	build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils kmod
	libclang-dev clang
	qemu-system-x86 qemu-utils
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	libibverbs-dev librdmacm-dev
	ucx-utils libucx-dev openmpi-bin libopenmpi-dev libfabric-bin libfabric-dev
	iproute2 iperf3 iputils-ping procps tcpdump
	fio nfs-kernel-server dkms
	gnuplot-nox linux-perf
)
missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
	apt_update
	apt_install "${missing[@]}"
fi

# Rust: rustc, its library source and std must be of one version, or the
# kernel's build of `core` fails.  Take what is installed if the three agree,
# otherwise the current candidate of rustc-web.
RUST_PKGS=(rustc-web rust-web-src libstd-rust-web-dev rust-web-clippy rustfmt-web)
rust_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true; }
have=$(rust_version rustc-web)
consistent=1
for p in "${RUST_PKGS[@]}"; do
	installed "$p" && [ "$(rust_version "$p")" = "$have" ] || consistent=
done
if [ -z "$consistent" ]; then
	apt_update
	want=$(apt-cache policy rustc-web | awk '/Candidate:/ {print $2}')
	[ -n "$want" ] && [ "$want" != "(none)" ] || die "no rustc-web package in the apt sources"
	apt_install $(printf '%s='"$want"' ' "${RUST_PKGS[@]}")
fi

# bindgen: the kernel needs >= 0.65.1, Debian has 0.60.
if [ ! -x "$BINDGEN" ]; then
	command -v cargo >/dev/null || die "cargo not found: it is needed once, to install bindgen-cli $BINDGEN_VERSION from crates.io"
	log "cargo install bindgen-cli $BINDGEN_VERSION into $RROCE_CACHE/bindgen-$BINDGEN_VERSION"
	cargo install --quiet --locked bindgen-cli --version "$BINDGEN_VERSION" \
		--root "$RROCE_CACHE/bindgen-$BINDGEN_VERSION" ||
		die "cargo install bindgen-cli failed"
fi

log "rustc:   $("$RUSTC" --version)"
log "bindgen: $("$BINDGEN" --version)"
log "gcc:     $(gcc -dumpfullversion)"
log "kernel:  linux-source-6.12 $(dpkg-query -W -f='${Version}' linux-source-6.12)"
log "qemu:    $(qemu-system-x86_64 --version | head -n1)"
log "ready"
