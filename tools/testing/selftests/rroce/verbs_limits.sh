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
run_verbs_prog "$1"
