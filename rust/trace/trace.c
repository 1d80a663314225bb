// SPDX-License-Identifier: GPL-2.0
/*
 * rroce's tracepoints, defined here, and functions Rust can call for them:
 * the trace_*() calls are static inlines.
 */
#define CREATE_TRACE_POINTS
#include "rroce_trace.h"
#include "trace.h"

int rroce_tracing;

int rroce_trace_reg(void)
{
	WRITE_ONCE(rroce_tracing, rroce_tracing + 1);
	return 0;
}

void rroce_trace_unreg(void)
{
	WRITE_ONCE(rroce_tracing, rroce_tracing - 1);
}

void rroce_trace_send(u32 qpn, u32 dest_qpn, u8 opcode, u32 psn, u32 len, u8 syndrome)
{
	trace_rroce_send(qpn, dest_qpn, opcode, psn, len, syndrome);
}

void rroce_trace_recv(u32 dest_qpn, u8 opcode, u32 psn, u32 len, u8 syndrome, u32 waited_us)
{
	trace_rroce_recv(dest_qpn, opcode, psn, len, syndrome, waited_us);
}

void rroce_trace_retransmit(u32 qpn, u32 psn, const char *reason)
{
	trace_rroce_retransmit(qpn, psn, reason);
}

void rroce_trace_rnr_wait(u32 qpn, u32 psn, u8 timer)
{
	trace_rroce_rnr_wait(qpn, psn, timer);
}

void rroce_trace_qp_state(u32 qpn, u8 from, u8 to)
{
	trace_rroce_qp_state(qpn, from, to);
}

void rroce_trace_wc_error(u32 qpn, u64 wr_id, u8 status, u8 opcode)
{
	trace_rroce_wc_error(qpn, wr_id, status, opcode);
}
