// SPDX-License-Identifier: GPL-2.0
/*
 * ATOMIC WRITE and FLUSH (IBTA 1.5, rdma_rxe since 6.2) from QP A to QP B
 * of one device (loopback). An ATOMIC WRITE stores its 8 bytes at once,
 * after every earlier write; a FLUSH makes earlier writes to a range, or to
 * a whole MR, globally visible. Both complete on A with their own opcodes;
 * a bad key, address, right or alignment ends in the error the responder
 * sends back, with B's memory unchanged. The device advertises both, but
 * not persistence, which needs persistent memory: MRs for it are refused,
 * and a FLUSH asking for it fails.
 *
 * Debian 12's rdma-core (44) has ibv_wr_atomic_write() but not
 * ibv_wr_flush(), which came in 45: FLUSHes (and an ATOMIC WRITE with a
 * wrong length, which the provider never writes) go into A's send ring by
 * hand, as the provider lays them out, and the doorbell is rung.
 *
 *   placement DEVICE
 *
 * Prints KTAP; exits 0 if every case passed.
 *
 * Between two hosts, connected by rdma_cm (for rroce and rxe, each way):
 *
 *   placement -p PORT          waits for a connection, then for the data
 *   placement -p PORT ADDR     connects; RDMA WRITE, ATOMIC WRITE, FLUSH
 *
 * The server offers its MR in the accept's private data. The client
 * writes data and a flag and FLUSHes both, then SENDs to say it is done;
 * the server checks what arrived. Each prints one line saying what it saw
 * and exits 0 if that is all as it should be.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_user_rxe.h>

#include "rxe_ring.h"
#include "verbs_util.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define LEN 16384
#define WAIT_S 10
#define REMOTE (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* What rdma-core 45 and the 6.2 uapi name, and Debian 12's headers do not. */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define ACCESS_FLUSH_PERSISTENT (1 << 9)
#define CAP_FLUSH_GLOBAL (1ULL << 38)
#define CAP_FLUSH_PERSISTENT (1ULL << 39)
#define CAP_ATOMIC_WRITE (1ULL << 40)
#define WR_FLUSH 14
#define WC_FLUSH 8
#define FLUSH_GLOBAL 1
#define FLUSH_PERSISTENT 2
#define FLUSH_RANGE 0
#define FLUSH_MR 1
/* wr.flush of struct rxe_send_wr: its rkey, type and level. */
#define FLUSH_RKEY 12
#define FLUSH_TYPE 16
#define FLUSH_LEVEL 17

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static char src[LEN] __attribute__((aligned(4096)));
static char tgt[LEN] __attribute__((aligned(4096)));
static char before[LEN];
static struct ibv_mr *mr_src, *mr_tgt, *mr_ro, *mr_noflush;
static struct ibv_cq *cq[2];
static struct ibv_qp *qp[2];
static struct ibv_qp_ex *qpx;
static struct ring sq;

#define QP_CAP { .max_send_wr = 64, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 }

/*
 * A: an RC QP made with the extended verbs, through rdma_cm if @id, and its
 * send ring found.
 */
static int make_requester(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr_ex ax = {
		.qp_type = IBV_QPT_RC, .pd = pd, .cap = QP_CAP,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	uintptr_t maps[MAX_MAPS];
	size_t len[MAX_MAPS];
	struct ring r[2];
	int n;

	if (!(cq[0] = ibv_create_cq(ctx, 128, NULL, NULL, 0)))
		return 0;
	ax.send_cq = ax.recv_cq = cq[0];
	n = uverbs_maps(maps, len);
	if (!id)
		qp[0] = ibv_create_qp_ex(ctx, &ax);
	else if (!rdma_create_qp_ex(id, &ax))
		qp[0] = id->qp;
	if (!qp[0] || new_rings(maps, n, r, 2) != 2) {
		printf("# A and its two rings: %s\n", strerror(errno));
		return 0;
	}
	/* The SQ has the larger elements. */
	sq = r[elem_size(&r[0]) < elem_size(&r[1])];
	qpx = ibv_qp_to_qp_ex(qp[0]);
	return 1;
}

/* B: a plain RC QP. */
static int make_responder(void)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC, .cap = QP_CAP };

	cq[1] = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	a.send_cq = a.recv_cq = cq[1];
	qp[1] = cq[1] ? ibv_create_qp(pd, &a) : NULL;
	if (!qp[1])
		printf("# creating B: %s\n", strerror(errno));
	return !!qp[1];
}

