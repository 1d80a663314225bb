// SPDX-License-Identifier: GPL-2.0
/*
 * A QP's asynchronous events through unmodified libibverbs: COMM_EST once
 * when the first packet reaches an RC QP in RTR; LAST_WQE_REACHED when a QP
 * on an SRQ enters the error state, by a modify or by itself, and not for a
 * QP without one; QP_FATAL when a completion finds its CQ full, which leaves
 * the QP in the error state, and CQ_ERR for the CQ; and no event where none
 * is due.
 *
 * Usage: qp_events DEVICE.  Prints KTAP; exits 0 if every case passed.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>

#include "verbs_util.h"

/* The longest wait for an event that is due, and for one that is not. */
#define DUE_S 10
#define NOT_DUE_S 1

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char buf[4096];
static union ibv_gid gid;
static int gid_index;

/* The events seen since the case began: their types and objects. */
static struct {
	enum ibv_event_type type;
	void *obj;
} seen[64];
static int nr_seen;

/* The object an event is about: here a QP or a CQ. */
static void *element(struct ibv_async_event *ev)
{
	return ev->event_type == IBV_EVENT_CQ_ERR ? (void *)ev->element.cq : ev->element.qp;
}

static int count(void *obj, enum ibv_event_type type)
{
	int n = 0;

	for (int i = 0; i < nr_seen; i++)
		n += seen[i].type == type && (!obj || seen[i].obj == obj);
	return n;
}

/*
 * How many events of @type for @obj (any object if NULL) were seen in this
 * case, waiting up to @secs s for there to be @enough. Every event is acked.
 */
static int events(void *obj, enum ibv_event_type type, int enough, double secs)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	double end = now() + secs;
	struct ibv_async_event ev;

	while (count(obj, type) < enough && now() < end) {
		if (poll(&p, 1, 100) != 1 || ibv_get_async_event(ctx, &ev))
			continue;
		printf("# event: %s\n", ibv_event_type_str(ev.event_type));
		if (nr_seen < (int)(sizeof(seen) / sizeof(seen[0])))
			seen[nr_seen++] = (typeof(seen[0])){ ev.event_type, element(&ev) };
		ibv_ack_async_event(&ev);
	}
	return count(obj, type);
}

static struct ibv_qp *rc_qp(struct ibv_cq *send_cq, struct ibv_cq *recv_cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = send_cq, .recv_cq = recv_cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = srq ? 0 : 16, .max_send_sge = 1,
			 .max_recv_sge = srq ? 0 : 1 },
	};

	return ibv_create_qp(pd, &a);
}

static int post_send(struct ibv_qp *qp, enum ibv_wr_opcode opcode, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = opcode }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
	wr.wr.rdma.rkey = mr->rkey;
	return !ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 1024, .length = 64, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return !ibv_post_recv(qp, &wr, &bad);
}

static int to_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return !ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* The QP's state, or -1 if query fails. */
static int state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &init) ? -1 : (int)a.qp_state;
}

/* Two SENDs reach a QP in RTR: it receives them, and tells its owner once. */
static void comm_est(void)
{
	struct ibv_cq *cq[2] = { ibv_create_cq(ctx, 16, NULL, NULL, 0) };
	struct ibv_qp *qp[2] = {}, *sender, *receiver;
	struct ibv_wc wc[4];
	int ok, n;

	nr_seen = 0;
	sender = qp[0] = cq[0] ? rc_qp(cq[0], cq[0], NULL) : NULL;
	receiver = qp[1] = cq[0] ? rc_qp(cq[0], cq[0], NULL) : NULL;
	ok = sender && receiver &&
	     rc_ready_to_receive(receiver, sender->qp_num, &gid, gid_index) &&
	     post_recv(receiver) && post_recv(receiver) &&
	     connect_rc(sender, receiver->qp_num, &gid, gid_index, 14, 7) &&
	     post_send(sender, IBV_WR_SEND, mr->lkey) && post_send(sender, IBV_WR_SEND, mr->lkey);
	report(ok && events(receiver, IBV_EVENT_COMM_EST, 1, DUE_S) == 1,
	       "COMM_EST when the first packet reaches an RC QP in RTR");
	n = ok ? poll_cq_for(cq[0], wc, 4, DUE_S) : 0;
	for (int i = 0; i < n; i++)
		ok &= wc[i].status == IBV_WC_SUCCESS;
	report(ok && n == 4, "the QP in RTR took both SENDs, and both ends completed them");
	report(ok && events(NULL, IBV_EVENT_COMM_EST, 2, NOT_DUE_S) == 1,
	       "one COMM_EST for two packets, none for the sender in RTS");
	report(destroy_qps(qp, cq, 2), "destroy the QPs");
}

