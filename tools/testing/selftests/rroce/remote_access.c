// SPDX-License-Identifier: GPL-2.0
/*
 * Remote access that must be refused: RDMA WRITE, RDMA READ and fetch-and-add
 * from QP A to QP B of one device (loopback) with a wrong rkey, past the end
 * of B's MR, on an MR without the right, with the rkey of a deregistered
 * MR, through a type 2 memory window after it was invalidated, through a
 * zero-based window at addresses past 2^64, and to a QP that does not grant
 * the right. Each must complete on A with
 * IBV_WC_REM_ACCESS_ERR and leave B's memory, and A's buffer for a READ or
 * an atomic's result, exactly as they were. Zero-length WRITEs and READs,
 * which name no memory, succeed whatever their key.
 *
 * It takes the device's name, so the same cases run on the C rxe:
 *
 *   remote_access DEVICE
 *
 * Prints KTAP; exits 0 if every case passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define LEN 16384
#define WAIT_S 10
#define ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	     IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static char src[LEN] __attribute__((aligned(4096)));
static char back[LEN] __attribute__((aligned(4096)));
static char tgt[LEN] __attribute__((aligned(4096)));
static char before_tgt[LEN], before_back[LEN];
static struct ibv_mr *mr_src, *mr_back, *mr_all, *mr_ro, *mr_wo;
static struct ibv_cq *cq[2];
static struct ibv_qp *qp[2];

/* A target of a case: an rkey and an address in tgt. */
struct target {
	uint32_t rkey;
	char *addr;
};

static int make_pair(void)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	for (int i = 0; i < 2; i++) {
		cq[i] = ibv_create_cq(ctx, 32, NULL, NULL, 0);
		a.send_cq = a.recv_cq = cq[i];
		qp[i] = cq[i] ? ibv_create_qp(pd, &a) : NULL;
		if (!qp[i]) {
			printf("# creating a CQ or QP: %s\n", strerror(errno));
			return 0;
		}
	}
	return connect_rc(qp[0], qp[1]->qp_num, &gid, gid_index, 14, 7) &&
	       connect_rc(qp[1], qp[0]->qp_num, &gid, gid_index, 14, 7);
}

static int destroy_pair(void)
{
	return destroy_qps(qp, cq, 2);
}

/* Posts @op on A to @t and checks it completes with IBV_WC_REM_ACCESS_ERR, nothing changed. */
static int refused(enum ibv_wr_opcode op, struct target t)
{
	int atomic = op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	struct ibv_sge s = {
		.addr = (uintptr_t)(op == IBV_WR_RDMA_WRITE ? src : back),
		.length = atomic ? 8 : 4096,
		.lkey = op == IBV_WR_RDMA_WRITE ? mr_src->lkey : mr_back->lkey,
	};
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	double end = now() + WAIT_S;
	int n = 0;

	if (atomic) {
		wr.wr.atomic.remote_addr = (uintptr_t)t.addr;
		wr.wr.atomic.rkey = t.rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)t.addr;
		wr.wr.rdma.rkey = t.rkey;
	}
	for (int i = 0; i < LEN; i++)
		src[i] = i * 7, tgt[i] = i * 13, back[i] = i * 29;
	memcpy(before_tgt, tgt, LEN);
	memcpy(before_back, back, LEN);
	if (ibv_post_send(qp[0], &wr, &bad))
		return 0;
	while (!(n = ibv_poll_cq(cq[0], 1, &wc)) && now() < end)
		;
	if (n != 1) {
		printf("# no completion within %d s\n", WAIT_S);
		return 0;
	}
	if (wc.status != IBV_WC_REM_ACCESS_ERR) {
		printf("# completed with %s\n", ibv_wc_status_str(wc.status));
		return 0;
	}
	if (memcmp(tgt, before_tgt, LEN) || memcmp(back, before_back, LEN)) {
		printf("# memory changed\n");
		return 0;
	}
	return 1;
}

/*
 * A zero-length RDMA WRITE with immediate and a zero-length RDMA READ, both
 * with a key and an address that name nothing: the IBTA (C9-88) lets them
 * carry any, so both succeed, the WRITE's immediate reaches B's receive
 * request with 0 bytes, and no memory changes (rsockets sends such WRITEs).
 */
