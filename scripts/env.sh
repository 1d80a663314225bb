# SPDX-License-Identifier: GPL-2.0
#
# Shared settings of the rroce scripts: sourced, never run.  Every path and
# tool the build and the VM harness use is decided here, once.

# Where built kernels, bindgen and other large things live: outside the repo,
# so a fresh clone reuses them.
RROCE_CACHE=${RROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rroce}

# Debian's rustc (with its library source), never rustup's that comes first on
# PATH: the kernel's rust/ crates and every module must be built by one and
# the same compiler.
RUSTC=${RUSTC:-/usr/bin/rustc}
RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
BINDGEN_VERSION=0.69.5
BINDGEN=${BINDGEN:-$RROCE_CACHE/bindgen-$BINDGEN_VERSION/bin/bindgen}

# The test kernel configuration: "test" (fast) or "debug" (KASAN, lockdep, ...).
RROCE_KCONFIG=${RROCE_KCONFIG:-test}
