#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Malformed, short and out-of-order uverbs commands, written raw to the
# /dev/infiniband/uverbsN of an rroce device, get the errno ib_uverbs gives
# them and never a kernel warning; so do 2000 seeded random ones.  The cases
# are in uverbs_hostile.c, which does without libibverbs so that nothing
# checks a command before the kernel does.  It is built on the host, into
# the output directory, which the VM mounts at the same path.

. "$(dirname "$0")/lib.sh"

if ! in_vm; then
	echo '#include <rdma/ib_user_verbs.h>' | "${CC:-gcc}" -E -x c - >/dev/null 2>&1 ||
		ktap_skip_all "no <rdma/ib_user_verbs.h>: install linux-libc-dev"
	build_prog uverbs_hostile
fi
vm_main 1 "$PROG"
prog=$1

require_cmd rdma
ktap_plan 5
modprobe -a ib_core ib_uverbs || ktap_skip_all "the RDMA core modules do not load"
load_rroce
ktap_result $? "insmod rroce.ko"
run rdma link add rroce0 type rroce netdev eth0
ktap_result $? "rdma link add rroce0 type rroce netdev eth0"

start=$SECONDS
run "$prog" rroce0
status=$?
ktap_result $status "uverbs_hostile: $(grep -c '^ok' <<<"$RUN_OUTPUT") cases passed," \
	"$(grep -c '^not ok' <<<"$RUN_OUTPUT") failed, exit status $status, $((SECONDS - start)) s"

run rdma link delete rroce0
ktap_result $? "rdma link delete rroce0"
rmmod rroce
ktap_result $? "rmmod rroce"
ktap_finish
