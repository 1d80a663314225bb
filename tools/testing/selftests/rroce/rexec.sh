#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The remote shell through which mpirun on one VM starts its daemon on the
# other (Open MPI's plm_rsh_agent), for VMs without ssh: `rexec.sh HOST
# WORD...` hands the command line WORD... to the peer VM, whose rexec_serve
# (lib.sh) runs it as ssh would, and exits with its status once it ends.

. "$(dirname "$0")/lib.sh"
shift
job=$RROCE_SHARED/rexec.$RROCE_VM.$$.$(date +%s%N)
printf '%s\n' "$*" >"$job.tmp" && mv "$job.tmp" "$job.cmd"
pause=2
while [ ! -e "$job.status" ]; do
	[ -e "$RROCE_SHARED/vm$PEER_VM.status" ] && exit 255
	backoff
done
exit "$(cat "$job.status")"
