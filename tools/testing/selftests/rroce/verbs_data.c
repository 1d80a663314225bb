// SPDX-License-Identifier: GPL-2.0
/*
 * The RC data path through unmodified libibverbs and its rxe provider: two RC
 * QPs of one device, A and B, connected over loopback (the RoCE v2 GID of the
 * VM's IPv4 address, MTU 1024). SEND of 3 SGEs into 2, with immediate, inline;
 * RDMA WRITE and READ back, WRITE with immediate; fetch-and-add and
 * compare-and-swap; unsignalled SENDs. On fresh QPs: wrong rkey, wrong lkey
 * and a READ past the remote MR fail as they should and flush what follows;
 * a QP connected to nowhere exhausts its retries. Memory windows: type 1 bound
 * with ibv_bind_mw and rebound, type 2 bound by a work request and unbound by
 * SEND with Invalidate or LOCAL_INV; old rkeys, ranges past the window and
 * binds to an MR without MW_BIND fail; a local operation after an unsignalled
 * WRITE completes without waiting for a resend. On QPs and CQs of their own:
 * a CQ with a completion channel signals the next completion, and when armed
 * for solicited ones only, a solicited one but not another; an SRQ feeds an RC
 * QP its receives in order and raises its limit event, which disarms it; a
 * full CQ puts the receiving QP in the error state; a CQ resized below the
 * completions it holds refuses and loses none; a query reports the PSNs as
 * they are. Data is compared byte for
 * byte; every wait gives up after 10 s.
 *
 * Usage: verbs_data DEVICE.  Prints KTAP; exits 0 if every case passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define WAIT_S 10
#define BUF_LEN 65536
#define RCV1_LEN 4096
#define RCV2_LEN 16384
#define WIMM_OFF 24576		/* in tgt: the RDMA WRITE with immediate */
#define ATOMIC_OFF 32768	/* in tgt: the u64 of the atomics */
#define BAD_QPN 0xfffff0	/* 24 bits, but rroce numbers its QPs below 2^20 */
#define OWN 2			/* checks[].breaks: sets up and tears down its own QPs */
#define RIGHTS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

typedef uint64_t __attribute__((may_alias)) u64_any;

/* A sends from src and reads into back; B receives in rcv1, rcv2; tgt is B's. */
static char src[BUF_LEN] __attribute__((aligned(4096)));
static char back[BUF_LEN] __attribute__((aligned(4096)));
static char rcv1[RCV1_LEN] __attribute__((aligned(4096)));
static char rcv2[RCV2_LEN] __attribute__((aligned(4096)));
static char tgt[BUF_LEN] __attribute__((aligned(4096)));
static char want[BUF_LEN];
#define SGE(mr, buf, len) ((struct ibv_sge){ (uintptr_t)(buf), (len), (mr)->lkey })
#define REMOTE64 (*(u64_any *)(tgt + ATOMIC_OFF))
#define BACK64 (*(u64_any *)back)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr_src, *mr_back, *mr_rcv1, *mr_rcv2, *mr_tgt;
static union ibv_gid gid;
static int gid_index;

/* QP A (qp[0]) and QP B (qp[1]), each with one CQ for sends and receives. */
struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
};

/* Bytes that change from one offset to the next, so misplaced data shows. */
static void fill(char *buf, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = seed >> 16;
	}
}

static int same(const char *what, const char *got, const char *expected, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (got[i] != expected[i]) {
			printf("# %s: byte %zu is %#x, not %#x\n", what, i,
			       (unsigned char)got[i], (unsigned char)expected[i]);
			return 0;
		}
	return 1;
}

/* @buf still holds @len bytes of @byte: nothing was written there. */
static int all(const char *what, const char *buf, size_t len, int byte)
{
	memset(want, byte, len);
	return same(what, buf, want, len);
}

/* An RC QP on @cq; its receives come from @srq unless that is NULL. */
static struct ibv_qp *create_srq_qp(struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC, .sq_sig_all = 0,
		.cap = { .max_send_wr = 64, .max_recv_wr = srq ? 0 : 64, .max_send_sge = 4,
			 .max_recv_sge = srq ? 0 : 4, .max_inline_data = 256 },
	};

	return ibv_create_qp(pd, &a);
}

static struct ibv_qp *create_qp(struct ibv_cq *cq)
{
	return create_srq_qp(cq, NULL);
}

/* Takes an RC QP to RTS, talking to @dest_qpn at our own GID. */
static int connect_qp(struct ibv_qp *qp, uint32_t dest_qpn, uint8_t timeout, uint8_t retry_cnt)
{
	return connect_rc(qp, dest_qpn, &gid, gid_index, timeout, retry_cnt);
}

/* A pair whose B has a CQ of @cqe_b on @channel (if not NULL) and takes from @srq (if not NULL). */
static int make_pair_with(struct pair *p, int cqe_b, struct ibv_comp_channel *channel,
			  struct ibv_srq *srq)
{
	for (int i = 0; i < 2; i++) {
		p->cq[i] = i ? ibv_create_cq(ctx, cqe_b, NULL, channel, 0) :
			       ibv_create_cq(ctx, 256, NULL, NULL, 0);
		p->qp[i] = p->cq[i] ? create_srq_qp(p->cq[i], i ? srq : NULL) : NULL;
		if (!p->qp[i]) {
			printf("# creating a CQ or QP: %s\n", strerror(errno));
			return 0;
		}
	}
	return connect_qp(p->qp[0], p->qp[1]->qp_num, 14, 7) &&
	       connect_qp(p->qp[1], p->qp[0]->qp_num, 14, 7);
}

static int make_pair(struct pair *p)
{
	return make_pair_with(p, 256, NULL, NULL);
}

static int destroy_pair(struct pair *p)
{
	int ok = 1;

	for (int i = 0; i < 2; i++) {
		ok &= !p->qp[i] || !ibv_destroy_qp(p->qp[i]);
		ok &= !p->cq[i] || !ibv_destroy_cq(p->cq[i]);
	}
	memset(p, 0, sizeof(*p));
	return ok;
}

/* Waits up to @secs for one completion on @cq. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	return poll_cq_for(cq, wc, 1, secs) == 1;
}

/* The next completion on @cq is @wr_id's, with @status (and @opcode if it succeeded). */
static int expect(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
		  enum ibv_wc_opcode opcode, struct ibv_wc *wc)
{
	if (!poll_one(cq, wc, WAIT_S)) {
		printf("# no completion of wr %llu within %d s\n", (unsigned long long)wr_id, WAIT_S);
		return 0;
	}
	if (wc->wr_id == wr_id && wc->status == status &&
	    (status != IBV_WC_SUCCESS || wc->opcode == opcode))
		return 1;
	printf("# wr %llu: %s, opcode %d; expected wr %llu: %s, opcode %d\n",
	       (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status), wc->opcode,
	       (unsigned long long)wr_id, ibv_wc_status_str(status), opcode);
	return 0;
}

