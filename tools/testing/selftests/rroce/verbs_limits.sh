#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# More QPs and MRs at once than 2^16, with distinct numbers and keys, as
# rdma res counts them (verbs_limits.c).

. "$(dirname "$0")/lib.sh"

in_vm || build_prog verbs_limits -libverbs
vm_main 1 "$PROG"

# Each QP's send ring is one more mapping in the process.
sysctl -qw vm.max_map_count=262144
# The debug kernel did not create 66,000 of each in 20 minutes: there the
# test checks the same paths under KASAN and kmemleak with 3,000; the
# count past 2^16 is the test kernel's.
run_verbs_prog "$1" $([ "$SLOWDOWN" -gt 1 ] && echo 3000)
