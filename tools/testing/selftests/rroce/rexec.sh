#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The remote shell through which mpirun on one VM starts its daemon on the
# other (Open MPI's plm_rsh_agent), for VMs without ssh: `rexec.sh HOST
# WORD...` hands the command line WORD... to the peer VM, whose rexec_serve
# (lib.sh) runs it as ssh would, and exits with its status once it ends.

shift
# A wait that starts no process each time (lib.sh's tick).
exec {tick}<> <(:)
job=$RROCE_SHARED/rexec.$RROCE_VM.$$.$(date +%s%N)
printf '%s\n' "$*" >"$job.tmp" && mv "$job.tmp" "$job.cmd"
while [ ! -e "$job.status" ]; do
	[ -e "$RROCE_SHARED/vm$((3 - RROCE_VM)).status" ] && exit 255
	read -r -t 0.2 -u "$tick"
	[ $? -gt 128 ] || sleep 0.2
done
exit "$(cat "$job.status")"