/* The completion opcode of each work request opcode. */
static const enum ibv_wc_opcode wc_opcode[] = {
	[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE, [IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
	[IBV_WR_SEND] = IBV_WC_SEND, [IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
	[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ, [IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD, [IBV_WR_SEND_WITH_INV] = IBV_WC_SEND,
	[IBV_WR_BIND_MW] = IBV_WC_BIND_MW, [IBV_WR_LOCAL_INV] = IBV_WC_LOCAL_INV,
};

/* A signalled work request of @op on the @n SGEs at @s; an RDMA one to @remote of tgt. */
static struct ibv_send_wr wr_of(uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_sge *s, int n,
				char *remote)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = s, .num_sge = n, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)remote, .rkey = mr_tgt->rkey },
	};

	return wr;
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int err = ibv_post_send(qp, wr, &bad);

	if (err)
		printf("# ibv_post_send: %s\n", strerror(err));
	return !err;
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = n }, *bad;
	int err = ibv_post_recv(qp, &wr, &bad);

	if (err)
		printf("# ibv_post_recv: %s\n", strerror(err));
	return !err;
}

/* Posts @wr on A and waits for its completion with @status. */
static int send_wait(struct pair *p, struct ibv_send_wr *wr, enum ibv_wc_status status)
{
	struct ibv_wc wc;

	return post_send(p->qp[0], wr) &&
	       expect(p->cq[0], wr->wr_id, status, wc_opcode[wr->opcode], &wc);
}

/* B's receive @wr_id completes by @opcode with @len bytes, and @imm unless it is 0. */
static int recv_wait(struct pair *p, uint64_t wr_id, enum ibv_wc_opcode opcode,
		     uint32_t len, __be32 imm)
{
	struct ibv_wc wc;

	if (!expect(p->cq[1], wr_id, IBV_WC_SUCCESS, opcode, &wc))
		return 0;
	if (wc.byte_len == len && !(wc.wc_flags & IBV_WC_WITH_IMM) == !imm &&
	    (!imm || wc.imm_data == imm))
		return 1;
	printf("# byte_len %u, wc_flags %#x, imm_data %#x; expected %u, imm_data %#x\n",
	       wc.byte_len, wc.wc_flags, ntohl(wc.imm_data), len, ntohl(imm));
	return 0;
}

static int send_sges(struct pair *p)
{
	struct ibv_sge s[3] = { SGE(mr_src, src, 100), SGE(mr_src, src + 10000, 3000),
				SGE(mr_src, src + 30000, 5000) };
	struct ibv_sge r[2] = { SGE(mr_rcv1, rcv1, 4000), SGE(mr_rcv2, rcv2, 8192) };
	struct ibv_send_wr wr = wr_of(11, IBV_WR_SEND, s, 3, NULL);

	fill(src, BUF_LEN, 1);
	memset(rcv1, 0, RCV1_LEN);
	memset(rcv2, 0, RCV2_LEN);
	if (!post_recv(p->qp[1], 10, r, 2) || !send_wait(p, &wr, IBV_WC_SUCCESS) ||
	    !recv_wait(p, 10, IBV_WC_RECV, 8100, 0))
		return 0;
	memcpy(want, src, 100);
	memcpy(want + 100, src + 10000, 3000);
	memcpy(want + 3100, src + 30000, 5000);
	return same("first receive SGE", rcv1, want, 4000) &&
	       same("second receive SGE", rcv2, want + 4000, 4100) &&
	       all("past the first SGE", rcv1 + 4000, RCV1_LEN - 4000, 0) &&
	       all("past the message", rcv2 + 4100, RCV2_LEN - 4100, 0);
}

static int send_imm(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 32), r = SGE(mr_rcv1, rcv1, RCV1_LEN);
	struct ibv_send_wr wr = wr_of(21, IBV_WR_SEND_WITH_IMM, &s, 1, NULL);

	wr.imm_data = htonl(0x12345678);
	fill(src, 32, 2);
	memset(rcv1, 0, RCV1_LEN);
	return post_recv(p->qp[1], 20, &r, 1) && send_wait(p, &wr, IBV_WC_SUCCESS) &&
	       recv_wait(p, 20, IBV_WC_RECV, 32, htonl(0x12345678)) &&
	       same("received", rcv1, src, 32);
}

static int write_read(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 20000), r = SGE(mr_back, back, 20000);
	struct ibv_send_wr wr = wr_of(31, IBV_WR_RDMA_WRITE, &s, 1, tgt);
	struct ibv_send_wr rd = wr_of(32, IBV_WR_RDMA_READ, &r, 1, tgt);

	fill(src, 20000, 3);
	memset(tgt, 0, BUF_LEN);
	memset(back, 0, BUF_LEN);
	return send_wait(p, &wr, IBV_WC_SUCCESS) && same("written", tgt, src, 20000) &&
	       all("past the write", tgt + 20000, 4096, 0) &&
	       send_wait(p, &rd, IBV_WC_SUCCESS) && same("read back", back, src, 20000) &&
	       all("past the read", back + 20000, 4096, 0);
}

static int write_imm(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 4096), r = SGE(mr_rcv1, rcv1, 64);
	struct ibv_send_wr wr = wr_of(41, IBV_WR_RDMA_WRITE_WITH_IMM, &s, 1, tgt + WIMM_OFF);

	wr.imm_data = htonl(0xabcdef01);
	fill(src, 4096, 4);
	memset(tgt, 0, BUF_LEN);
	return post_recv(p->qp[1], 40, &r, 1) && send_wait(p, &wr, IBV_WC_SUCCESS) &&
	       recv_wait(p, 40, IBV_WC_RECV_RDMA_WITH_IMM, 4096, htonl(0xabcdef01)) &&
	       same("written", tgt + WIMM_OFF, src, 4096) &&
	       all("before the write", tgt, WIMM_OFF, 0);
}

