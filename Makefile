# SPDX-License-Identifier: GPL-2.0
#
#   make              build rroce.ko against KDIR (default: the cached test kernel)
#   make test         set up, build, and run the whole selftest suite in VMs
#                     (TESTS="a.sh b.sh": only those)
#   make test-debug   the same on the debug kernel (KASAN, lockdep, kmemleak, ...)
#   make demo         set up, build, boot two VMs and show RDMA traffic between them
#   make soak         hours of mixed traffic under faults on the debug kernel,
#                     every byte checked (SOAK_MINUTES, default 120)
#   make setup        install what is missing (Debian packages, bindgen)
#   make kernel       build the test kernel, or reuse the cached one
#   make check        rustfmt, clippy (CLIPPY=1) and no import circles; warnings
#                     are errors
#   make proto-test   unit tests of the protocol core, on the host (cargo)
#   make install KDIR=...
#                     rroce.ko, once built, into that kernel's module tree
#                     (/lib/modules/<release>/updates), then depmod
#   make clean
#
# KDIR=/path/to/kernel/build builds against another kernel with CONFIG_RUST=y;
# RUSTC and BINDGEN must then be the ones that kernel was built with.

SHELL := /bin/bash
RROCE_KCONFIG ?= test
export RROCE_KCONFIG
RUSTC ?= /usr/bin/rustc
RUSTDOC ?= /usr/bin/rustdoc
CLIPPY_DRIVER ?= /usr/bin/clippy-driver
RUSTFMT ?= /usr/bin/rustfmt
BINDGEN ?= $(shell . scripts/env.sh && echo $$BINDGEN)
export RUSTC RUSTDOC BINDGEN

# Not exported: each sub-make works the default out anew, after `make kernel`
# may have changed what it is (e.g. by installing bindgen, part of the key).
ifeq ($(origin KDIR),undefined)
KDIR := $(shell scripts/kernel.sh dir 2>/dev/null)
KDIR_ORIGIN := default
else
KDIR_ORIGIN := given
endif

# A module is compiled by the kernel's own C compiler (the debug kernel is
# built with clang).
KCC := $(if $(shell grep -s '^CONFIG_CC_IS_CLANG=y' "$(KDIR)/.config"),clang,gcc)

SELFTESTS := tools/testing/selftests/rroce

.PHONY: modules setup kernel check proto-test test test-debug soak demo bench install clean
modules:
	@scripts/check-kdir.sh "$(KDIR)" $(KDIR_ORIGIN)
	$(MAKE) -C "$(KDIR)" M="$(CURDIR)" CC=$(KCC) RUSTC="$(RUSTC)" RUSTDOC="$(RUSTDOC)" \
		CLIPPY_DRIVER="$(CLIPPY_DRIVER)" BINDGEN="$(BINDGEN)" modules

# The kernel's own rustfmt configuration, from its source tree.
RUSTFMT_CONFIG = $(firstword $(wildcard $(KDIR)/source/.rustfmt.toml $(KDIR)/.rustfmt.toml))

check:
	@scripts/check-kdir.sh "$(KDIR)" $(KDIR_ORIGIN)
	@python3 scripts/check-imports.py
	$(RUSTFMT) --edition 2021 --config-path "$(RUSTFMT_CONFIG)" --check $(shell git ls-files '*.rs')
	@$(MAKE) --no-print-directory modules CLIPPY=1

# The protocol core (drivers/infiniband/sw/rroce/proto) builds on the host too.
# So does the one-pass copy and CRC of x86-64 (rust/helpers/crc32_copy_x86_64.S).
proto-test:
	cd tools/proto-host && cargo test --locked --quiet
ifeq ($(shell uname -m),x86_64)
	$(or $(HOSTCC),cc) -I tools/crc-host -o tools/crc-host/crc32_copy_test \
		tools/crc-host/crc32_copy_test.c rust/helpers/crc32_copy_x86_64.S -Wa,--noexecstack
	tools/crc-host/crc32_copy_test
endif

setup:
	@scripts/setup.sh

kernel: setup
	@scripts/kernel.sh build

# Each step is a fresh make, so that KDIR is worked out after the kernel exists.
test:
	@$(MAKE) --no-print-directory kernel
	@$(MAKE) --no-print-directory check
	@$(MAKE) --no-print-directory modules
	@$(MAKE) --no-print-directory proto-test
	@$(if $(filter given,$(KDIR_ORIGIN)),KDIR="$(KDIR)") $(SELFTESTS)/run_tests.sh $(TESTS)

test-debug:
	@$(MAKE) --no-print-directory test RROCE_KCONFIG=debug

# Not part of test: SOAK_MINUTES (120) of NVMe-oF, NFS/RDMA, RC, UD and
# rdma_cm traffic under faults (tools/testing/selftests/rroce/soak.sh), on
# the debug kernel unless SOAK_KCONFIG says otherwise.
SOAK_KCONFIG ?= debug
# (In the environment, so that each sub-make's default KDIR is that kernel's.)
soak:
	@RROCE_KCONFIG=$(SOAK_KCONFIG) $(MAKE) --no-print-directory kernel
	@RROCE_KCONFIG=$(SOAK_KCONFIG) $(MAKE) --no-print-directory modules
	@RROCE_KCONFIG=$(SOAK_KCONFIG) $(SELFTESTS)/run_tests.sh soak.sh

demo:
	@$(MAKE) --no-print-directory kernel
	@$(MAKE) --no-print-directory modules
	@$(if $(filter given,$(KDIR_ORIGIN)),KDIR="$(KDIR)") scripts/demo.sh

# rroce against rdma_rxe, side by side; not part of test (minutes, and
# figures are not pass/fail).
bench:
	@$(MAKE) --no-print-directory kernel
	@$(MAKE) --no-print-directory modules
	@scripts/bench.sh

# Installs what `make` built for the same KDIR, under INSTALL_MOD_PATH if
# given; depmod then records rroce's dependencies and its alias, so that
# `rdma link add ... type rroce` loads it with them.
install:
	@[ "$(KDIR_ORIGIN)" = given ] || { echo "rroce: make install KDIR=<the build tree of the kernel to install for>," \
		"e.g. KDIR=/lib/modules/$$(uname -r)/build" >&2; exit 1; }
	@scripts/check-kdir.sh "$(KDIR)" $(KDIR_ORIGIN)
	@[ -f rroce.ko ] || { echo "rroce: build it first: make KDIR=$(KDIR)" >&2; exit 1; }
	$(MAKE) -C "$(KDIR)" M="$(CURDIR)" CC=$(KCC) INSTALL_MOD_DIR=updates modules_install

clean:
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C "$(KDIR)" M="$(CURDIR)" CC=$(KCC) clean; fi
	rm -f rust/bindings/bindings_generated.rs rust/bindings/.bindings_generated.rs.*