/* B grants FLUSH too, once connected (connect_rc grants the rest). */
static int grant_flush(void)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = REMOTE | IBV_ACCESS_REMOTE_ATOMIC | ACCESS_FLUSH_GLOBAL,
	};

	return !ibv_modify_qp(qp[1], &a, IBV_QP_ACCESS_FLAGS);
}

static int make_pair(void)
{
	return make_requester(NULL) && make_responder() &&
	       connect_rc(qp[0], qp[1]->qp_num, &gid, gid_index, 14, 7) &&
	       connect_rc(qp[1], qp[0]->qp_num, &gid, gid_index, 14, 7) && grant_flush();
}

static int destroy_pair(void)
{
	return destroy_qps(qp, cq, 2);
}

static void fill(void)
{
	for (int i = 0; i < LEN; i++)
		src[i] = i * 7, tgt[i] = i * 13;
	memcpy(before, tgt, LEN);
}

static int atomic_write(uint32_t rkey, void *addr, uint64_t value)
{
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, rkey, (uintptr_t)addr, &value);
	return !ibv_wr_complete(qpx);
}

/*
 * Writes one request into A's send ring as the provider would (rxe takes a
 * FLUSH's and an ATOMIC WRITE's remote address from iova too) and rings the
 * doorbell.
 */
static int post_raw(uint32_t opcode, uint32_t rkey, void *addr, uint32_t length,
		    uint8_t type, uint8_t level, uint64_t value)
{
	uint32_t p = *idx(&sq, PRODUCER);
	struct rxe_send_wqe *w = slot(&sq, p);
	uint8_t *u = (uint8_t *)&w->wr.wr;
	uint64_t va = (uintptr_t)addr;

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = 2;
	w->wr.opcode = opcode;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->iova = va;
	memcpy(u, &va, 8);
	if (opcode == WR_FLUSH) {
		memcpy(u + FLUSH_RKEY, &rkey, 4);
		u[FLUSH_TYPE] = type;
		u[FLUSH_LEVEL] = level;
	} else {
		w->wr.wr.rdma.rkey = rkey;
		memcpy(w->dma.inline_data, &value, 8);
	}
	w->dma.length = w->dma.resid = length;
	produce(&sq, p + 1);
	return doorbell(qp[0]);
}

static int flush(uint32_t rkey, void *addr, uint32_t length, uint8_t type, uint8_t level)
{
	return post_raw(WR_FLUSH, rkey, addr, length, type, level, 0);
}

/* A's next completion: @status, and if that is success, @opcode and @len. */
static int completes(enum ibv_wc_status status, int opcode, uint32_t len)
{
	struct ibv_wc wc;

	if (poll_cq_for(cq[0], &wc, 1, WAIT_S) != 1) {
		printf("# no completion within %d s\n", WAIT_S);
		return 0;
	}
	if (wc.status != status) {
		printf("# completed with %s, not %s\n", ibv_wc_status_str(wc.status),
		       ibv_wc_status_str(status));
		return 0;
	}
	if (status == IBV_WC_SUCCESS && ((int)wc.opcode != opcode || wc.byte_len != len)) {
		printf("# opcode %d, %u bytes; not %d, %u\n", wc.opcode, wc.byte_len, opcode, len);
		return 0;
	}
	return 1;
}

static int unchanged(void)
{
	if (!memcmp(tgt, before, LEN))
		return 1;
	printf("# B's memory changed\n");
	return 0;
}

/* tgt as before but for @value at @at. */
static int stored(size_t at, uint64_t value)
{
	memcpy(before + at, &value, 8);
	if (!memcmp(tgt, before, LEN))
		return 1;
	printf("# B's memory is not what was written\n");
	return 0;
}

static int atomic_write_done(void)
{
	uint64_t v = 0x0123456789abcdefULL;

	return atomic_write(mr_tgt->rkey, tgt + 64, v) &&
	       completes(IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 8) && stored(64, v);
}

static int atomic_writes_in_a_row(void)
{
	int ok = 1;

	for (uint64_t i = 1; ok && i <= 32; i++)
		ok = atomic_write(mr_tgt->rkey, tgt + 8, i * 0x1111) &&
		     completes(IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 8);
	return ok && stored(8, 32 * 0x1111);
}