static int inline_send(struct pair *p)
{
	char msg[64], copy[64];
	struct ibv_sge s = { .addr = (uintptr_t)msg, .length = 64 }, r = SGE(mr_rcv1, rcv1, 1024);
	struct ibv_send_wr wr = wr_of(51, IBV_WR_SEND, &s, 1, NULL);
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa = { 0 };
	struct ibv_wc wc;

	if (ibv_query_qp(p->qp[0], &qa, IBV_QP_CAP, &qia) || qa.cap.max_inline_data < 64) {
		printf("# max_inline_data %u\n", qa.cap.max_inline_data);
		return 0;
	}
	wr.send_flags |= IBV_SEND_INLINE;
	fill(msg, 64, 5);
	memcpy(copy, msg, 64);
	memset(rcv1, 0, RCV1_LEN);
	if (!post_recv(p->qp[1], 50, &r, 1) || !post_send(p->qp[0], &wr))
		return 0;
	memset(msg, 0, 64);	/* inline: ibv_post_send took the data */
	return expect(p->cq[0], 51, IBV_WC_SUCCESS, IBV_WC_SEND, &wc) &&
	       recv_wait(p, 50, IBV_WC_RECV, 64, 0) && same("received", rcv1, copy, 64);
}

/* An atomic on tgt's u64 that returns @old and leaves @new there. */
static int atomic(struct pair *p, enum ibv_wr_opcode op, uint64_t compare_add, uint64_t swap,
		  uint64_t old, uint64_t new)
{
	static uint64_t wr_id = 60;
	struct ibv_sge s = SGE(mr_back, back, 8);
	struct ibv_send_wr wr = wr_of(wr_id++, op, &s, 1, NULL);

	wr.wr.atomic.remote_addr = (uintptr_t)&REMOTE64;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	wr.wr.atomic.rkey = mr_tgt->rkey;
	BACK64 = 0xdeadbeef;
	if (!send_wait(p, &wr, IBV_WC_SUCCESS))
		return 0;
	if (BACK64 == old && REMOTE64 == new)
		return 1;
	printf("# returned %llu, remote %llu; expected %llu, %llu\n",
	       (unsigned long long)BACK64, (unsigned long long)REMOTE64,
	       (unsigned long long)old, (unsigned long long)new);
	return 0;
}

static int atomics(struct pair *p)
{
	REMOTE64 = 100;
	return atomic(p, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 0, 100, 105) &&
	       atomic(p, IBV_WR_ATOMIC_CMP_AND_SWP, 105, 7, 105, 7) &&
	       atomic(p, IBV_WR_ATOMIC_CMP_AND_SWP, 105, 9, 7, 7);
}

static int unsignalled(struct pair *p)
{
	struct ibv_send_wr wr[3];
	struct ibv_sge s[3], r[3];
	struct ibv_wc wc;
	int i, ok = 1;

	fill(src, 48, 6);
	memset(rcv1, 0, RCV1_LEN);
	for (i = 0; i < 3; i++) {
		r[i] = SGE(mr_rcv1, rcv1 + i * 1024, 1024);
		ok &= post_recv(p->qp[1], 70 + i, &r[i], 1);
		s[i] = SGE(mr_src, src + i * 16, 16);
		wr[i] = wr_of(75 + i, IBV_WR_SEND, &s[i], 1, NULL);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
		wr[i].send_flags = i < 2 ? 0 : IBV_SEND_SIGNALED;
	}
	if (!ok || !post_send(p->qp[0], wr))
		return 0;
	for (i = 0; i < 3 && ok; i++)
		ok = recv_wait(p, 70 + i, IBV_WC_RECV, 16, 0) &&
		     same("received", rcv1 + i * 1024, src + i * 16, 16);
	if (!ok || !expect(p->cq[0], 77, IBV_WC_SUCCESS, IBV_WC_SEND, &wc))
		return 0;
	if (!poll_one(p->cq[0], &wc, 0.2))
		return 1;
	printf("# another send completion: wr %llu\n", (unsigned long long)wc.wr_id);
	return 0;
}

/*
 * B's CQ holds 6 receive completions (A's last send completes only after
 * B has completed its receive): resizing it to 4 fails with EINVAL (IBA
 * 11.2.6.4) and loses none; resizing it to 100 keeps all 6, in order.
 */
static int resize_full(struct pair *p)
{
	struct ibv_send_wr wr[6];
	struct ibv_sge s[6], r[6];
	struct ibv_wc wc;
	int i, err, ok = 1;

	fill(src, 96, 8);
	for (i = 0; i < 6; i++) {
		r[i] = SGE(mr_rcv1, rcv1 + i * 512, 512);
		ok &= post_recv(p->qp[1], 80 + i, &r[i], 1);
		s[i] = SGE(mr_src, src + i * 16, 16);
		wr[i] = wr_of(85 + i, IBV_WR_SEND, &s[i], 1, NULL);
		wr[i].next = i < 5 ? &wr[i + 1] : NULL;
		wr[i].send_flags = i < 5 ? 0 : IBV_SEND_SIGNALED;
	}
	if (!ok || !post_send(p->qp[0], wr) || !expect(p->cq[0], 90, IBV_WC_SUCCESS, IBV_WC_SEND, &wc))
		return 0;
	err = ibv_resize_cq(p->cq[1], 4);
	if (err != EINVAL) {
		printf("# resize to 4 under 6 completions: %s, not EINVAL\n", strerror(err));
		return 0;
	}
	err = ibv_resize_cq(p->cq[1], 100);
	if (err || p->cq[1]->cqe < 100) {
		printf("# resize to 100: %s, cqe %d\n", strerror(err), p->cq[1]->cqe);
		return 0;
	}
	for (i = 0; i < 6 && ok; i++)
		ok = recv_wait(p, 80 + i, IBV_WC_RECV, 16, 0) &&
		     same("received", rcv1 + i * 512, src + i * 16, 16);
	if (ok && poll_one(p->cq[1], &wc, 0.2)) {
		printf("# a seventh completion: wr %llu\n", (unsigned long long)wc.wr_id);
		return 0;
	}
	return ok;
}

static uint32_t psn_of(struct ibv_qp *qp, enum ibv_qp_attr_mask which)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, which, &ia))
		return ~0u;
	return which == IBV_QP_SQ_PSN ? a.sq_psn : a.rq_psn;
}

/*
 * ibv_query_qp reports the PSNs as they are, not as last set: between
 * messages A's next PSN to send is B's next expected, and 3 one-packet
 * SENDs move both on by 3.
 */
