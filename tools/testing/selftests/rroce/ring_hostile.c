// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile rings: a process writes into its own mmap-ed SQ, RQ, SRQ and CQ
 * rings what the rxe provider never would (random bytes, huge SGE counts,
 * lengths that lie, unknown and stale lkeys, producer indices far ahead,
 * requests rewritten while the kernel takes them, a CQ made to look full,
 * producer indices moved on by a thread while the doorbell runs)
 * and rings the doorbell itself: the zero-WR POST_SEND, written raw to the
 * uverbs fd. Each must end in an error completion or the error state, with
 * no byte written outside the memory the process registered for it; the
 * harness fails the test on any kernel warning.
 *
 * The rings are found in /proc/self/maps as the uverbs mappings each create
 * call adds; of a QP's two, the SQ is the one with the larger elements (a
 * send request's header alone is larger than a receive with two SGEs). Two RC QPs of one device, A and B, connected
 * over loopback; B's MRs are its target (remote write) and a guard MR no
 * request may touch.
 *
 *   ring_hostile DEVICE [SEED]
 *
 * Prints KTAP; exits 0 if every case passed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "rxe_ring.h"
#include "verbs_util.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define WAIT_S 10
#define BUF_LEN 65536
#define SCRIBBLE_POSTS 2000

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr_src, *mr_tgt, *mr_guard, *mr_ro;
static union ibv_gid gid;
static int gid_index;
static char src[BUF_LEN] __attribute__((aligned(4096)));
static char tgt[BUF_LEN] __attribute__((aligned(4096)));
static char guard[BUF_LEN] __attribute__((aligned(4096)));
static char ro[4096] __attribute__((aligned(4096)));
static uint64_t rng;

/* A, B and their rings; B may take its receives from an SRQ. */
struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_srq *srq;
	struct ring sq[2], rq[2], cq_ring[2], srq_ring;
};

static uint32_t rand32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng >> 16;
}

static void randomize(void *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		((uint8_t *)p)[i] = rand32();
}

/* Creates a CQ and finds its ring. */
static struct ibv_cq *cq_with_ring(struct ring *ring)
{
	uintptr_t before[MAX_MAPS];
	size_t len[MAX_MAPS];
	int nb = uverbs_maps(before, len);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);

	if (cq && new_rings(before, nb, ring, 1) != 1) {
		printf("# no new mapping for the CQ\n");
		return NULL;
	}
	return cq;
}

/* Creates an RC or UC QP and finds its SQ and (without @srq) RQ rings. */
static struct ibv_qp *qp_with_rings(enum ibv_qp_type type, struct ibv_cq *cq, struct ibv_srq *srq,
				    struct ring *sq, struct ring *rq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16, .max_send_sge = 2,
			 .max_recv_sge = srq ? 0 : 2, .max_inline_data = 64 },
	};
	uintptr_t before[MAX_MAPS];
	size_t len[MAX_MAPS];
	int nb = uverbs_maps(before, len);
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	struct ring r[2];

	if (!qp)
		return NULL;
	if (new_rings(before, nb, r, 2) != (srq ? 1 : 2)) {
		printf("# not the expected new mappings for the QP\n");
		return NULL;
	}
	if (srq) {
		*sq = r[0];
		return qp;
	}
	if (elem_size(&r[0]) == elem_size(&r[1])) {
		printf("# the SQ and RQ have elements of the same size\n");
		return NULL;
	}
	*sq = r[elem_size(&r[0]) < elem_size(&r[1])];
	*rq = r[elem_size(&r[0]) > elem_size(&r[1])];
	return qp;
}