/* The pattern IBTA 1.5 has them for: data, a flag, then a FLUSH of both. */
static int write_flag_flush(void)
{
	uint64_t flag = 1;

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, mr_tgt->rkey, (uintptr_t)(tgt + 4096));
	ibv_wr_set_sge(qpx, mr_src->lkey, (uintptr_t)src, 4096);
	ibv_wr_atomic_write(qpx, mr_tgt->rkey, (uintptr_t)tgt, &flag);
	if (ibv_wr_complete(qpx) || !flush(mr_tgt->rkey, tgt, 8192, FLUSH_GLOBAL, FLUSH_RANGE))
		return 0;
	if (!completes(IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 4096) ||
	    !completes(IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 8) ||
	    !completes(IBV_WC_SUCCESS, WC_FLUSH, 8192))
		return 0;
	memcpy(before + 4096, src, 4096);
	return stored(0, flag);
}

static int atomic_write_misaligned(void)
{
	return atomic_write(mr_tgt->rkey, tgt + 4, 1) &&
	       completes(IBV_WC_REM_INV_REQ_ERR, 0, 0) && unchanged();
}

static int atomic_write_no_right(void)
{
	return atomic_write(mr_ro->rkey, tgt, 1) && completes(IBV_WC_REM_ACCESS_ERR, 0, 0) &&
	       unchanged();
}

static int atomic_write_past_end(void)
{
	return atomic_write(mr_tgt->rkey, tgt + LEN, 1) &&
	       completes(IBV_WC_REM_ACCESS_ERR, 0, 0) && unchanged();
}

static int atomic_write_of_16(void)
{
	return post_raw(IBV_WR_ATOMIC_WRITE, mr_tgt->rkey, tgt, 16, 0, 0, 1) &&
	       completes(IBV_WC_LOC_LEN_ERR, 0, 0) && unchanged();
}

static int flush_range(void)
{
	return flush(mr_tgt->rkey, tgt + 4096, 4096, FLUSH_GLOBAL, FLUSH_RANGE) &&
	       completes(IBV_WC_SUCCESS, WC_FLUSH, 4096);
}

static int flush_nothing(void)
{
	return flush(mr_tgt->rkey, tgt, 0, FLUSH_GLOBAL, FLUSH_RANGE) &&
	       completes(IBV_WC_SUCCESS, WC_FLUSH, 0);
}

static int flush_nothing_wrong_rkey(void)
{
	return flush(mr_tgt->rkey ^ 0x100, tgt, 0, FLUSH_GLOBAL, FLUSH_RANGE) &&
	       completes(IBV_WC_REM_ACCESS_ERR, 0, 0);
}

static int flush_whole_mr(void)
{
	return flush(mr_tgt->rkey, NULL, 0, FLUSH_GLOBAL, FLUSH_MR) &&
	       completes(IBV_WC_SUCCESS, WC_FLUSH, 0);
}

static int flush_no_right(void)
{
	return flush(mr_noflush->rkey, tgt, 64, FLUSH_GLOBAL, FLUSH_RANGE) &&
	       completes(IBV_WC_REM_ACCESS_ERR, 0, 0);
}

static int flush_persistent(void)
{
	return flush(mr_tgt->rkey, tgt, 64, FLUSH_PERSISTENT, FLUSH_RANGE) &&
	       completes(IBV_WC_REM_ACCESS_ERR, 0, 0);
}

static int flush_bad_type(void)
{
	return flush(mr_tgt->rkey, tgt, 64, 0x10, FLUSH_RANGE) &&
	       completes(IBV_WC_LOC_QP_OP_ERR, 0, 0);
}

static int flush_qp_denies(void)
{
	struct ibv_qp_attr a = { .qp_access_flags = REMOTE };

	return !ibv_modify_qp(qp[1], &a, IBV_QP_ACCESS_FLAGS) &&
	       flush(mr_tgt->rkey, tgt, 64, FLUSH_GLOBAL, FLUSH_RANGE) &&
	       completes(IBV_WC_REM_ACCESS_ERR, 0, 0);
}