static int live_psns(struct pair *p)
{
	uint32_t sq = psn_of(p->qp[0], IBV_QP_SQ_PSN), rq = psn_of(p->qp[1], IBV_QP_RQ_PSN);
	uint32_t sq2, rq2;
	struct ibv_sge s = SGE(mr_src, src, 16), r = SGE(mr_rcv1, rcv1, 1024);
	struct ibv_send_wr wr = wr_of(95, IBV_WR_SEND, &s, 1, NULL);
	int ok = 1;

	for (int i = 0; i < 3 && ok; i++)
		ok = post_recv(p->qp[1], 96, &r, 1) && send_wait(p, &wr, IBV_WC_SUCCESS) &&
		     recv_wait(p, 96, IBV_WC_RECV, 16, 0);
	sq2 = psn_of(p->qp[0], IBV_QP_SQ_PSN);
	rq2 = psn_of(p->qp[1], IBV_QP_RQ_PSN);
	printf("# A's sq_psn %#x -> %#x, B's rq_psn %#x -> %#x\n", sq, sq2, rq, rq2);
	return ok && sq == rq && sq != 0x100 && sq2 == ((sq + 3) & 0xffffff) && rq2 == sq2;
}

/* After an error A is in the error state: what it is given next is flushed. */
static int flushed(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 16);
	struct ibv_send_wr wr = wr_of(99, IBV_WR_SEND, &s, 1, NULL);

	return send_wait(p, &wr, IBV_WC_WR_FLUSH_ERR);
}

static int bad_rkey(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 4096);
	struct ibv_send_wr wr = wr_of(81, IBV_WR_RDMA_WRITE, &s, 1, tgt);

	wr.wr.rdma.rkey ^= 0x1000;
	fill(src, 4096, 8);
	memset(tgt, 0x5a, 4096);
	return send_wait(p, &wr, IBV_WC_REM_ACCESS_ERR) && all("target", tgt, 4096, 0x5a) &&
	       flushed(p);
}

static int bad_lkey(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 4096), r = SGE(mr_rcv1, rcv1, RCV1_LEN);
	struct ibv_send_wr wr = wr_of(83, IBV_WR_SEND, &s, 1, NULL);

	s.lkey ^= 0x1000;
	return post_recv(p->qp[1], 82, &r, 1) && send_wait(p, &wr, IBV_WC_LOC_PROT_ERR) &&
	       flushed(p);
}

static int read_beyond(struct pair *p)
{
	struct ibv_sge s = SGE(mr_back, back, 4096);
	struct ibv_send_wr wr = wr_of(85, IBV_WR_RDMA_READ, &s, 1, tgt + BUF_LEN - 100);

	memset(back, 0x33, 4096);
	return send_wait(p, &wr, IBV_WC_REM_ACCESS_ERR) && all("read buffer", back, 4096, 0x33) &&
	       flushed(p);
}

/* A third QP, on A's CQ, connected to no QP: 1 + 2 tries of 67 ms (timeout 14). */
static int peer_gone(struct pair *p)
{
	struct ibv_qp *qp = create_qp(p->cq[0]);
	struct ibv_sge s = SGE(mr_src, src, 64);
	struct ibv_send_wr wr = wr_of(91, IBV_WR_SEND, &s, 1, NULL);
	double start = now();
	struct ibv_wc wc;
	int ok;

	ok = qp && connect_qp(qp, BAD_QPN, 14, 2) && post_send(qp, &wr) &&
	     expect(p->cq[0], 91, IBV_WC_RETRY_EXC_ERR, IBV_WC_SEND, &wc);
	printf("# after %.2f s\n", now() - start);
	ok = ok && now() - start >= 0.1;
	return (!qp || !ibv_destroy_qp(qp)) && ok;
}

/*
 * Memory windows on tgt, bound by B, whose peer A reaches tgt through them.
 * WIN_OFF..WIN_OFF + WIN_LEN of tgt is the window; mr_win covers all of tgt.
 */
#define WIN_OFF 8192
#define WIN_LEN 8192
#define WIN_RIGHTS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct ibv_mr *mr_win;

/* Posts @wr on B and waits for its completion with @status. */
static int b_wait(struct pair *p, struct ibv_send_wr *wr, enum ibv_wc_status status)
{
	struct ibv_wc wc;

	return post_send(p->qp[1], wr) &&
	       expect(p->cq[1], wr->wr_id, status, wc_opcode[wr->opcode], &wc);
}

/* A writes 4096 bytes to tgt + @off through @rkey, with @status. */
static int write_through(struct pair *p, uint64_t wr_id, uint32_t rkey, int off,
			 enum ibv_wc_status status)
{
	struct ibv_sge s = SGE(mr_src, src, 4096);
	struct ibv_send_wr wr = wr_of(wr_id, IBV_WR_RDMA_WRITE, &s, 1, tgt + off);

	wr.wr.rdma.rkey = rkey;
	fill(src, 4096, wr_id);
	memset(tgt, 0x5a, BUF_LEN);
	if (!send_wait(p, &wr, status))
		return 0;
	if (status == IBV_WC_SUCCESS)
		return same("written through the window", tgt + off, src, 4096) &&
		       all("before the write", tgt, off, 0x5a);
	return all("target", tgt, BUF_LEN, 0x5a);
}

/* A type 2 window over the window range of tgt, bound by B with rkey @rkey. */
static struct ibv_mw *bind_type2(struct pair *p, uint64_t wr_id, uint32_t *rkey)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };

	if (!mw) {
		printf("# ibv_alloc_mw: %s\n", strerror(errno));
		return NULL;
	}
	*rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = *rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr_win,
		.addr = (uintptr_t)tgt + WIN_OFF, .length = WIN_LEN, .mw_access_flags = WIN_RIGHTS };
	if (b_wait(p, &wr, IBV_WC_SUCCESS))
		return mw;
	ibv_dealloc_mw(mw);
	return NULL;
}

static int reg_win(void)
{
	mr_win = ibv_reg_mr(pd, tgt, BUF_LEN, RIGHTS | IBV_ACCESS_MW_BIND);
	if (!mr_win)
		printf("# ibv_reg_mr with MW_BIND: %s\n", strerror(errno));
	return !!mr_win;
}

/*
 * Type 1: a WRITE and a READ through the window; its MR cannot be
 * deregistered while it is bound; after a rebind elsewhere the old rkey
 * fails and the new one works; outside the window fails.
 */