static int make_pair(struct pair *p, int with_srq, enum ibv_qp_type type)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 2 } };
	uintptr_t before[MAX_MAPS];
	size_t len[MAX_MAPS];
	int nb;

	memset(p, 0, sizeof(*p));
	if (with_srq) {
		nb = uverbs_maps(before, len);
		p->srq = ibv_create_srq(pd, &sa);
		if (!p->srq || new_rings(before, nb, &p->srq_ring, 1) != 1)
			return 0;
	}
	for (int i = 0; i < 2; i++) {
		p->cq[i] = cq_with_ring(&p->cq_ring[i]);
		p->qp[i] = p->cq[i] ? qp_with_rings(type, p->cq[i], i ? p->srq : NULL, &p->sq[i],
						    &p->rq[i]) : NULL;
		if (!p->qp[i]) {
			printf("# creating a CQ or QP: %s\n", strerror(errno));
			return 0;
		}
	}
	return connect_rc(p->qp[0], p->qp[1]->qp_num, &gid, gid_index, 14, 3) &&
	       connect_rc(p->qp[1], p->qp[0]->qp_num, &gid, gid_index, 14, 3);
}

static int destroy_pair(struct pair *p)
{
	int ok = 1;

	for (int i = 0; i < 2; i++) {
		ok &= !p->qp[i] || !ibv_destroy_qp(p->qp[i]);
		ok &= !p->cq[i] || !ibv_destroy_cq(p->cq[i]);
	}
	ok &= !p->srq || !ibv_destroy_srq(p->srq);
	memset(p, 0, sizeof(*p));
	return ok;
}

/* Waits for the next completion on @cq. */
static int next_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	if (poll_cq_for(cq, wc, 1, WAIT_S) == 1)
		return 1;
	printf("# no completion within %d s\n", WAIT_S);
	return 0;
}

static int in_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	double end = now() + WAIT_S;

	do {
		if (!ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) && a.qp_state == IBV_QPS_ERR)
			return 1;
		usleep(1000);
	} while (now() < end);
	printf("# QP %u is in state %d, not ERR\n", qp->qp_num, a.qp_state);
	return 0;
}

/* Whether @qp is still ready to send. */
static int rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) && a.qp_state == IBV_QPS_RTS)
		return 1;
	printf("# QP %u is not in RTS\n", qp->qp_num);
	return 0;
}

/* The guard MR, which no request may reach, is as it was filled. */
static int guard_intact(void)
{
	for (size_t i = 0; i < BUF_LEN; i++)
		if (guard[i] != (char)0xa5) {
			printf("# guard byte %zu is %#x\n", i, (unsigned char)guard[i]);
			return 0;
		}
	return 1;
}

/* A's SQ holds @n requests of random bytes: A fails with an error completion. */
static int sq_random(struct pair *p)
{
	struct ring *sq = &p->sq[0];
	uint32_t cons = *idx(sq, CONSUMER), n = mask(sq);
	struct ibv_wc wc;

	for (uint32_t i = 0; i < n; i++)
		randomize(slot(sq, cons + i), elem_size(sq));
	produce(sq, (cons + n) & mask(sq));
	if (!doorbell(p->qp[0]) || !next_wc(p->cq[0], &wc))
		return 0;
	printf("# %u random requests: first completion %s\n", n, ibv_wc_status_str(wc.status));
	return wc.status != IBV_WC_SUCCESS && in_error(p->qp[0]) && guard_intact();
}

/* A valid RDMA WRITE of @len bytes from src to tgt + @off, signalled, as @wr_id. */
static void write_wqe(struct rxe_send_wqe *w, uint64_t wr_id, uint32_t off, uint32_t len)
{
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = wr_id;
	w->wr.opcode = IBV_WR_RDMA_WRITE;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->wr.wr.rdma.remote_addr = (uintptr_t)tgt + off;
	w->wr.wr.rdma.rkey = mr_tgt->rkey;
	w->dma.length = len;
	w->dma.num_sge = 1;
	w->dma.sge[0].addr = (uintptr_t)src;
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = mr_src->lkey;
}

