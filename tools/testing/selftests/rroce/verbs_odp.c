// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging through unmodified libibverbs: MRs registered with
 * IBV_ACCESS_ON_DEMAND over memory never touched, so that every first access
 * faults its page in; RDMA WRITE, READ, SEND/RECV and atomics on them, from
 * QP A to QP B of one device (loopback); the kernel taking the pages away
 * (MADV_DONTNEED, then while traffic runs fork's copy-on-write and memory
 * compaction) with every byte checked after; an implicit MR of the whole
 * address space; ATOMIC WRITE, a shared receive queue and UC on it too;
 * ibv_advise_mr's prefetch, by
 * the uverbs ioctl, since Debian's rxe provider does not pass it on; and
 * WRITE and READ to memory the process unmapped, refused with a remote
 * access error, and a WRITE from it, with a local protection error.
 *
 * Usage: verbs_odp DEVICE.  Prints KTAP; exits 0 if every case passed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "verbs_util.h"

#define PAGES 64
#define LEN (PAGES * 4096)
#define ROUNDS 100
#define WAIT_S 30
#define ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	     IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq[2];
static struct ibv_qp *qp[2];
/* A: QP A's on-demand memory; B: QP B's; pinned: patterns to send. */
static char *a, *b, *pinned;
static struct ibv_mr *mr_a, *mr_b, *mr_pinned, *mr_all;
/* What QP A's requests name QP B's memory by: mr_b's rkey, or mr_all's. */
static uint32_t rkey;
static volatile int stop;

static int make_pair(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	union ibv_gid gid;
	int i, gid_index = ipv4_gid(ctx, &gid);

	for (i = 0; i < 2; i++) {
		cq[i] = ibv_create_cq(ctx, 32, NULL, NULL, 0);
		init.send_cq = init.recv_cq = cq[i];
		qp[i] = cq[i] ? ibv_create_qp(pd, &init) : NULL;
		if (!qp[i])
			return 0;
	}
	return gid_index >= 0 && connect_rc(qp[0], qp[1]->qp_num, &gid, gid_index, 14, 7) &&
	       connect_rc(qp[1], qp[0]->qp_num, &gid, gid_index, 14, 7);
}

/* Waits for one completion on CQ @i; returns its status, or -1 if none came. */
static int complete(int i)
{
	struct ibv_wc wc;

	if (poll_cq_for(cq[i], &wc, 1, WAIT_S) != 1)
		return -1;
	if (wc.status)
		printf("# completion: %s\n", ibv_wc_status_str(wc.status));
	return wc.status;
}

/* Posts one work request on QP A with one SGE and waits for it. */
static int post(enum ibv_wr_opcode op, void *local, struct ibv_mr *mr, size_t len,
		void *remote, uint64_t add)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .opcode = op, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)remote;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)remote;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(qp[0], &wr, &bad))
		return -1;
	return complete(0);
}

static void fill(char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(seed * 131 + i * 7 + (i >> 12));
}

/* Takes @len bytes at @p away from the process, leaving no access to them. */
static void unmap(char *p, size_t len)
{
	if (mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p)
		printf("# mmap(PROT_NONE): %s\n", strerror(errno));
}

/* An on-demand MR over @len bytes of fresh memory, none of it touched. */
static char *odp_region(size_t len, struct ibv_mr **mr)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	*mr = ibv_reg_mr(pd, p, len, ALL | IBV_ACCESS_ON_DEMAND);
	if (!*mr)
		printf("# ibv_reg_mr(ON_DEMAND): %s\n", strerror(errno));
	return *mr ? p : NULL;
}

