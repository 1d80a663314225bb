/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rroce's tracepoints (events/rroce/): packets sent and received, why a
 * requester sent again, RNR waits, QP state changes and completions with an
 * error status. While all are off, Rust skips the calls (rroce_tracing).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rroce

#if !defined(_RROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RROCE_TRACE_H

#include <linux/tracepoint.h>

/* How many of rroce's events are on; Rust skips the calls while none is. */
extern int rroce_tracing;
int rroce_trace_reg(void);
void rroce_trace_unreg(void);

/* A RoCEv2 packet: BTH opcode, PSN, payload length and, on an ACK, the
 * AETH syndrome (0xff without one). */
DECLARE_EVENT_CLASS(rroce_packet,
	TP_PROTO(u32 qpn, u32 dest_qpn, u8 opcode, u32 psn, u32 len, u8 syndrome),
	TP_ARGS(qpn, dest_qpn, opcode, psn, len, syndrome),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, dest_qpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->dest_qpn = dest_qpn;
		__entry->psn = psn;
		__entry->len = len;
		__entry->opcode = opcode;
		__entry->syndrome = syndrome;
	),
	TP_printk("qpn=%u dest_qpn=%u opcode=0x%02x psn=%u len=%u syndrome=0x%02x",
		  __entry->qpn, __entry->dest_qpn, __entry->opcode,
		  __entry->psn, __entry->len, __entry->syndrome)
);

/* Sent by QP qpn to dest_qpn. */
DEFINE_EVENT_FN(rroce_packet, rroce_send,
	TP_PROTO(u32 qpn, u32 dest_qpn, u8 opcode, u32 psn, u32 len, u8 syndrome),
	TP_ARGS(qpn, dest_qpn, opcode, psn, len, syndrome),
	rroce_trace_reg, rroce_trace_unreg);

/* Received for QP dest_qpn (the BTH does not name the sender's QP), after
 * waiting waited_us in the device's backlog: from its arrival to its
 * handling, in whole jiffies. */
TRACE_EVENT_FN(rroce_recv,
	TP_PROTO(u32 dest_qpn, u8 opcode, u32 psn, u32 len, u8 syndrome, u32 waited_us),
	TP_ARGS(dest_qpn, opcode, psn, len, syndrome, waited_us),
	TP_STRUCT__entry(
		__field(u32, dest_qpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u32, waited_us)
		__field(u8, opcode)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		__entry->dest_qpn = dest_qpn;
		__entry->psn = psn;
		__entry->len = len;
		__entry->waited_us = waited_us;
		__entry->opcode = opcode;
		__entry->syndrome = syndrome;
	),
	TP_printk("dest_qpn=%u opcode=0x%02x psn=%u len=%u syndrome=0x%02x waited_us=%u",
		  __entry->dest_qpn, __entry->opcode, __entry->psn, __entry->len,
		  __entry->syndrome, __entry->waited_us),
	rroce_trace_reg, rroce_trace_unreg
);

/* The requester of QP qpn goes back to psn: after a timeout, a sequence
 * NAK, an RNR wait, or to probe a silent peer. */
TRACE_EVENT_FN(rroce_retransmit,
	TP_PROTO(u32 qpn, u32 psn, const char *reason),
	TP_ARGS(qpn, psn, reason),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__string(reason, reason)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__assign_str(reason);
	),
	TP_printk("qpn=%u psn=%u reason=%s", __entry->qpn, __entry->psn, __get_str(reason)),
	rroce_trace_reg, rroce_trace_unreg
);

/* The peer of QP qpn had no receive for psn: it waits timer (IBA's
 * encoding of the RNR NAK timer) before sending again. */
TRACE_EVENT_FN(rroce_rnr_wait,
	TP_PROTO(u32 qpn, u32 psn, u8 timer),
	TP_ARGS(qpn, psn, timer),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, timer)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->timer = timer;
	),
	TP_printk("qpn=%u psn=%u timer=%u", __entry->qpn, __entry->psn, __entry->timer),
	rroce_trace_reg, rroce_trace_unreg
);

/* QP qpn moved from one state (enum ib_qp_state) to another. */
TRACE_EVENT_FN(rroce_qp_state,
	TP_PROTO(u32 qpn, u8 from, u8 to),
	TP_ARGS(qpn, from, to),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u8, from)
		__field(u8, to)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("qpn=%u %s -> %s", __entry->qpn,
		  __print_symbolic(__entry->from, { 0, "RESET" }, { 1, "INIT" }, { 2, "RTR" },
				   { 3, "RTS" }, { 4, "SQD" }, { 5, "SQE" }, { 6, "ERR" }),
		  __print_symbolic(__entry->to, { 0, "RESET" }, { 1, "INIT" }, { 2, "RTR" },
				   { 3, "RTS" }, { 4, "SQD" }, { 5, "SQE" }, { 6, "ERR" })),
	rroce_trace_reg, rroce_trace_unreg
);

/* A completion of QP qpn with an error status (enum ib_wc_status). */
TRACE_EVENT_FN(rroce_wc_error,
	TP_PROTO(u32 qpn, u64 wr_id, u8 status, u8 opcode),
	TP_ARGS(qpn, wr_id, status, opcode),
	TP_STRUCT__entry(
		__field(u64, wr_id)
		__field(u32, qpn)
		__field(u8, status)
		__field(u8, opcode)
	),
	TP_fast_assign(
		__entry->wr_id = wr_id;
		__entry->qpn = qpn;
		__entry->status = status;
		__entry->opcode = opcode;
	),
	TP_printk("qpn=%u wr_id=0x%llx status=%u opcode=%u", __entry->qpn, __entry->wr_id,
		  __entry->status, __entry->opcode),
	rroce_trace_reg, rroce_trace_unreg
);

#endif /* _RROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rroce_trace
#include <trace/define_trace.h>