static int mw_type1(struct pair *p)
{
	struct ibv_mw *mw = reg_win() ? ibv_alloc_mw(pd, IBV_MW_TYPE_1) : NULL;
	struct ibv_mw_bind bind = { .wr_id = 101, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr_win, .addr = (uintptr_t)tgt + WIN_OFF,
			       .length = WIN_LEN, .mw_access_flags = WIN_RIGHTS } };
	struct ibv_sge r = SGE(mr_back, back, 4096);
	struct ibv_send_wr rd = wr_of(103, IBV_WR_RDMA_READ, &r, 1, tgt + WIN_OFF);
	uint32_t old;
	struct ibv_wc wc;
	int ok;

	ok = mw && !ibv_bind_mw(p->qp[1], mw, &bind) &&
	     expect(p->cq[1], 101, IBV_WC_SUCCESS, IBV_WC_BIND_MW, &wc) &&
	     write_through(p, 102, mw->rkey, WIN_OFF, IBV_WC_SUCCESS);
	rd.wr.rdma.rkey = mw ? mw->rkey : 0;
	memset(back, 0, 4096);
	ok = ok && send_wait(p, &rd, IBV_WC_SUCCESS) && same("read back", back, src, 4096);
	errno = 0;
	ok = ok && ibv_dereg_mr(mr_win) == EBUSY;
	printf("# deregistering the bound MR: %s\n", strerror(errno));
	old = mw ? mw->rkey : 0;
	bind.wr_id = 104;
	bind.bind_info.addr += 4096;
	ok = ok && !ibv_bind_mw(p->qp[1], mw, &bind) &&
	     expect(p->cq[1], 104, IBV_WC_SUCCESS, IBV_WC_BIND_MW, &wc) && mw->rkey != old &&
	     write_through(p, 105, mw->rkey, WIN_OFF + 4096, IBV_WC_SUCCESS) &&
	     write_through(p, 106, mw->rkey, WIN_OFF + WIN_LEN + 2048, IBV_WC_REM_ACCESS_ERR);
	return (!mw || !ibv_dealloc_mw(mw)) && mr_win && !ibv_dereg_mr(mr_win) && ok;
}

/* An old rkey of a type 1 window, after a rebind: REM_ACCESS_ERR. */
static int mw_stale_rkey(struct pair *p)
{
	struct ibv_mw *mw = reg_win() ? ibv_alloc_mw(pd, IBV_MW_TYPE_1) : NULL;
	struct ibv_mw_bind bind = { .wr_id = 111, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr_win, .addr = (uintptr_t)tgt + WIN_OFF,
			       .length = WIN_LEN, .mw_access_flags = WIN_RIGHTS } };
	uint32_t old = 0;
	struct ibv_wc wc;
	int ok;

	ok = mw && !ibv_bind_mw(p->qp[1], mw, &bind) &&
	     expect(p->cq[1], 111, IBV_WC_SUCCESS, IBV_WC_BIND_MW, &wc);
	old = mw ? mw->rkey : 0;
	bind.wr_id = 112;
	ok = ok && !ibv_bind_mw(p->qp[1], mw, &bind) &&
	     expect(p->cq[1], 112, IBV_WC_SUCCESS, IBV_WC_BIND_MW, &wc) &&
	     write_through(p, 113, old, WIN_OFF, IBV_WC_REM_ACCESS_ERR);
	return (!mw || !ibv_dealloc_mw(mw)) && mr_win && !ibv_dereg_mr(mr_win) && ok;
}

/*
 * Type 2: bound by a work request; a SEND with Invalidate from A unbinds it
 * (B's receive reports the rkey), after which a WRITE through it fails.
 */
static int mw_send_inv(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 64), r = SGE(mr_rcv1, rcv1, RCV1_LEN);
	struct ibv_send_wr wr = wr_of(123, IBV_WR_SEND_WITH_INV, &s, 1, NULL);
	uint32_t rkey = 0;
	struct ibv_mw *mw = reg_win() ? bind_type2(p, 121, &rkey) : NULL;
	struct ibv_wc wc;
	int ok;

	wr.invalidate_rkey = rkey;
	ok = mw && write_through(p, 122, rkey, WIN_OFF, IBV_WC_SUCCESS) &&
	     post_recv(p->qp[1], 120, &r, 1) && send_wait(p, &wr, IBV_WC_SUCCESS) &&
	     expect(p->cq[1], 120, IBV_WC_SUCCESS, IBV_WC_RECV, &wc);
	if (ok && (!(wc.wc_flags & IBV_WC_WITH_INV) || wc.invalidated_rkey != rkey)) {
		printf("# wc_flags %#x, invalidated_rkey %#x; expected %#x\n", wc.wc_flags,
		       wc.invalidated_rkey, rkey);
		ok = 0;
	}
	ok = ok && write_through(p, 124, rkey, WIN_OFF, IBV_WC_REM_ACCESS_ERR);
	return (!mw || !ibv_dealloc_mw(mw)) && mr_win && !ibv_dereg_mr(mr_win) && ok;
}

/* Type 2: B's LOCAL_INV unbinds it; a WRITE through it fails. */
static int mw_local_inv(struct pair *p)
{
	struct ibv_send_wr inv = { .wr_id = 132, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED };
	uint32_t rkey = 0;
	struct ibv_mw *mw = reg_win() ? bind_type2(p, 131, &rkey) : NULL;
	int ok;

	inv.invalidate_rkey = rkey;
	ok = mw && b_wait(p, &inv, IBV_WC_SUCCESS) &&
	     write_through(p, 133, rkey, WIN_OFF, IBV_WC_REM_ACCESS_ERR);
	return (!mw || !ibv_dealloc_mw(mw)) && mr_win && !ibv_dereg_mr(mr_win) && ok;
}

/*
 * A WRITE, then a bind to an MR registered without MW_BIND: the WRITE
 * completes first (done or flushed, never lost), then MW_BIND_ERR, and B is
 * flushed.
 */