static int caps_ok(void)
{
	const uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			    IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
			    IBV_ODP_SUPPORT_SRQ_RECV;
	const uint32_t ud = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
	struct ibv_device_attr_ex attr;

	if (ibv_query_device_ex(ctx, NULL, &attr))
		return 0;
	printf("# odp_caps: general %#lx rc %#x uc %#x ud %#x\n",
	       (unsigned long)attr.odp_caps.general_caps,
	       attr.odp_caps.per_transport_caps.rc_odp_caps,
	       attr.odp_caps.per_transport_caps.uc_odp_caps,
	       attr.odp_caps.per_transport_caps.ud_odp_caps);
	return (attr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	       (attr.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT) &&
	       (attr.odp_caps.per_transport_caps.rc_odp_caps & rc) == rc &&
	       (attr.odp_caps.per_transport_caps.ud_odp_caps & ud) == ud;
}

/*
 * ibv_advise_mr, by the ioctl its providers issue: returns 0 or an errno.
 */
static int advise(uint32_t advice, struct ibv_mr *mr, void *addr, uint32_t len)
{
	struct ib_uverbs_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[4];
	} cmd = {
		.hdr = { .length = sizeof(cmd), .object_id = UVERBS_OBJECT_MR,
			 .method_id = UVERBS_METHOD_ADVISE_MR, .num_attrs = 4,
			 .driver_id = RDMA_DRIVER_RXE },
		.attrs = {
			{ .attr_id = UVERBS_ATTR_ADVISE_MR_PD_HANDLE, .data = pd->handle,
			  .flags = UVERBS_ATTR_F_MANDATORY },
			/* A constant takes 8 bytes, flags 4 or 8. */
			{ .attr_id = UVERBS_ATTR_ADVISE_MR_ADVICE, .len = sizeof(uint64_t),
			  .data = advice, .flags = UVERBS_ATTR_F_MANDATORY },
			{ .attr_id = UVERBS_ATTR_ADVISE_MR_FLAGS, .len = sizeof(uint32_t),
			  .data = IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
			  .flags = UVERBS_ATTR_F_MANDATORY },
			{ .attr_id = UVERBS_ATTR_ADVISE_MR_SGE_LIST, .len = sizeof(sge),
			  .data = (uintptr_t)&sge, .flags = UVERBS_ATTR_F_MANDATORY },
		},
	};

	int err = ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;

	printf("# advise %u of %u bytes: %s\n", advice, len, strerror(err));
	return err;
}

/* A CPU write to each page of @p that changes no byte: it breaks copy-on-write. */
static void touch(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		__atomic_fetch_add((int *)(p + i), 0, __ATOMIC_SEQ_CST);
}

/*
 * What takes pages away while traffic runs: fork, whose copy-on-write
 * write-protects every private page of this process, then a CPU write to
 * each page of A and B while the child lives, which moves it to a new page;
 * and compaction, which migrates pages. Counts in @arg: forks, compactions.
 */