/*
 * QPs on an SRQ say when they stop taking its receive requests: moved to
 * the error state, once, or failing by themselves. A QP without an SRQ
 * says nothing.
 */
static void last_wqe_reached(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_cq *cq[4] = { ibv_create_cq(ctx, 64, NULL, NULL, 0) };
	struct ibv_srq *srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	struct ibv_qp *qp[4] = {};
	int ok = cq[0] && srq;

	nr_seen = 0;
	for (int i = 0; ok && i < 4; i++)
		ok = (qp[i] = rc_qp(cq[0], cq[0], i % 2 ? NULL : srq)) != NULL;
	/* qp[0] (SRQ) talks to qp[1], qp[2] (SRQ) to qp[3]. */
	for (int i = 0; ok && i < 4; i++)
		ok = connect_rc(qp[i], qp[i ^ 1]->qp_num, &gid, gid_index, 14, 7);
	report(ok && to_error(qp[0]) &&
	       events(qp[0], IBV_EVENT_QP_LAST_WQE_REACHED, 1, DUE_S) == 1,
	       "LAST_WQE_REACHED when a QP on an SRQ is moved to the error state");
	report(ok && to_error(qp[0]) && to_error(qp[1]) &&
	       events(NULL, IBV_EVENT_QP_LAST_WQE_REACHED, 2, NOT_DUE_S) == 1,
	       "none when it is moved there again, nor for a QP without an SRQ");
	/* A send with a bad lkey fails qp[2]. */
	report(ok && post_send(qp[2], IBV_WR_SEND, mr->lkey ^ 0x100) &&
	       events(qp[2], IBV_EVENT_QP_LAST_WQE_REACHED, 1, DUE_S) == 1 &&
	       state(qp[2]) == IBV_QPS_ERR,
	       "LAST_WQE_REACHED when a QP on an SRQ fails by itself");
	report(destroy_qps(qp, cq, 4) && (!srq || !ibv_destroy_srq(srq)), "destroy the QPs and SRQ");
}

/*
 * One RDMA WRITE more than the send CQ holds: the CQ keeps the first
 * completions, and the QP fails; both say so, once.
 */
static void qp_fatal(void)
{
	struct ibv_cq *cq[2] = { ibv_create_cq(ctx, 1, NULL, NULL, 0),
				 ibv_create_cq(ctx, 16, NULL, NULL, 0) };
	struct ibv_qp *qp[2] = {};
	struct ibv_wc wc[64];
	int ok = cq[0] && cq[1] && cq[0]->cqe < 63, n = 0;

	nr_seen = 0;
	qp[0] = ok ? rc_qp(cq[0], cq[1], NULL) : NULL;
	qp[1] = ok ? rc_qp(cq[1], cq[1], NULL) : NULL;
	ok = qp[0] && qp[1] && connect_rc(qp[0], qp[1]->qp_num, &gid, gid_index, 14, 7) &&
	     connect_rc(qp[1], qp[0]->qp_num, &gid, gid_index, 14, 7);
	for (int i = 0; ok && i <= cq[0]->cqe; i++)
		ok = post_send(qp[0], IBV_WR_RDMA_WRITE, mr->lkey);
	printf("# %d WRITEs to a CQ of %d\n", ok ? cq[0]->cqe + 1 : 0, cq[0] ? cq[0]->cqe : 0);
	report(ok && events(qp[0], IBV_EVENT_QP_FATAL, 1, DUE_S) == 1,
	       "QP_FATAL when a completion finds the CQ full");
	report(ok && state(qp[0]) == IBV_QPS_ERR, "the QP is in the error state");
	report(ok && events(cq[0], IBV_EVENT_CQ_ERR, 1, DUE_S) == 1 &&
	       events(NULL, IBV_EVENT_CQ_ERR, 2, NOT_DUE_S) == 1,
	       "CQ_ERR for the full CQ, once");
	n = ok ? poll_cq_for(cq[0], wc, 64, NOT_DUE_S) : 0;
	for (int i = 0; i < n; i++)
		ok &= wc[i].status == IBV_WC_SUCCESS;
	report(ok && n == cq[0]->cqe, "the CQ kept the completions it had room for");
	report(destroy_qps(qp, cq, 2), "destroy the QPs and CQs");
}

int main(int argc, char **argv)
{
	ctx = argc == 2 ? open_device(argv[1]) : NULL;
	if (!ctx) {
		fprintf(stderr, "usage: qp_events DEVICE (an RDMA device that exists)\n");
		return 2;
	}
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	gid_index = ipv4_gid(ctx, &gid);
	printf("KTAP version 1\n1..14\n");
	report(mr && gid_index >= 0, "PD, MR and an IPv4 RoCE v2 GID");
	comm_est();
	last_wqe_reached();
	qp_fatal();
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return failed ? 1 : 0;
}