static int mw_bind_refused(struct pair *p)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = { .wr_id = 141, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr_tgt, .addr = (uintptr_t)tgt, .length = 4096,
			       .mw_access_flags = WIN_RIGHTS } };
	struct ibv_sge s = SGE(mr_src, src, 16), w = SGE(mr_src, src, 60000);
	struct ibv_send_wr wr = wr_of(142, IBV_WR_SEND, &s, 1, NULL);
	struct ibv_send_wr write = wr_of(140, IBV_WR_RDMA_WRITE, &w, 1, tgt);
	struct ibv_wc wc;
	int ok;

	ok = mw && post_send(p->qp[1], &write) && !ibv_bind_mw(p->qp[1], mw, &bind) &&
	     poll_one(p->cq[1], &wc, WAIT_S);
	if (ok && (wc.wr_id != 140 ||
		   (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR))) {
		printf("# first completion: wr %llu, %s\n", (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
		ok = 0;
	}
	ok = ok && expect(p->cq[1], 141, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW, &wc) &&
	     b_wait(p, &wr, IBV_WC_WR_FLUSH_ERR);
	return (!mw || !ibv_dealloc_mw(mw)) && ok;
}

/*
 * The device's port counter @name, from sysfs; -1 if unreadable. After
 * 30 ms: ib_core answers reads within 10 ms of the last with what it read
 * then (hw_counters/lifespan).
 */
static long long hw_counter(const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	usleep(30000);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(ctx->device), name);
	f = fopen(path, "r");
	if (f && fscanf(f, "%lld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/*
 * B's unsignalled WRITE, then in the same post its signalled LOCAL_INV of a
 * type 2 window, which waits for the WRITE to complete; then another such
 * WRITE and a signalled bind of a second window. The WRITEs ask for no ACK
 * of their own, yet neither local operation waits for a timer to resend
 * (no retransmission counted); the data landed, and A writes through the
 * second window.
 */
static int local_after_unsignalled(struct pair *p)
{
	struct ibv_sge s = SGE(mr_src, src, 64);
	struct ibv_send_wr w = wr_of(151, IBV_WR_RDMA_WRITE, &s, 1, tgt);
	struct ibv_send_wr op = { .wr_id = 152, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED };
	uint32_t rkey = 0;
	struct ibv_mw *mw = reg_win() ? bind_type2(p, 150, &rkey) : NULL;
	struct ibv_mw *mw2 = mw ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	long long retx = hw_counter("retransmits"), dup = hw_counter("duplicate_request");
	struct ibv_wc wc;
	int ok;

	w.send_flags = 0;
	w.next = &op;
	op.invalidate_rkey = rkey;
	fill(src, 64, 151);
	memset(tgt, 0, 64);
	ok = mw2 && retx >= 0 && post_send(p->qp[1], &w) &&
	     expect(p->cq[1], 152, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, &wc) &&
	     same("written before the LOCAL_INV", tgt, src, 64);
	printf("# LOCAL_INV: retransmits %lld -> %lld, duplicate_request %lld -> %lld\n", retx,
	       hw_counter("retransmits"), dup, hw_counter("duplicate_request"));
	if (ok) {
		rkey = ibv_inc_rkey(mw2->rkey);
		op = (struct ibv_send_wr){ .wr_id = 154, .opcode = IBV_WR_BIND_MW,
					   .send_flags = IBV_SEND_SIGNALED };
		op.bind_mw.mw = mw2;
		op.bind_mw.rkey = rkey;
		op.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr_win,
			.addr = (uintptr_t)tgt + WIN_OFF, .length = WIN_LEN,
			.mw_access_flags = WIN_RIGHTS };
		w.wr_id = 153;
		fill(src, 64, 153);
		memset(tgt, 0, 64);
		ok = post_send(p->qp[1], &w) &&
		     expect(p->cq[1], 154, IBV_WC_SUCCESS, IBV_WC_BIND_MW, &wc) &&
		     same("written before the bind", tgt, src, 64);
		printf("# bind: retransmits %lld, duplicate_request %lld\n",
		       hw_counter("retransmits"), hw_counter("duplicate_request"));
	}
	ok = ok && hw_counter("retransmits") == retx &&
	     write_through(p, 155, rkey, WIN_OFF, IBV_WC_SUCCESS);
	ok = (!mw2 || !ibv_dealloc_mw(mw2)) && ok;
	return (!mw || !ibv_dealloc_mw(mw)) && mr_win && !ibv_dereg_mr(mr_win) && ok;
}

/* Waits up to @secs for @fd to be readable. */
static int readable(int fd, double secs)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double end = now() + secs, left;

	while ((left = end - now()) > 0)
		if (poll(&pfd, 1, left * 1000 + 1) > 0)
			return 1;
	return 0;
}

/* Within 10 s, @channel has an event, of @cq; it is acknowledged. */
static int cq_event(struct ibv_comp_channel *channel, struct ibv_cq *cq)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (!readable(channel->fd, WAIT_S)) {
		printf("# no completion event within %d s\n", WAIT_S);
		return 0;
	}
	if (ibv_get_cq_event(channel, &ev_cq, &ev_ctx)) {
		printf("# ibv_get_cq_event: %s\n", strerror(errno));
		return 0;
	}
	ibv_ack_cq_events(ev_cq, 1);
	if (ev_cq == cq)
		return 1;
	printf("# an event of CQ %p, not %p\n", (void *)ev_cq, (void *)cq);
	return 0;
}

/* A SENDs @len bytes of src at @off, with @flags, into B's receive @wr_id at rcv1 + @off. */
static int send_one(struct pair *p, uint64_t wr_id, int off, uint32_t len, unsigned int flags)
{
	struct ibv_sge s = SGE(mr_src, src + off, len), r = SGE(mr_rcv1, rcv1 + off, len);
	struct ibv_send_wr wr = wr_of(wr_id + 1, IBV_WR_SEND, &s, 1, NULL);

	wr.send_flags |= flags;
	fill(src + off, len, wr_id);
	return post_recv(p->qp[1], wr_id, &r, 1) && send_wait(p, &wr, IBV_WC_SUCCESS);
}

/* B's receive @wr_id of send_one() completed, with the data. */
static int got_one(struct pair *p, uint64_t wr_id, int off, uint32_t len)
{
	return recv_wait(p, wr_id, IBV_WC_RECV, len, 0) &&
	       same("received", rcv1 + off, src + off, len);
}

static int comp_channel(struct pair *unused)
{
	struct ibv_comp_channel *channel = ibv_create_comp_channel(ctx);
	struct pair p = { 0 };
	int ok, err;

	(void)unused;
	if (!channel) {
		printf("# ibv_create_comp_channel: %s\n", strerror(errno));
		return 0;
	}
	memset(rcv1, 0, RCV1_LEN);
	ok = make_pair_with(&p, 16, channel, NULL);
	err = ok ? ibv_req_notify_cq(p.cq[1], 0) : 0;
	if (err)
		printf("# ibv_req_notify_cq: %s\n", strerror(err));
	ok = ok && !err && send_one(&p, 100, 0, 200, 0) && cq_event(channel, p.cq[1]) &&
	     got_one(&p, 100, 0, 200);

	/* Solicited only: a plain SEND completes but does not signal. */
	err = ok ? ibv_req_notify_cq(p.cq[1], 1) : 0;
	if (err)
		printf("# ibv_req_notify_cq, solicited only: %s\n", strerror(err));
	ok = ok && !err && send_one(&p, 110, 1024, 300, 0) && got_one(&p, 110, 1024, 300);
	if (ok && readable(channel->fd, 0.3)) {
		printf("# an event for a completion that is not solicited\n");
		ok = 0;
	}
	ok = ok && send_one(&p, 120, 2048, 400, IBV_SEND_SOLICITED) &&
	     cq_event(channel, p.cq[1]) && got_one(&p, 120, 2048, 400);

	/* Armed for the next and then for the next solicited: the next wins. */
	err = ok ? ibv_req_notify_cq(p.cq[1], 0) || ibv_req_notify_cq(p.cq[1], 1) : 0;
	ok = ok && !err && send_one(&p, 130, 3072, 500, 0) && cq_event(channel, p.cq[1]) &&
	     got_one(&p, 130, 3072, 500);

	/* The CQ goes before its channel; every event was acknowledged. */
	ok = destroy_pair(&p) && ok;
	return !ibv_destroy_comp_channel(channel) && ok;
}