static int zero_length_allowed(void)
{
	struct ibv_sge rs = { .addr = (uintptr_t)back, .length = 64, .lkey = mr_back->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = htonl(0x5eed),
		  .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = 0xdead0000, .rkey = 0xbad }, .next = &wr[1] },
		{ .wr_id = 2, .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { .remote_addr = 0xdead0000, .rkey = 0xbad } },
	}, *bad;
	struct ibv_wc wc;
	double end = now() + WAIT_S;
	int got_recv = 0, got_read = 0, n;

	for (int i = 0; i < LEN; i++)
		tgt[i] = i * 13, back[i] = i * 29;
	memcpy(before_tgt, tgt, LEN);
	memcpy(before_back, back, LEN);
	if (ibv_post_recv(qp[1], &rwr, &rbad) || ibv_post_send(qp[0], wr, &bad))
		return 0;
	while ((!got_recv || got_read < 2) && now() < end) {
		if ((n = ibv_poll_cq(cq[0], 1, &wc)) == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				printf("# request %d completed with %s\n", (int)wc.wr_id,
				       ibv_wc_status_str(wc.status));
				return 0;
			}
			got_read++;
		}
		if ((n = ibv_poll_cq(cq[1], 1, &wc)) == 1) {
			if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
			    wc.byte_len != 0 || ntohl(wc.imm_data) != 0x5eed) {
				printf("# B's completion: %s, opcode %d, %u bytes, imm %#x\n",
				       ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
				       ntohl(wc.imm_data));
				return 0;
			}
			got_recv = 1;
		}
	}
	if (!got_recv || got_read < 2) {
		printf("# no completions within %d s (A: %d of 2, B: %d of 1)\n", WAIT_S,
		       got_read, got_recv);
		return 0;
	}
	if (memcmp(tgt, before_tgt, LEN) || memcmp(back, before_back, LEN)) {
		printf("# memory changed\n");
		return 0;
	}
	return 1;
}

static struct target wrong_rkey(enum ibv_wr_opcode op)
{
	(void)op;
	return (struct target){ mr_all->rkey ^ 0x100, tgt };
}

static struct target past_end(enum ibv_wr_opcode op)
{
	return (struct target){ mr_all->rkey,
				op == IBV_WR_ATOMIC_FETCH_AND_ADD ? tgt + LEN : tgt + LEN - 100 };
}

/* An MR of tgt without the right @op needs. */
static struct target no_right(enum ibv_wr_opcode op)
{
	return (struct target){ op == IBV_WR_RDMA_READ ? mr_wo->rkey : mr_ro->rkey, tgt };
}

static struct target deregistered(enum ibv_wr_opcode op)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, tgt, LEN, ALL);
	uint32_t rkey = mr ? mr->rkey : 0;

	(void)op;
	if (mr && ibv_dereg_mr(mr))
		printf("# ibv_dereg_mr failed\n");
	return (struct target){ rkey, tgt };
}

/* A type 2 window bound by B over tgt, then invalidated by B. */
static struct ibv_mw *mw;
static struct target invalidated(enum ibv_wr_opcode op)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, tgt, LEN, ALL | IBV_ACCESS_MW_BIND);
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	uint32_t rkey = 0;
	double end = now() + WAIT_S;
	int n = 0;

	(void)op;
	mw = mr ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	if (!mw) {
		printf("# no type 2 memory window: %s\n", strerror(errno));
		goto out;
	}
	rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)tgt,
		.length = LEN, .mw_access_flags = ALL & ~IBV_ACCESS_LOCAL_WRITE };
	if (ibv_post_send(qp[1], &wr, &bad))
		goto out;
	wr = (struct ibv_send_wr){ .wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey };
	if (ibv_post_send(qp[1], &wr, &bad))
		goto out;
	while (n < 2 && now() < end)
		if (ibv_poll_cq(cq[1], 1, &wc) == 1) {
			n++;
			if (wc.status != IBV_WC_SUCCESS)
				printf("# wr %llu: %s\n", (unsigned long long)wc.wr_id,
				       ibv_wc_status_str(wc.status));
		}
out:
	/* The MR outlives the window: ibv_dealloc_mw comes first. */
	if (mw && ibv_dealloc_mw(mw))
		printf("# ibv_dealloc_mw failed\n");
	mw = NULL;
	if (mr && ibv_dereg_mr(mr))
		printf("# ibv_dereg_mr failed\n");
	return (struct target){ rkey, tgt };
}

/*
 * A zero-based type 2 window over all of an MR whose iova is the last page
 * below 2^64: offset 0x1000 of the window would be address 2^64, past the
 * end of the address space. The window stays bound until release_window().
 */
static struct ibv_mr *mr_high;
static struct target past_2_64(enum ibv_wr_opcode op)
{
	uint64_t iova = 0xfffffffffffff000ULL;
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint32_t rkey = 0;
	double end = now() + WAIT_S;

