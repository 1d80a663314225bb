#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the QEMU test kernel from Debian's linux-source-6.12 and caches it
# outside the repo, keyed by source version, config fragments and toolchain.
#
#   scripts/kernel.sh build   build unless the cache already has this key
#   scripts/kernel.sh dir     print the build directory for the current key
#   scripts/kernel.sh key     print the key's inputs and its hash
#
# RROCE_KCONFIG=debug selects the debug configuration (KASAN, lockdep, ...).
# The build directory is a normal kernel build tree (O=...): pass it as KDIR.

set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

# Bump when the recipe below changes in a way that changes the result.
RECIPE=1
SELFTESTS=tools/testing/selftests/rroce

log() { printf 'kernel: %s\n' "$*" >&2; }
die() { printf 'kernel: error: %s\n' "$*" >&2; exit 1; }

fragments() {
	echo "$SELFTESTS/config"
	case "$RROCE_KCONFIG" in
	test) ;;
	debug) echo "$SELFTESTS/config.debug" ;;
	*) die "unknown RROCE_KCONFIG=$RROCE_KCONFIG (test or debug)" ;;
	esac
}

# Rust and KASAN only go together in a clang-built kernel (init/Kconfig:
# RUST depends on !KASAN || CC_IS_CLANG), so the debug kernel uses clang.
compiler() {
	if [ "$RROCE_KCONFIG" = debug ]; then echo clang; else echo gcc; fi
}

source_version() {
	dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null ||
		die "linux-source-6.12 is not installed: run scripts/setup.sh"
}

key_inputs() {
	echo "recipe $RECIPE"
	echo "source linux-source-6.12 $(source_version)"
	echo "config $RROCE_KCONFIG"
	for f in $(fragments); do echo "fragment $f $(sha256sum <"$f" | cut -c1-16)"; done
	echo "rustc $("$RUSTC" --version 2>/dev/null || echo missing)"
	echo "bindgen $("$BINDGEN" --version 2>/dev/null || echo missing)"
	case "$(compiler)" in
	gcc) echo "gcc $(gcc -dumpfullversion 2>/dev/null || echo missing)" ;;
	clang) echo "clang $(clang -dumpversion 2>/dev/null || echo missing)" ;;
	esac
}

build_dir() {
	local hash
	hash=$(key_inputs | sha256sum | cut -c1-12)
	echo "$RROCE_CACHE/kernel/$RROCE_KCONFIG-$(source_version | tr '~+' '__')-$hash"
}

# Extracts the source once per version; the build itself goes to O=.
source_dir() {
	local dir="$RROCE_CACHE/src/linux-source-6.12-$(source_version | tr '~+' '__')"
	if [ ! -e "$dir/.extracted" ]; then
		log "extracting /usr/src/linux-source-6.12.tar.xz"
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -xJf /usr/src/linux-source-6.12.tar.xz -C "$dir.tmp" --strip-components=1
		touch "$dir.tmp/.extracted"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

build() {
	local out src tmp start kmake release
	out=$(build_dir)
	if [ -e "$out/.complete" ]; then
		log "cached: $out"
		return
	fi
	for tool in "$RUSTC" "$BINDGEN" "$(compiler)" flex bison; do
		command -v "$tool" >/dev/null || die "$tool not found: run scripts/setup.sh"
	done
	mkdir -p "$RROCE_CACHE/kernel"
	exec 9>"$RROCE_CACHE/kernel/.lock"
	flock 9
	[ -e "$out/.complete" ] && { log "cached: $out"; return; }

	src=$(source_dir)
	tmp="$out.tmp"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	kmake=(make -s -C "$src" O="$tmp" CC="$(compiler)" RUSTC="$RUSTC" RUSTDOC="$RUSTDOC" BINDGEN="$BINDGEN")

	log "building $RROCE_KCONFIG kernel (linux-source-6.12 $(source_version), $(compiler), $("$RUSTC" --version))"
	log "into $out"
	start=$SECONDS
	"${kmake[@]}" x86_64_defconfig kvm_guest.config >/dev/null
	# shellcheck disable=SC2046
	"$src/scripts/kconfig/merge_config.sh" -m -O "$tmp" "$tmp/.config" $(fragments) >/dev/null
	"${kmake[@]}" olddefconfig >/dev/null
	check_config "$tmp/.config"
	"${kmake[@]}" rustavailable >"$tmp/rustavailable.log" 2>&1 || {
		cat "$tmp/rustavailable.log" >&2
		die "the kernel rejects this Rust toolchain ($RUSTC, $BINDGEN); see above"
	}
	if ! "${kmake[@]}" -j"$(nproc)" bzImage modules >"$tmp/build.log" 2>&1; then
		grep -E 'error|Error' "$tmp/build.log" | head -n 40 >&2
		die "kernel build failed; full log: $tmp/build.log"
	fi
	# The VM mounts this tree over /lib/modules.
	"${kmake[@]}" INSTALL_MOD_PATH="$tmp/modroot" INSTALL_MOD_STRIP=1 modules_install >/dev/null
	release=$("${kmake[@]}" -s kernelrelease)
	touch "$tmp/.complete"
	mv "$tmp" "$out"
	# modules_install pointed the module tree's build link at the build's
	# temporary name; make install and DKMS in a VM follow it.
	ln -sfn "$out" "$out/modroot/lib/modules/$release/build"
	log "built in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s: $out"
}

# Kconfig silently drops options whose dependencies are missing; a kernel
# without one of them would fail tests in confusing ways, so say it here.
check_config() {
	local config=$1 line opt want got bad=
	while read -r line; do
		case "$line" in
		CONFIG_*=*) opt=${line%%=*} want=${line#*=} ;;
		"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} want=n ;;
		*) continue ;;
		esac
		got=$(sed -n "s/^$opt=//p" "$config")
		[ -n "$got" ] || got=n
		if [ "$got" != "$want" ]; then
			printf 'kernel: %s: wanted %s, got %s\n' "$opt" "$want" "$got" >&2
			bad=1
		fi
	done < <(cat $(fragments))
	[ -z "$bad" ] || die "the config fragments do not apply cleanly (see above)"
}

case "${1:-build}" in
build) build ;;
dir) build_dir ;;
key) key_inputs; build_dir ;;
*) die "usage: $0 [build|dir|key]" ;;
esac