static void *invalidator(void *arg)
{
	unsigned long *count = arg;
	int fd;
	pid_t pid;

	while (!stop) {
		pid = fork();
		if (pid == 0) {
			usleep(20000);
			_exit(0);
		}
		touch(a, LEN);
		touch(b, LEN);
		if (pid > 0 && waitpid(pid, NULL, 0) == pid)
			count[0]++;
		fd = open("/proc/sys/vm/compact_memory", O_WRONLY);
		if (fd >= 0 && write(fd, "1", 1) == 1)
			count[1]++;
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/*
 * An implicit MR, of the whole address space: a WRITE of LEN bytes across a
 * 2 MiB boundary of untouched memory through its rkey, a READ of them back
 * into pinned memory, a READ of the stack into them through its lkey, and a
 * prefetch; leaves the MR in mr_all.
 */
static int implicit(void)
{
	char *big = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *at, stack[4096];
	int ok;

	mr_all = ibv_reg_mr(pd, NULL, SIZE_MAX, ALL | IBV_ACCESS_ON_DEMAND);
	if (!mr_all || big == MAP_FAILED) {
		printf("# ibv_reg_mr(NULL, SIZE_MAX, ON_DEMAND): %s\n", strerror(errno));
		return 0;
	}
	at = (char *)(((uintptr_t)big + (4 << 20)) & ~(uintptr_t)((2 << 20) - 1)) - LEN / 2;
	rkey = mr_all->rkey;
	fill(pinned, LEN, 4);
	ok = !post(IBV_WR_RDMA_WRITE, pinned, mr_pinned, LEN, at, 0) && !memcmp(at, pinned, LEN);
	memset(pinned, 0, LEN);
	ok = ok && !post(IBV_WR_RDMA_READ, pinned, mr_pinned, LEN, at, 0) &&
	     !memcmp(at, pinned, LEN);
	fill(stack, sizeof(stack), 5);
	ok = ok && !post(IBV_WR_RDMA_READ, at, mr_all, sizeof(stack), stack, 0) &&
	     !memcmp(at, stack, sizeof(stack));
	ok = ok && advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, mr_all, big, 8 << 20) == 0;
	rkey = mr_b->rkey;
	munmap(big, 8 << 20);
	return ok;
}

/*
 * UD on on-demand memory: QP U0 sends 1000 bytes of A's second
 * half to QP U1, whose receive lands in B's, past the 40 bytes of GRH.
 */
static int ud(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
	struct ibv_cq *ucq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ibv_qp *u[2] = { NULL, NULL };
	char *src = a + LEN / 2 + 4096, *dst = b + LEN / 2 + 8192;
	struct ibv_sge ssge = { .addr = (uintptr_t)src, .length = 1000, .lkey = mr_a->lkey };
	struct ibv_sge rsge = { .addr = (uintptr_t)dst, .length = 40 + 1000, .lkey = mr_b->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &ssge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[2];
	struct ibv_ah *ah;
	int i, ok = !!ucq, gid_index;

	gid_index = ipv4_gid(ctx, &ah_attr.grh.dgid);
	ah_attr.grh.sgid_index = gid_index;
	ah_attr.grh.hop_limit = 64;
	init.send_cq = init.recv_cq = ucq;
	for (i = 0; ok && i < 2; i++) {
		u[i] = ibv_create_qp(pd, &init);
		attr.qp_state = IBV_QPS_INIT;
		ok = u[i] && !ibv_modify_qp(u[i], &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_QKEY);
		attr.qp_state = IBV_QPS_RTR;
		ok = ok && !ibv_modify_qp(u[i], &attr, IBV_QP_STATE);
		attr.qp_state = IBV_QPS_RTS;
		ok = ok && !ibv_modify_qp(u[i], &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	ah = ok && gid_index >= 0 ? ibv_create_ah(pd, &ah_attr) : NULL;
	fill(src, 1000, 6);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ok ? u[1]->qp_num : 0;
	wr.wr.ud.remote_qkey = attr.qkey;
	ok = ah && !ibv_post_recv(u[1], &rwr, &rbad) && !ibv_post_send(u[0], &wr, &bad) &&
	     poll_cq_for(ucq, wc, 2, WAIT_S) == 2 && !wc[0].status && !wc[1].status &&
	     !memcmp(dst + 40, src, 1000);
	if (ah)
		ibv_destroy_ah(ah);
	for (i = 0; i < 2; i++)
		if (u[i])
			ibv_destroy_qp(u[i]);
	if (ucq)
		ibv_destroy_cq(ucq);
	return ok;
}

/* Waits for @n completions on @c, all successful. */
static int all_ok(struct ibv_cq *c, int n)
{
	struct ibv_wc wc[4];
	int got = poll_cq_for(c, wc, n, WAIT_S), ok = got == n;

	for (int i = 0; i < got; i++)
		if (wc[i].status) {
			printf("# completion: %s\n", ibv_wc_status_str(wc[i].status));
			ok = 0;
		}
	return ok;
}

/* Waits up to WAIT_S for @len bytes at @p to equal @want. */
static int arrives(const char *p, const char *want, size_t len)
{
	double end = now() + WAIT_S;

	while (memcmp(p, want, len))
		if (now() > end)
			return 0;
	return 1;
}

/*
 * What the first pair does not carry, each into B's memory just dropped:
 * an ATOMIC WRITE (extended verbs), a SEND into a receive of a shared
 * receive queue, an RDMA WRITE on UC.
 */
static int other_ops(int *atomic_ok, int *srq_ok, int *uc_ok)
{
	struct ibv_qp_init_attr_ex ax = {
		.qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_SEND,
	};
	struct ibv_qp_init_attr init = { .cap = ax.cap };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp *x[2] = { NULL, NULL }, *u[2] = { NULL, NULL };
	/* One CQ for each pair, as destroy_qps() takes them. */
	struct ibv_cq *xcq[2] = { NULL, NULL }, *ucq[2] = { NULL, NULL };
	struct ibv_srq *srq = NULL;
	uint64_t value = 0x1122334455667788ull, *word = (uint64_t *)(b + 7 * 4096 + 16);
	char *rbuf = b + 9 * 4096 + 100;
	struct ibv_sge ssge = { .addr = (uintptr_t)a, .length = 4096, .lkey = mr_a->lkey };
	struct ibv_sge rsge = { .addr = (uintptr_t)rbuf, .length = 4096, .lkey = mr_b->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &ssge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_ex *qpx;
	union ibv_gid gid;
	int i, ok, gid_index = ipv4_gid(ctx, &gid);

	xcq[0] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	srq = ibv_create_srq(pd, &sa);
	ok = xcq[0] && srq && gid_index >= 0;
	ax.send_cq = ax.recv_cq = init.send_cq = init.recv_cq = xcq[0];
	x[0] = ok ? ibv_create_qp_ex(ctx, &ax) : NULL;
	init.qp_type = IBV_QPT_RC;
	init.srq = srq;
	x[1] = x[0] ? ibv_create_qp(pd, &init) : NULL;
	ok = x[1] && connect_rc(x[0], x[1]->qp_num, &gid, gid_index, 14, 7) &&
	     connect_rc(x[1], x[0]->qp_num, &gid, gid_index, 14, 7);
	if (!ok)
		printf("# the RC pair with an SRQ: %s\n", strerror(errno));

	madvise(b, LEN / 2, MADV_DONTNEED);
	qpx = ok ? ibv_qp_to_qp_ex(x[0]) : NULL;
	if (qpx) {
		ibv_wr_start(qpx);
		qpx->wr_id = 1;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(qpx, mr_b->rkey, (uintptr_t)word, &value);
		*atomic_ok = !ibv_wr_complete(qpx) && all_ok(xcq[0], 1) && *word == value;
	}

	madvise(b, LEN / 2, MADV_DONTNEED);
	fill(a, 4096, 7);
	*srq_ok = ok && !ibv_post_srq_recv(srq, &rwr, &rbad) && !ibv_post_send(x[0], &wr, &bad) &&
		  all_ok(xcq[0], 2) && !memcmp(rbuf, a, 4096);

	init.qp_type = IBV_QPT_UC;
	init.srq = NULL;
	ucq[0] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	init.send_cq = init.recv_cq = ucq[0];
	for (i = 0; i < 2; i++)
		u[i] = ucq[0] ? ibv_create_qp(pd, &init) : NULL;
	ok = u[0] && u[1] && rc_ready_to_receive(u[0], u[1]->qp_num, &gid, gid_index) &&
	     rc_ready_to_send(u[0], 14, 7) &&
	     rc_ready_to_receive(u[1], u[0]->qp_num, &gid, gid_index) &&
	     rc_ready_to_send(u[1], 14, 7);
	madvise(b, LEN / 2, MADV_DONTNEED);
	fill(pinned, 8192, 8);
	ssge = (struct ibv_sge){ .addr = (uintptr_t)pinned, .length = 8192,
				 .lkey = mr_pinned->lkey };
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)(b + 4096);
	wr.wr.rdma.rkey = mr_b->rkey;
	/* UC is done once sent: the data may land after. */
	*uc_ok = ok && !ibv_post_send(u[0], &wr, &bad) && all_ok(ucq[0], 1) &&
		 arrives(b + 4096, pinned, 8192);

	ok = destroy_qps(u, ucq, 2) && destroy_qps(x, xcq, 2) && (!srq || !ibv_destroy_srq(srq));
	return ok;
}

/* Rounds of WRITE pinned -> B and READ B -> A, each checked. */
static int traffic(int rounds)
{
	int r, ok = 1;

	for (r = 0; ok && r < rounds; r++) {
		size_t at = (r * 4096 * 5 + r * 8) % (LEN / 2), len = LEN / 2 - at % 4096;

		fill(pinned, len, r);
		ok = !post(IBV_WR_RDMA_WRITE, pinned, mr_pinned, len, b + at, 0) &&
		     !memcmp(b + at, pinned, len) &&
		     !post(IBV_WR_RDMA_READ, a + at, mr_a, len, b + at, 0) &&
		     !memcmp(a + at, pinned, len);
		if (!ok)
			printf("# round %d (%zu bytes at %zu) differs\n", r, len, at);
	}
	return ok;
}

int main(int argc, char **argv)
{
	unsigned long counts[2] = { 0 };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	pthread_t thread;
	uint64_t *word, *result;
	int ok, atomic_ok = 0, srq_ok = 0, uc_ok = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..20\n");
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	report(pd && caps_ok(),
	       "the device has on-demand paging, implicit too, for RC (every operation) and UD");

	pinned = malloc(LEN);
	mr_pinned = pinned && pd ? ibv_reg_mr(pd, pinned, LEN, ALL) : NULL;
	a = pd ? odp_region(LEN, &mr_a) : NULL;
	b = pd ? odp_region(LEN, &mr_b) : NULL;
	report(mr_pinned && a && b && make_pair(),
	       "two on-demand MRs of 256 KiB over untouched memory, a pinned one, a QP pair");
	if (!a || !b || !qp[1])
		return 1;
	rkey = mr_b->rkey;

	fill(pinned, LEN, 1);
	report(!post(IBV_WR_RDMA_WRITE, pinned, mr_pinned, LEN, b, 0) && !memcmp(b, pinned, LEN),
	       "RDMA WRITE into untouched on-demand memory: every byte there");
	report(!post(IBV_WR_RDMA_READ, a, mr_a, LEN, b, 0) && !memcmp(a, pinned, LEN),
	       "RDMA READ from on-demand memory into untouched on-demand memory");

	/* B's second half has not been written since the WRITE above: reuse it. */
	fill(a, 8192, 2);
	sge = (struct ibv_sge){ .addr = (uintptr_t)(b + LEN / 2 + 100), .length = 8192,
				.lkey = mr_b->lkey };
	ok = !ibv_post_recv(qp[1], &rwr, &rbad) &&
	     !post(IBV_WR_SEND, a, mr_a, 8192, NULL, 0) && !complete(1);
	report(ok && !memcmp(b + LEN / 2 + 100, a, 8192),
	       "SEND from on-demand memory into a receive of on-demand memory");

	word = (uint64_t *)(b + 3 * 4096 + 64);
	result = (uint64_t *)(a + 5 * 4096 + 8);
	*word = 1000;
	madvise(a, LEN, MADV_DONTNEED);
	report(!post(IBV_WR_ATOMIC_FETCH_AND_ADD, result, mr_a, 8, word, 23) &&
	       *result == 1000 && *word == 1023,
	       "fetch-and-add on on-demand memory, its result into a page just dropped");

	madvise(b, LEN, MADV_DONTNEED);
	fill(pinned, LEN, 3);
	report(b[0] == 0 && !post(IBV_WR_RDMA_WRITE, pinned, mr_pinned, LEN, b, 0) &&
	       !memcmp(b, pinned, LEN),
	       "after MADV_DONTNEED took B's pages, a WRITE lands in the new ones");

	ok = !pthread_create(&thread, NULL, invalidator, counts);
	if (ok) {
		ok = traffic(ROUNDS);
		stop = 1;
		pthread_join(thread, NULL);
	}
	printf("# %lu forks and %lu compactions during %d rounds\n", counts[0], counts[1],
	       ROUNDS);
	report(ok && counts[0] > 0,
	       "WRITE and READ rounds checked while fork and compaction take the pages away");

	report(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, mr_a, a, LEN) == 0 &&
	       advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, mr_b, b + 4096, 8192) == 0 &&
	       advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, mr_b, b, LEN) == 0,
	       "ibv_advise_mr prefetches on-demand MRs, for writing, reading, without faults");
	report(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, mr_pinned, pinned, 4096) == EINVAL &&
	       advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, mr_a, a + LEN - 4096, 8192) == EFAULT &&
	       advise(99, mr_a, a, 4096) == EOPNOTSUPP,
	       "ibv_advise_mr refuses a pinned MR, a range past the MR, an unknown advice");

	report(implicit(), "an implicit on-demand MR: WRITE across a chunk boundary, READ back");
	report(ud(), "UD SEND from on-demand memory into a receive of on-demand memory");
	ok = other_ops(&atomic_ok, &srq_ok, &uc_ok);
	report(atomic_ok, "ATOMIC WRITE into on-demand memory just dropped");
	report(srq_ok, "SEND into a shared receive queue's receive of on-demand memory");
	report(uc_ok && ok, "UC RDMA WRITE into on-demand memory just dropped");

	/*
	 * Last: each error takes the QPs to the error state; a new pair
	 * follows. The memory taken away stays reserved (PROT_NONE), so that
	 * the new pair's rings are not mapped there.
	 */
	unmap(b + LEN / 2, LEN / 2);
	report(post(IBV_WR_RDMA_WRITE, pinned, mr_pinned, 4096, b + LEN / 2, 0) ==
	       IBV_WC_REM_ACCESS_ERR,
	       "a WRITE to on-demand memory the process unmapped: remote access error");
	ok = destroy_qps(qp, cq, 2) && make_pair();
	report(ok && post(IBV_WR_RDMA_READ, a, mr_a, 4096, b + LEN / 2, 0) ==
	       IBV_WC_REM_ACCESS_ERR,
	       "a READ of it: remote access error");
	unmap(a + LEN / 2, LEN / 2);
	ok = destroy_qps(qp, cq, 2) && make_pair();
	report(ok && post(IBV_WR_RDMA_WRITE, a + LEN / 2, mr_a, 4096, b, 0) ==
	       IBV_WC_LOC_PROT_ERR,
	       "a WRITE from on-demand memory the process unmapped: local protection error");
	ok = destroy_qps(qp, cq, 2) && make_pair();
	rkey = mr_all->rkey;
	report(ok && post(IBV_WR_RDMA_WRITE, pinned, mr_pinned, 4096, b + LEN / 2, 0) ==
	       IBV_WC_REM_ACCESS_ERR,
	       "a WRITE through the implicit MR to memory not mapped: remote access error");

	ok = destroy_qps(qp, cq, 2) && !ibv_dereg_mr(mr_all) && !ibv_dereg_mr(mr_a) &&
	     !ibv_dereg_mr(mr_b) &&
	     !ibv_dereg_mr(mr_pinned) && !ibv_dealloc_pd(pd) && !ibv_close_device(ctx);
	report(ok, "everything destroyed and deregistered");
	return failed ? 1 : 0;
}