static const struct {
	int (*run)(void);
	const char *what;
} checks[] = {
	{ atomic_write_done, "ATOMIC WRITE: done, its 8 bytes in place, nothing else changed" },
	{ atomic_writes_in_a_row, "32 ATOMIC WRITEs to one place: each done, the last stays" },
	{ write_flag_flush, "RDMA WRITE, ATOMIC WRITE of a flag, FLUSH of both: done in order" },
	{ atomic_write_misaligned, "ATOMIC WRITE not 8-byte aligned: REM_INV_REQ_ERR, unchanged" },
	{ atomic_write_no_right, "ATOMIC WRITE to an MR without remote write: REM_ACCESS_ERR" },
	{ atomic_write_past_end, "ATOMIC WRITE past the end of the MR: REM_ACCESS_ERR" },
	{ atomic_write_of_16, "ATOMIC WRITE element of 16 bytes: LOC_LEN_ERR, unchanged" },
	{ flush_range, "FLUSH of 4 KiB to global visibility: done" },
	{ flush_nothing, "FLUSH of 0 bytes: done" },
	{ flush_nothing_wrong_rkey, "FLUSH of 0 bytes with a wrong rkey: REM_ACCESS_ERR" },
	{ flush_whole_mr, "FLUSH of a whole MR, whatever the address: done" },
	{ flush_no_right, "FLUSH to an MR without the FLUSH right: REM_ACCESS_ERR" },
	{ flush_persistent, "FLUSH to persistence: REM_ACCESS_ERR" },
	{ flush_qp_denies, "FLUSH to a QP without the FLUSH right: REM_ACCESS_ERR" },
	{ flush_bad_type, "FLUSH element with a placement type past 4 bits: LOC_QP_OP_ERR" },
};

/* What the server offers in its accept: where the client may write. */
struct offer {
	uint64_t addr;
	uint32_t rkey;
};

#define FLAG 0x0123456789abcdefULL

/* The device of @id: its PD, the MRs, and a CQ for B or for A. */
static int cm_resources(struct rdma_cm_id *id)
{
	ctx = id->verbs;
	pd = ibv_alloc_pd(ctx);
	mr_src = pd ? ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_tgt = pd ? ibv_reg_mr(pd, tgt, LEN, REMOTE | ACCESS_FLUSH_GLOBAL) : NULL;
	return mr_src && mr_tgt;
}

/* One 8-byte RECV (server) or SEND (client) of src, on @id's QP. */
static int post_one(struct rdma_cm_id *id, int send)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = 8, .lkey = mr_src->lkey };
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;

	return send ? !ibv_post_send(id->qp, &swr, &sbad) : !ibv_post_recv(id->qp, &rwr, &rbad);
}

/* B: accepts one connection, offers tgt, and checks what the client wrote. */
static int cm_server(const char *port)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC, .cap = QP_CAP };
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .private_data_len = sizeof(struct offer) };
	struct rdma_cm_id *listen_id, *id = NULL;
	struct rdma_addrinfo *res;
	struct offer offer;
	struct ibv_wc wc;
	int ok;

	ok = !rdma_getaddrinfo(NULL, port, &hints, &res) &&
	     !rdma_create_ep(&listen_id, res, NULL, NULL) && !rdma_listen(listen_id, 1) &&
	     !rdma_get_request(listen_id, &id) && cm_resources(id) &&
	     (cq[1] = ibv_create_cq(ctx, 16, NULL, NULL, 0));
	a.send_cq = a.recv_cq = cq[1];
	ok = ok && !rdma_create_qp(id, pd, &a) && post_one(id, 0);
	offer.addr = (uintptr_t)tgt;
	offer.rkey = ok ? mr_tgt->rkey : 0;
	param.private_data = &offer;
	if (!ok || rdma_accept(id, &param)) {
		printf("# server: connecting: %s\n", strerror(errno));
		return 0;
	}
	/* The client's SEND comes after its WRITEs and FLUSH completed. */
	ok = poll_cq_for(cq[1], &wc, 1, 60) == 1 && wc.status == IBV_WC_SUCCESS;
	memcpy(before + 4096, src, 4096);
	memcpy(before, &(uint64_t){ FLAG }, 8);
	ok = ok && !memcmp(tgt, before, LEN);
	printf("%s: the client's data, flag and FLUSH arrived, the rest unchanged\n",
	       ok ? "placed" : "NOT placed");
	rdma_disconnect(id);
	return ok;
}