/* One request made bad by @spoil completes with @want and A errors. */
static int one_bad(struct pair *p, void (*spoil)(struct rxe_send_wqe *w), enum ibv_wc_status want)
{
	struct ring *sq = &p->sq[0];
	uint32_t prod = *idx(sq, PRODUCER);
	struct rxe_send_wqe *w = slot(sq, prod);
	struct ibv_wc wc;

	memset(tgt, 0x11, 4096);
	write_wqe(w, 4242, 0, 64);
	spoil(w);
	produce(sq, (prod + 1) & mask(sq));
	if (!doorbell(p->qp[0]) || !next_wc(p->cq[0], &wc))
		return 0;
	if (wc.status != want || wc.wr_id != 4242) {
		printf("# wr %llu: %s; expected wr 4242: %s\n", (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
		return 0;
	}
	for (int i = 0; i < 4096; i++)
		if (tgt[i] != 0x11) {
			printf("# target byte %d written\n", i);
			return 0;
		}
	return in_error(p->qp[0]) && guard_intact();
}

static void huge_num_sge(struct rxe_send_wqe *w) { w->dma.num_sge = 0xffffffff; }
static void length_lies(struct rxe_send_wqe *w) { w->dma.length = 4096; }
static void sge_overflows(struct rxe_send_wqe *w)
{
	w->dma.num_sge = 2;
	w->dma.sge[1] = w->dma.sge[0];
	w->dma.sge[0].length = w->dma.sge[1].length = 0x80000020;
}
static void unknown_lkey(struct rxe_send_wqe *w) { w->dma.sge[0].lkey ^= 0x00010000; }
static void unknown_opcode(struct rxe_send_wqe *w) { w->wr.opcode = 99; }
static void inline_too_long(struct rxe_send_wqe *w)
{
	w->wr.send_flags |= IBV_SEND_INLINE;
	w->dma.length = 100000;
}
static void read_into_ro(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_RDMA_READ;
	w->dma.sge[0].addr = (uintptr_t)ro;
	w->dma.sge[0].lkey = mr_ro->lkey;
}
static uint32_t stale;
static void stale_lkey(struct rxe_send_wqe *w) { w->dma.sge[0].lkey = stale; }

static const struct {
	void (*spoil)(struct rxe_send_wqe *w);
	enum ibv_wc_status want;
	const char *what;
} bad_wqes[] = {
	{ huge_num_sge, IBV_WC_LOC_QP_OP_ERR, "num_sge 0xffffffff" },
	{ length_lies, IBV_WC_LOC_LEN_ERR, "a length its SGEs do not add up to" },
	{ sge_overflows, IBV_WC_LOC_LEN_ERR, "SGE lengths whose sum overflows 32 bits" },
	{ unknown_lkey, IBV_WC_LOC_PROT_ERR, "an lkey no MR has" },
	{ stale_lkey, IBV_WC_LOC_PROT_ERR, "the lkey of a deregistered MR" },
	{ unknown_opcode, IBV_WC_LOC_QP_OP_ERR, "opcode 99" },
	{ inline_too_long, IBV_WC_LOC_QP_OP_ERR, "100000 bytes of inline data" },
	{ read_into_ro, IBV_WC_LOC_PROT_ERR, "an RDMA READ into an MR without local write" },
};

/*
 * The producer index far ahead of what was written: the device takes only
 * the requests the masked index names, and not one more. The slots hold
 * signalled zero-length WRITEs with rkey 0 at address 0, which name no
 * memory (IBTA C9-88): each of them succeeds.
 */
static int producer_far(struct pair *p)
{
	struct ring *sq = &p->sq[0];
	uint32_t want = 0xdeadbeef & mask(sq);
	struct ibv_wc wc;
	int n = 0, errors = 0;

	memset(sq->base + DATA, 0, sq->size - DATA);
	for (uint32_t i = 0; i <= mask(sq); i++)
		((struct rxe_send_wqe *)slot(sq, i))->wr.send_flags = IBV_SEND_SIGNALED;
	produce(sq, 0xdeadbeef);
	if (!doorbell(p->qp[0]))
		return 0;
	while (n < (int)want && next_wc(p->cq[0], &wc)) {
		n++;
		errors += wc.status != IBV_WC_SUCCESS;
	}
	/* Nothing past the masked index. */
	n += poll_cq_for(p->cq[0], &wc, 1, 1) == 1;
	printf("# producer 0xdeadbeef in a ring of %u: %d completions (%u expected), %d in error\n",
	       mask(sq) + 1, n, want, errors);
	return n == (int)want && !errors && rts(p->qp[0]) && guard_intact();
}

static volatile int scribbling;

/* Writes random bytes into random slots of the SQ until told to stop. */
static void *scribbler(void *arg)
{
	struct ring *sq = arg;

	while (scribbling) {
		uint8_t *s = slot(sq, rand32());
		size_t at = rand32() % elem_size(sq);

		s[at] = rand32();
		if (rand32() % 64 == 0)
			usleep(10);
	}
	return NULL;
}

/*
 * Valid RDMA WRITEs posted and rung one by one while another thread rewrites
 * the ring under the kernel: every request completes, each either succeeds
 * or fails with an error; the guard is intact.
 */
static int rewritten(struct pair *p)
{
	struct ring *sq = &p->sq[0];
	pthread_t t;
	struct ibv_wc wc;
	int posted = 0, done = 0, ok = 0, failed_wc = 0, flushed = 0;

	scribbling = 1;
	if (pthread_create(&t, NULL, scribbler, sq))
		return 0;
	for (int i = 0; i < SCRIBBLE_POSTS && done < SCRIBBLE_POSTS; i++) {
		uint32_t prod = *idx(sq, PRODUCER);

		/* Keep at most a few in flight, so a full ring is the kernel's to handle. */
		while (posted - done >= 4 && next_wc(p->cq[0], &wc)) {
			done++;
			ok += wc.status == IBV_WC_SUCCESS;
			flushed += wc.status == IBV_WC_WR_FLUSH_ERR;
			failed_wc += wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR;
		}
		if (posted - done >= 4)
			break;
		write_wqe(slot(sq, prod), i, (i * 64) % BUF_LEN, 64);
		produce(sq, (prod + 1) & mask(sq));
		posted++;
		if (!doorbell(p->qp[0]))
			break;
		if (failed_wc)
			break;
	}
	scribbling = 0;
	pthread_join(t, NULL);
	/* What is still in flight completes or is flushed; wait for a quiet 0.5 s. */
	for (double quiet = now() + 0.5; now() < quiet; usleep(1000))
		if (ibv_poll_cq(p->cq[0], 1, &wc) == 1) {
			done++;
			ok += wc.status == IBV_WC_SUCCESS;
			quiet = now() + 0.5;
		}
	printf("# %d doorbells with the ring rewritten meanwhile: %d completions, %d succeeded, "
	       "%d failed, %d flushed\n", posted, done, ok, failed_wc, flushed);
	return posted > 0 && done > 0 && guard_intact();
}

/* B's RQ of random bytes: a SEND to it fails B, not the kernel. */
static int rq_random(struct pair *p, struct ring *rq, const char *what)
{
	uint32_t cons = *idx(rq, CONSUMER), n = mask(rq);
	struct ibv_sge s = { .addr = (uintptr_t)src, .length = 64, .lkey = mr_src->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	for (uint32_t i = 0; i < n; i++)
		randomize(slot(rq, cons + i), elem_size(rq));
	produce(rq, (cons + n) & mask(rq));
	if (ibv_post_send(p->qp[0], &wr, &bad) || !next_wc(p->cq[1], &wc))
		return 0;
	printf("# %s of random bytes: B's completion %s\n", what, ibv_wc_status_str(wc.status));
	return wc.status != IBV_WC_SUCCESS && (p->srq || in_error(p->qp[1])) && guard_intact();
}

static int rq_garbage(struct pair *p)
{
	return rq_random(p, &p->rq[1], "RQ");
}

static int srq_garbage(struct pair *p)
{
	return rq_random(p, &p->srq_ring, "SRQ");
}

/* A receive into an MR without local write: B fails, the MR is untouched. */
static int recv_into_ro(struct pair *p)
{
	struct ring *rq = &p->rq[1];
	uint32_t prod = *idx(rq, PRODUCER);
	struct rxe_recv_wqe *w = slot(rq, prod);
	struct ibv_sge s = { .addr = (uintptr_t)src, .length = 64, .lkey = mr_src->lkey };
	struct ibv_send_wr wr = { .wr_id = 8, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	char copy[4096];

	memcpy(copy, ro, sizeof(copy));
	memset(w, 0, elem_size(rq));
	w->wr_id = 9;
	w->dma.length = 64;
	w->dma.num_sge = 1;
	w->dma.sge[0].addr = (uintptr_t)ro;
	w->dma.sge[0].length = 64;
	w->dma.sge[0].lkey = mr_ro->lkey;
	produce(rq, (prod + 1) & mask(rq));
	if (ibv_post_send(p->qp[0], &wr, &bad) || !next_wc(p->cq[1], &wc))
		return 0;
	printf("# B's completion: wr %llu %s\n", (unsigned long long)wc.wr_id,
	       ibv_wc_status_str(wc.status));
	return wc.wr_id == 9 && wc.status == IBV_WC_LOC_PROT_ERR && !memcmp(copy, ro, sizeof(copy)) &&
	       in_error(p->qp[1]);
}

/*
 * The CQ's producer index belongs to the kernel: one scribbled over is
 * overwritten by the next completion, which A then polls as the only one.
 */
static int cq_producer(struct pair *p)
{
	struct ring *cq = &p->cq_ring[0];
	struct ring *sq = &p->sq[0];
	uint32_t prod = *idx(sq, PRODUCER), cons = *idx(cq, CONSUMER);
	struct ibv_wc wc[4];
	double end = now() + WAIT_S;
	int n = 0;

	produce(cq, (cons + 5) & mask(cq));
	write_wqe(slot(sq, prod), 77, 0, 64);
	produce(sq, (prod + 1) & mask(sq));
	if (!doorbell(p->qp[0]))
		return 0;
	while (*idx(cq, PRODUCER) != ((cons + 1) & mask(cq)) && now() < end)
		usleep(1000);
	n = ibv_poll_cq(p->cq[0], 4, wc);
	printf("# producer index set to consumer + 5; after one completion: %d polled\n", n);
	return n == 1 && wc[0].wr_id == 77 && wc[0].status == IBV_WC_SUCCESS;
}

/* A consumer index that makes the CQ look full: the next completion overflows it. */
static int cq_consumer(struct pair *p)
{
	struct ring *cq = &p->cq_ring[0];
	struct ring *sq = &p->sq[0];
	uint32_t prod = *idx(sq, PRODUCER);
	struct ibv_async_event ev;
	double end;

	__atomic_store_n(idx(cq, CONSUMER), (*idx(cq, PRODUCER) + 1) & mask(cq), __ATOMIC_RELEASE);
	write_wqe(slot(sq, prod), 78, 0, 64);
	produce(sq, (prod + 1) & mask(sq));
	if (!doorbell(p->qp[0]) || !in_error(p->qp[0]))
		return 0;
	/* Reported, not required: what the QP's owner is told. */
	for (end = now() + 1; now() < end;) {
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

		if (poll(&pfd, 1, 100) == 1 && !ibv_get_async_event(ctx, &ev)) {
			printf("# async event: %s\n", ibv_event_type_str(ev.event_type));
			ibv_ack_async_event(&ev);
		}
	}
	return guard_intact();
}

static volatile int chasing;

/*
 * Keeps the SQ @arg full: its producer index one slot behind what the
 * kernel has taken, so that the kernel always finds requests, however few
 * times this thread gets to run.
 */
static void *chaser(void *arg)
{
	struct ring *sq = arg;

	while (chasing)
		produce(sq, (*idx(sq, CONSUMER) + mask(sq)) & mask(sq));
	return NULL;
}

#define CHASED_DOORBELLS 4

/*
 * Rings A's doorbell CHASED_DOORBELLS times while a thread chases its
 * producer index, once the thread has moved it, calling @after (if any)
 * after each; returns whether each doorbell returned and each @after said
 * yes, and in @took the longest doorbell took.
 */
static int chased_doorbell(struct pair *p, double *took, int (*after)(struct pair *p))
{
	struct ring *sq = &p->sq[0];
	double end = now() + WAIT_S;
	pthread_t t;
	int ok = 1;

	chasing = 1;
	if (pthread_create(&t, NULL, chaser, sq))
		return 0;
	while (*idx(sq, PRODUCER) == *idx(sq, CONSUMER) && now() < end)
		;
	*took = 0;
	for (int i = 0; ok && i < CHASED_DOORBELLS; i++) {
		double start = now();

		ok = doorbell(p->qp[0]);
		if (now() - start > *took)
			*took = now() - start;
		ok = ok && (!after || after(p));
	}
	chasing = 0;
	pthread_join(t, NULL);
	return ok;
}

/*
 * A in ERR, every slot a zero-length WRITE, and a thread that keeps the
 * ring full whatever the kernel takes: the doorbell, which
 * flushes, takes a ring's worth at most (what the ring held when it rang)
 * and returns; every completion is a flush. (Needs a second CPU to race the kernel: the test runs with two.)
 */
static int chased_total, chased_flushed, chased_most;

/* What one doorbell of flush_chased flushed: a ring's worth at most. */
static int flushed_a_ring(struct pair *p)
{
	struct ibv_wc wc;
	int n = 0;

	while (ibv_poll_cq(p->cq[0], 1, &wc) == 1) {
		n++;
		chased_flushed += wc.status == IBV_WC_WR_FLUSH_ERR;
	}
	chased_total += n;
	if (n > chased_most)
		chased_most = n;
	return n <= (int)mask(&p->sq[0]);
}

static int flush_chased(struct pair *p)
{
	struct ring *sq = &p->sq[0];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	double took;
	int ok;

	for (uint32_t i = 0; i <= mask(sq); i++)
		write_wqe(slot(sq, i), i, 0, 0);
	if (ibv_modify_qp(p->qp[0], &a, IBV_QP_STATE))
		return 0;
	chased_total = chased_flushed = chased_most = 0;
	ok = chased_doorbell(p, &took, flushed_a_ring);
	printf("# %d doorbells, the longest %.3f s: %d completions, %d of them flushes, "
	       "at most %d from one (a ring's worth: %u)\n", CHASED_DOORBELLS, took, chased_total,
	       chased_flushed, chased_most, mask(sq));
	return ok && chased_total > 0 && chased_total == chased_flushed && guard_intact();
}

/*
 * UC, where a request completes as it is sent: every slot an unsignalled
 * zero-length WRITE, and a thread keeping the ring full while the doorbell
 * sends. The doorbell takes a ring's worth at most and
 * returns; A stays ready.
 */
static int uc_chased(struct pair *p)
{
	struct ring *sq = &p->sq[0];
	double took;
	int ok;

	for (uint32_t i = 0; i <= mask(sq); i++) {
		write_wqe(slot(sq, i), i, 0, 0);
		((struct rxe_send_wqe *)slot(sq, i))->wr.send_flags = 0;
	}
	ok = chased_doorbell(p, &took, NULL);
	printf("# %d doorbells, the longest %.3f s; the kernel took %u requests\n",
	       CHASED_DOORBELLS, took, *idx(sq, CONSUMER));
	return ok && *idx(sq, CONSUMER) != 0 && rts(p->qp[0]) && guard_intact();
}

static const struct {
	int (*run)(struct pair *p);
	int srq, uc;
	const char *what;
} attacks[] = {
	{ sq_random, 0, 0, "SQ of random bytes, producer index at full: error completion, A in ERR" },
	{ producer_far, 0, 0, "producer index 0xdeadbeef over zero-length WRITEs: exactly the masked "
			   "index's requests complete, each successfully" },
	{ rewritten, 0, 0, "RDMA WRITEs rung one by one while a thread rewrites the SQ: no hang, "
			"guard intact" },
	{ rq_garbage, 0, 0, "B's RQ of random bytes: a SEND to it gives B an error completion" },
	{ recv_into_ro, 0, 0, "a receive into an MR without local write: LOC_PROT_ERR, MR untouched" },
	{ srq_garbage, 1, 0, "B's SRQ of random bytes: a SEND to it gives B an error completion" },
	{ cq_producer, 0, 0, "the CQ's producer index scribbled: the kernel's own overwrites it" },
	{ cq_consumer, 0, 0, "the CQ's consumer index set to look full: overflow puts A in ERR" },
	{ flush_chased, 0, 0, "A in ERR, a thread keeping its SQ full: each doorbell flushes a "
			      "ring's worth at most and returns" },
	{ uc_chased, 0, 1, "UC, a thread keeping the SQ full while the doorbell sends: the "
			   "doorbell returns, A stays ready" },
};

int main(int argc, char **argv)
{
	struct pair p;
	struct ibv_mr *gone;
	size_t i;
	int ok;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE [SEED]\n", argv[0]);
		return 2;
	}
	rng = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x72696e67ULL;
	printf("TAP version 13\n1..%zu\n", ARRAY_SIZE(attacks) + ARRAY_SIZE(bad_wqes) + 2);
	printf("# seed %#llx\n", (unsigned long long)rng);
	memset(guard, 0xa5, BUF_LEN);
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	mr_src = pd ? ibv_reg_mr(pd, src, BUF_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_tgt = pd ? ibv_reg_mr(pd, tgt, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	mr_guard = pd ? ibv_reg_mr(pd, guard, BUF_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_ro = pd ? ibv_reg_mr(pd, ro, sizeof(ro), 0) : NULL;
	gone = pd ? ibv_reg_mr(pd, guard, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
	stale = gone ? gone->lkey : 0;
	ok = mr_src && mr_tgt && mr_guard && mr_ro && gone && !ibv_dereg_mr(gone) &&
	     (gid_index = ipv4_gid(ctx, &gid)) >= 0;
	report(ok, "open the device, register the MRs, find the IPv4 GID");
	if (!ok)
		return 1;

	for (i = 0; i < ARRAY_SIZE(bad_wqes); i++) {
		char what[128];

		ok = make_pair(&p, 0, IBV_QPT_RC) &&
		     one_bad(&p, bad_wqes[i].spoil, bad_wqes[i].want);
		snprintf(what, sizeof(what), "one request with %s: %s, A in ERR", bad_wqes[i].what,
			 ibv_wc_status_str(bad_wqes[i].want));
		report(destroy_pair(&p) && ok, what);
	}
	for (i = 0; i < ARRAY_SIZE(attacks); i++) {
		ok = make_pair(&p, attacks[i].srq, attacks[i].uc ? IBV_QPT_UC : IBV_QPT_RC) &&
		     attacks[i].run(&p);
		report(destroy_pair(&p) && ok, attacks[i].what);
	}

	ok = !ibv_dereg_mr(mr_src) && !ibv_dereg_mr(mr_tgt) && !ibv_dereg_mr(mr_guard) &&
	     !ibv_dereg_mr(mr_ro) && !ibv_dealloc_pd(pd) && !ibv_close_device(ctx);
	report(ok, "deregister, deallocate, close the device");
	return failed ? 1 : 0;
}
