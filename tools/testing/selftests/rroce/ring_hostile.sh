#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A process that writes garbage and adversarial values into its own mapped
# SQ, RQ, SRQ and CQ rings and rings the doorbell itself (ring_hostile.c):
# every malformed case ends in an error completion or the error state, a
# producer index far ahead takes no more than its masked value, no byte
# lands outside the memory registered for it, a doorbell returns however
# fast a thread moves the producer index on, and the kernel logs no
# warning.

. "$(dirname "$0")/lib.sh"

# A second vCPU, for the thread that races the kernel.
export RROCE_VM_SMP=${RROCE_VM_SMP:-2}

in_vm || build_prog ring_hostile -libverbs -lpthread
vm_main 1 "$PROG"

run_verbs_prog "$1"