/* A: connects, writes data and a flag, FLUSHes both, and says so. */
static int cm_client(const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *id = NULL;
	struct rdma_addrinfo *res;
	struct offer offer;
	uint64_t flag = FLAG;
	int ok;

	ok = !rdma_getaddrinfo(addr, port, &hints, &res) && !rdma_create_ep(&id, res, NULL, NULL) &&
	     cm_resources(id) && make_requester(id) && !rdma_connect(id, &param) &&
	     id->event && id->event->param.conn.private_data_len >= sizeof(offer);
	if (!ok) {
		printf("# client: connecting: %s\n", strerror(errno));
		return 0;
	}
	memcpy(&offer, id->event->param.conn.private_data, sizeof(offer));
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, offer.rkey, offer.addr + 4096);
	ibv_wr_set_sge(qpx, mr_src->lkey, (uintptr_t)src, 4096);
	ibv_wr_atomic_write(qpx, offer.rkey, offer.addr, &flag);
	ok = !ibv_wr_complete(qpx) &&
	     post_raw(WR_FLUSH, offer.rkey, (void *)(uintptr_t)offer.addr, 8192, FLUSH_GLOBAL,
		      FLUSH_RANGE, 0) &&
	     completes(IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 4096) &&
	     completes(IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, 8) &&
	     completes(IBV_WC_SUCCESS, WC_FLUSH, 8192) && post_one(id, 1) &&
	     completes(IBV_WC_SUCCESS, IBV_WC_SEND, 8);
	printf("%s: RDMA WRITE, ATOMIC WRITE and FLUSH to the server\n",
	       ok ? "completed" : "NOT completed");
	rdma_disconnect(id);
	return ok;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex ax;
	struct ibv_mr *pmem;
	uint64_t caps;
	int ok;

	if (argc >= 3 && !strcmp(argv[1], "-p") && argc <= 4) {
		fill();
		ok = argc == 3 ? cm_server(argv[2]) : cm_client(argv[3], argv[2]);
		return ok ? 0 : 1;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE | -p PORT [SERVER_ADDR]\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..%zu\n", ARRAY_SIZE(checks) + 4);
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	mr_src = pd ? ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_tgt = pd ? ibv_reg_mr(pd, tgt, LEN, REMOTE | ACCESS_FLUSH_GLOBAL) : NULL;
	mr_ro = pd ? ibv_reg_mr(pd, tgt, LEN, IBV_ACCESS_REMOTE_READ | ACCESS_FLUSH_GLOBAL) : NULL;
	mr_noflush = pd ? ibv_reg_mr(pd, tgt, LEN, REMOTE) : NULL;
	ok = mr_src && mr_tgt && mr_ro && mr_noflush && (gid_index = ipv4_gid(ctx, &gid)) >= 0;
	report(ok, "open the device, register the MRs, find the IPv4 GID");
	if (!ok)
		return 1;

	caps = ibv_query_device_ex(ctx, NULL, &ax) ? 0 : ax.device_cap_flags_ex;
	printf("# device_cap_flags_ex %#llx\n", (unsigned long long)caps);
	report((caps & CAP_FLUSH_GLOBAL) && (caps & CAP_ATOMIC_WRITE) &&
	       !(caps & CAP_FLUSH_PERSISTENT),
	       "the device advertises ATOMIC WRITE and FLUSH to global visibility, not persistence");
	pmem = ibv_reg_mr(pd, tgt, LEN, REMOTE | ACCESS_FLUSH_PERSISTENT);
	if (!pmem)
		printf("# an MR for persistence: %s\n", strerror(errno));
	report(!pmem, "an MR for FLUSH to persistence is refused");
	if (pmem)
		ibv_dereg_mr(pmem);

	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		fill();
		ok = make_pair() && checks[i].run();
		report(destroy_pair() && ok, checks[i].what);
	}

	ok = !ibv_dereg_mr(mr_src) && !ibv_dereg_mr(mr_tgt) && !ibv_dereg_mr(mr_ro) &&
	     !ibv_dereg_mr(mr_noflush) && !ibv_dealloc_pd(pd) && !ibv_close_device(ctx);
	report(ok, "deregister, deallocate, close the device");
	return failed ? 1 : 0;
}