/* Within 10 s, the context has an async event of @type (others are skipped); acknowledged. */
static int async_event(enum ibv_event_type type, struct ibv_async_event *ev)
{
	double end = now() + WAIT_S;

	while (readable(ctx->async_fd, end - now())) {
		if (ibv_get_async_event(ctx, ev)) {
			printf("# ibv_get_async_event: %s\n", strerror(errno));
			return 0;
		}
		ibv_ack_async_event(ev);
		if (ev->event_type == type)
			return 1;
		printf("# async event %s skipped\n", ibv_event_type_str(ev->event_type));
	}
	printf("# no async event %s within %d s\n", ibv_event_type_str(type), WAIT_S);
	return 0;
}

static int post_srq_recv(struct ibv_srq *srq, uint64_t wr_id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = n }, *bad;
	int err = ibv_post_srq_recv(srq, &wr, &bad);

	if (err)
		printf("# ibv_post_srq_recv: %s\n", strerror(err));
	return !err;
}

#define SRQ_POSTED 8
#define SRQ_SENT 5
#define SRQ_HEAD 32		/* of each receive, in rcv1; the rest in rcv2 */

/*
 * 8 receives of 2 SGEs on the SRQ, limit 4; 5 SENDs from A take the first 5
 * in order, leaving 3: the limit event, once.
 */
static int srq_limit(struct pair *unused)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 16, .max_sge = 2 } };
	struct ibv_srq_attr sa = { 0 };
	struct ibv_sge r[SRQ_POSTED][2], s;
	struct ibv_async_event ev;
	struct ibv_send_wr wr;
	struct ibv_srq *srq;
	struct pair p = { 0 };
	uint32_t len;
	int i, ok, err;

	(void)unused;
	srq = ibv_create_srq(pd, &init);
	if (!srq) {
		printf("# ibv_create_srq: %s\n", strerror(errno));
		return 0;
	}
	err = ibv_query_srq(srq, &sa);
	ok = !err && sa.max_wr >= 16 && sa.max_sge >= 2 && sa.srq_limit == 0;
	if (!ok)
		printf("# ibv_query_srq: %s, max_wr %u, max_sge %u, srq_limit %u\n",
		       strerror(err), sa.max_wr, sa.max_sge, sa.srq_limit);
	ok = ok && make_pair_with(&p, 256, NULL, srq);

	memset(rcv1, 0, RCV1_LEN);
	memset(rcv2, 0, RCV2_LEN);
	for (i = 0; i < SRQ_POSTED && ok; i++) {
		r[i][0] = SGE(mr_rcv1, rcv1 + i * 512, SRQ_HEAD);
		r[i][1] = SGE(mr_rcv2, rcv2 + i * 2048, 2048);
		ok = post_srq_recv(srq, 200 + i, r[i], 2);
	}
	err = ok ? ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 4 }, IBV_SRQ_LIMIT) : 0;
	if (err)
		printf("# ibv_modify_srq: %s\n", strerror(err));
	ok = ok && !err && !ibv_query_srq(srq, &sa);
	if (ok && sa.srq_limit != 4) {
		printf("# srq_limit %u once armed with 4\n", sa.srq_limit);
		ok = 0;
	}

	/* Message i: 100 + 300 i bytes (the last one of 2 packets) of src + 4096 i. */
	for (i = 0; i < SRQ_SENT && ok; i++) {
		len = 100 + 300 * i;
		s = SGE(mr_src, src + i * 4096, len);
		wr = wr_of(210 + i, IBV_WR_SEND, &s, 1, NULL);
		fill(src + i * 4096, len, 20 + i);
		ok = send_wait(&p, &wr, IBV_WC_SUCCESS);
	}
	for (i = 0; i < SRQ_SENT && ok; i++) {
		len = 100 + 300 * i;
		ok = recv_wait(&p, 200 + i, IBV_WC_RECV, len, 0) &&
		     same("first SGE", rcv1 + i * 512, src + i * 4096, SRQ_HEAD) &&
		     same("second SGE", rcv2 + i * 2048, src + i * 4096 + SRQ_HEAD,
			  len - SRQ_HEAD) &&
		     all("past the message", rcv2 + i * 2048 + len - SRQ_HEAD,
			 2048 - (len - SRQ_HEAD), 0);
	}
	ok = ok && all("the receives not taken", rcv2 + SRQ_SENT * 2048,
		       (SRQ_POSTED - SRQ_SENT) * 2048, 0);

	ok = ok && async_event(IBV_EVENT_SRQ_LIMIT_REACHED, &ev);
	if (ok && ev.element.srq != srq) {
		printf("# the limit event of SRQ %p, not %p\n", (void *)ev.element.srq,
		       (void *)srq);
		ok = 0;
	}
	ok = ok && !ibv_query_srq(srq, &sa);
	if (ok && sa.srq_limit != 0) {
		printf("# srq_limit %u after the limit event\n", sa.srq_limit);
		ok = 0;
	}

	/* The QPs go before their SRQ. */
	ok = destroy_pair(&p) && ok;
	return !ibv_destroy_srq(srq) && ok;
}

/*
 * B's CQ holds N completions (4 asked); N + 2 SENDs into N + 2 receives
 * fill it, and the next receive completion puts B in the error state.
 */
