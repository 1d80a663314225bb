/* SPDX-License-Identifier: GPL-2.0 */
/* What bindgen sees of rroce's tracepoints: the functions trace.c defines. */
#ifndef RROCE_TRACE_CALLS_H
#define RROCE_TRACE_CALLS_H

#include <linux/types.h>

/* How many of rroce's events are on (the tracepoint mutex orders changes). */
extern int rroce_tracing;

void rroce_trace_send(u32 qpn, u32 dest_qpn, u8 opcode, u32 psn, u32 len, u8 syndrome);
void rroce_trace_recv(u32 dest_qpn, u8 opcode, u32 psn, u32 len, u8 syndrome, u32 waited_us);
void rroce_trace_retransmit(u32 qpn, u32 psn, const char *reason);
void rroce_trace_rnr_wait(u32 qpn, u32 psn, u8 timer);
void rroce_trace_qp_state(u32 qpn, u8 from, u8 to);
void rroce_trace_wc_error(u32 qpn, u64 wr_id, u8 status, u8 opcode);

#endif