	(void)op;
	mr_high = ibv_reg_mr_iova(pd, tgt, LEN, iova, ALL | IBV_ACCESS_MW_BIND);
	mw = mr_high ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	if (!mw) {
		printf("# no MR at iova %#llx or no window: %s\n", (unsigned long long)iova,
		       strerror(errno));
		return (struct target){ 0, (char *)0x1000 };
	}
	rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr_high, .addr = iova,
		.length = LEN,
		.mw_access_flags = (ALL & ~IBV_ACCESS_LOCAL_WRITE) | IBV_ACCESS_ZERO_BASED };
	if (ibv_post_send(qp[1], &wr, &bad))
		printf("# binding the window failed\n");
	while (ibv_poll_cq(cq[1], 1, &wc) != 1 && now() < end)
		;
	if (wc.status != IBV_WC_SUCCESS)
		printf("# bind: %s\n", ibv_wc_status_str(wc.status));
	return (struct target){ rkey, (char *)0x1000 };
}

/* Deallocates the window and MR a target left bound, if any. */
static int release_window(void)
{
	int ok = (!mw || !ibv_dealloc_mw(mw)) && (!mr_high || !ibv_dereg_mr(mr_high));

	mw = NULL;
	mr_high = NULL;
	return ok;
}

/* B's QP grants no remote rights at all. */
static struct target qp_denies(enum ibv_wr_opcode op)
{
	struct ibv_qp_attr a = { .qp_access_flags = 0 };

	(void)op;
	if (ibv_modify_qp(qp[1], &a, IBV_QP_ACCESS_FLAGS))
		printf("# clearing B's access flags failed\n");
	return (struct target){ mr_all->rkey, tgt };
}

static const struct {
	struct target (*target)(enum ibv_wr_opcode op);
	const char *what;
} targets[] = {
	{ wrong_rkey, "a wrong rkey" },
	{ past_end, "past the end of the MR" },
	{ no_right, "an MR without the right" },
	{ deregistered, "the rkey of a deregistered MR" },
	{ invalidated, "an invalidated type 2 memory window" },
	{ qp_denies, "a QP that grants no remote rights" },
	{ past_2_64, "a zero-based window past 2^64" },
};

static const struct {
	enum ibv_wr_opcode op;
	const char *name;
} ops[] = {
	{ IBV_WR_RDMA_WRITE, "RDMA WRITE" },
	{ IBV_WR_RDMA_READ, "RDMA READ" },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, "fetch and add" },
};

int main(int argc, char **argv)
{
	int ok;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..%zu\n", ARRAY_SIZE(targets) * ARRAY_SIZE(ops) + 3);
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	mr_src = pd ? ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_back = pd ? ibv_reg_mr(pd, back, LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_all = pd ? ibv_reg_mr(pd, tgt, LEN, ALL) : NULL;
	mr_ro = pd ? ibv_reg_mr(pd, tgt, LEN, IBV_ACCESS_REMOTE_READ) : NULL;
	mr_wo = pd ? ibv_reg_mr(pd, tgt, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	ok = mr_src && mr_back && mr_all && mr_ro && mr_wo && (gid_index = ipv4_gid(ctx, &gid)) >= 0;
	report(ok, "open the device, register the MRs, find the IPv4 GID");
	if (!ok)
		return 1;

	for (size_t t = 0; t < ARRAY_SIZE(targets); t++)
		for (size_t o = 0; o < ARRAY_SIZE(ops); o++) {
			char what[128];

			ok = make_pair() && refused(ops[o].op, targets[t].target(ops[o].op));
			ok &= release_window();
			ok &= destroy_pair();
			snprintf(what, sizeof(what), "%s to %s: REM_ACCESS_ERR, memory unchanged",
				 ops[o].name, targets[t].what);
			report(ok, what);
		}

	ok = make_pair() && zero_length_allowed();
	ok &= destroy_pair();
	report(ok, "zero-length RDMA WRITE with immediate and READ with a key and address "
		   "that name nothing: both succeed, immediate delivered, memory unchanged");

	ok = !ibv_dereg_mr(mr_src) && !ibv_dereg_mr(mr_back) && !ibv_dereg_mr(mr_all) &&
	     !ibv_dereg_mr(mr_ro) && !ibv_dereg_mr(mr_wo) && !ibv_dealloc_pd(pd) &&
	     !ibv_close_device(ctx);
	report(ok, "deregister, deallocate, close the device");
	return failed ? 1 : 0;
}