static int cq_overflow(struct pair *unused)
{
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa = { 0 };
	struct ibv_sge s[64], r[64];
	struct ibv_send_wr wr;
	struct pair p = { 0 };
	struct ibv_wc wc[16];
	int i, n = 0, got = 0, ok, err;
	double end;

	(void)unused;
	ok = make_pair_with(&p, 4, NULL, NULL);
	if (ok) {
		n = p.cq[1]->cqe;
		printf("# B's CQ holds %d completions\n", n);
		ok = n >= 4 && n + 2 <= 64;	/* what the queues and rcv1 take */
		if (!ok)
			printf("# expected 4 to 62\n");
	}
	fill(src, 64 * 64, 30);
	memset(rcv1, 0, RCV1_LEN);
	for (i = 0; i < n + 2 && ok; i++) {
		r[i] = SGE(mr_rcv1, rcv1 + i * 64, 64);
		ok = post_recv(p.qp[1], 300 + i, &r[i], 1);
	}
	/* A's completions are not looked at: A may fail once B stops answering. */
	for (i = 0; i < n + 2 && ok; i++) {
		s[i] = SGE(mr_src, src + i * 64, 16);
		wr = wr_of(400 + i, IBV_WR_SEND, &s[i], 1, NULL);
		ok = post_send(p.qp[0], &wr);
	}

	end = now() + WAIT_S;
	while (ok) {
		err = ibv_query_qp(p.qp[1], &qa, IBV_QP_STATE, &qia);
		if (err) {
			printf("# ibv_query_qp: %s\n", strerror(err));
			ok = 0;
		} else if (qa.qp_state == IBV_QPS_ERR) {
			break;
		} else if (now() > end) {
			printf("# B still in state %d after %d s\n", qa.qp_state, WAIT_S);
			ok = 0;
		} else {
			usleep(10000);
		}
	}

	/* Bounded: B, in the error state, adds nothing more. */
	while (ok && got <= 64 && (i = ibv_poll_cq(p.cq[1], ARRAY_SIZE(wc), wc)) > 0)
		got += i;
	if (ok) {
		printf("# %d completions in B's CQ\n", got);
		ok = i >= 0 && got <= n;
	}
	return destroy_pair(&p) && ok;
}

static const struct {
	int (*run)(struct pair *p);
	/* 1: wants fresh QPs, and leaves them in the error state; OWN: does not use p */
	int breaks;
	const char *what;
} checks[] = {
	{ send_sges, 0, "SEND of 3 SGEs, 8100 bytes, into a receive of 2 SGEs in 2 MRs" },
	{ send_imm, 0, "SEND with immediate: the receive has IBV_WC_WITH_IMM and the value" },
	{ write_read, 0, "RDMA WRITE of 20000 bytes, RDMA READ of them back" },
	{ write_imm, 0, "RDMA WRITE with immediate: written, and B's receive has the value" },
	{ inline_send, 0, "inline SEND of 64 bytes, taken when posted" },
	{ atomics, 0, "fetch and add, compare and swap, a compare that fails" },
	{ unsignalled, 0, "3 SENDs, the last signalled: 1 send and 3 receive completions" },
	{ live_psns, 0, "query after 3 SENDs: A's sq_psn and B's rq_psn, equal, both 3 on" },
	{ resize_full, 0, "B's CQ holding 6 completions: resize to 4 is EINVAL, to 100 keeps "
			  "all 6 in order" },
	{ bad_rkey, 1, "RDMA WRITE with a wrong rkey: REM_ACCESS_ERR, target intact, flush" },
	{ bad_lkey, 1, "SEND with a wrong lkey: LOC_PROT_ERR, flush" },
	{ read_beyond, 1, "RDMA READ past the remote MR: REM_ACCESS_ERR, nothing read, flush" },
	{ mw_type1, 1, "type 1 MW: WRITE and READ through it, its MR busy, rebound elsewhere, "
		       "past its end REM_ACCESS_ERR" },
	{ mw_stale_rkey, 1, "type 1 MW rebound: its old rkey gets REM_ACCESS_ERR" },
	{ mw_send_inv, 1, "type 2 MW bound by a work request, SEND with Invalidate unbinds it: "
			  "IBV_WC_WITH_INV, then REM_ACCESS_ERR" },
	{ mw_local_inv, 1, "type 2 MW: LOCAL_INV unbinds it, then REM_ACCESS_ERR" },
	{ mw_bind_refused, 1, "a WRITE, then a bind to an MR without MW_BIND: the WRITE completes, "
			      "then MW_BIND_ERR, then flush" },
	{ local_after_unsignalled, 1, "unsignalled WRITE, then LOCAL_INV; unsignalled WRITE, then "
				     "bind: each completes without a resend by the timer" },
	{ peer_gone, 0, "SEND to a QP number that does not exist: RETRY_EXC_ERR" },
	{ comp_channel, OWN, "completion channel: an event for the next completion; "
			     "solicited only: none for a plain SEND, one for a solicited; armed "
			     "for both: one for a plain SEND" },
	{ srq_limit, OWN, "SRQ of 16: 5 SENDs take the first 5 of 8 receives of 2 SGEs in order, "
			  "limit 4 raises SRQ_LIMIT_REACHED and disarms" },
	{ cq_overflow, OWN, "B's CQ of 4 holds N; N + 2 SENDs overflow it: B in the error state, "
			    "at most N completions" },
};

int main(int argc, char **argv)
{
	struct pair p = { 0 };
	int fresh = 0, ok;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..%zu\n", ARRAY_SIZE(checks) + 2);
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	mr_src = pd ? ibv_reg_mr(pd, src, BUF_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_back = pd ? ibv_reg_mr(pd, back, BUF_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_rcv1 = pd ? ibv_reg_mr(pd, rcv1, RCV1_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_rcv2 = pd ? ibv_reg_mr(pd, rcv2, RCV2_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_tgt = pd ? ibv_reg_mr(pd, tgt, BUF_LEN, RIGHTS) : NULL;
	ok = mr_src && mr_back && mr_rcv1 && mr_rcv2 && mr_tgt &&
	     (gid_index = ipv4_gid(ctx, &gid)) >= 0 && make_pair(&p);
	report(ok, "open the device, register 5 MRs, find the IPv4 GID, connect 2 RC QPs");
	if (!ok)
		return 1;

	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		ok = 1;
		if (checks[i].breaks != OWN && (fresh || checks[i].breaks)) {
			destroy_pair(&p);
			ok = make_pair(&p);
		}
		ok = ok && checks[i].run(&p);
		report(ok, checks[i].what);
		/* What a failed case leaves behind must not disturb the next. */
		if (checks[i].breaks != OWN)
			fresh = !ok || checks[i].breaks;
	}

	ok = destroy_pair(&p) && !ibv_dereg_mr(mr_src) && !ibv_dereg_mr(mr_back) &&
	     !ibv_dereg_mr(mr_rcv1) && !ibv_dereg_mr(mr_rcv2) && !ibv_dereg_mr(mr_tgt) &&
	     !ibv_dealloc_pd(pd) && !ibv_close_device(ctx);
	report(ok, "destroy the QPs, CQs, MRs and PD, close the device");
	return failed ? 1 : 0;
}
