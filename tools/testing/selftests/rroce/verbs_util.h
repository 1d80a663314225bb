/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libibverbs test programs share: KTAP reporting, opening a device
 * by name, finding its IPv4 RoCE v2 GID and connecting RC QPs to it.
 */
#ifndef VERBS_UTIL_H
#define VERBS_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static int cases, failed;

static inline void report(int ok, const char *what)
{
	cases++;
	if (!ok)
		failed++;
	printf("%sok %d %s\n", ok ? "" : "not ", cases, what);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static inline double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Polls @cq for up to @secs s, until @max completions came into @wc; returns
 * how many came, or -1 if polling failed.
 */
static inline int poll_cq_for(struct ibv_cq *cq, struct ibv_wc *wc, int max, double secs)
{
	double end = now() + secs;
	int n = 0, got;

	while (n < max && now() < end) {
		got = ibv_poll_cq(cq, max - n, wc + n);
		if (got < 0)
			return -1;
		n += got;
		if (!got)
			usleep(1000);
	}
	return n;
}

/*
 * The index of the RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d) on port 1,
 * stored in @gid. ib_core fills the table asynchronously once the device is
 * added: wait up to 5 s for it.
 */
static inline int ipv4_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const unsigned char v4[12] = { [10] = 0xff, [11] = 0xff };
	double end = now() + 5;
	struct ibv_gid_entry e;
	uint32_t i;

	do {
		for (i = 0; i < 64; i++)
			if (!ibv_query_gid_ex(ctx, 1, i, &e, 0) &&
			    e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(e.gid.raw, v4, 12)) {
				printf("# GID %u: ::ffff:%d.%d.%d.%d\n", i, e.gid.raw[12],
				       e.gid.raw[13], e.gid.raw[14], e.gid.raw[15]);
				*gid = e.gid;
				return i;
			}
		usleep(100000);
	} while (now() < end);
	printf("# no RoCE v2 GID of an IPv4 address on port 1\n");
	return -1;
}

/* The first PSN each side sends and expects; a test may move it (to the wrap). */
static uint32_t first_psn = 0x100;

/*
 * Takes an RC or UC QP to RTR, talking to @dest_qpn at @gid (index
 * @gid_index), MTU 1024.
 */
static inline int rc_ready_to_receive(struct ibv_qp *qp, uint32_t dest_qpn,
				      const union ibv_gid *gid, int gid_index)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.path_mtu = IBV_MTU_1024, .dest_qp_num = dest_qpn, .rq_psn = first_psn,
		.max_dest_rd_atomic = 16, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1, .grh = { .dgid = *gid,
			     .sgid_index = gid_index, .hop_limit = 64 } },
	};
	/* UC has no READs, atomics or RNR NAKs. */
	int rc_only = qp->qp_type == IBV_QPT_RC ?
		      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0;
	int err;

	if (qp->qp_type == IBV_QPT_UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	/* Each transition reads only the attributes of its mask. */
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	a.qp_state = IBV_QPS_RTR;
	err = err ?: ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | rc_only);
	if (err)
		printf("# QP %u to RTR: %s\n", qp->qp_num, strerror(err));
	return !err;
}

/* Takes an RC or UC QP from RTR to RTS (UC takes only the PSN). */
static inline int rc_ready_to_send(struct ibv_qp *qp, uint8_t timeout, uint8_t retry_cnt)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = timeout, .retry_cnt = retry_cnt,
		.rnr_retry = 7, .sq_psn = first_psn, .max_rd_atomic = 16,
	};
	int rc_only = qp->qp_type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0;
	int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | rc_only);

	if (err)
		printf("# QP %u to RTS: %s\n", qp->qp_num, strerror(err));
	return !err;
}

/* Takes an RC QP to RTS, as rc_ready_to_receive() and rc_ready_to_send() do. */
static inline int connect_rc(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *gid,
			     int gid_index, uint8_t timeout, uint8_t retry_cnt)
{
	return rc_ready_to_receive(qp, dest_qpn, gid, gid_index) &&
	       rc_ready_to_send(qp, timeout, retry_cnt);
}

/*
 * Destroys the first @n of @qp, then of @cq (a CQ may serve several of the
 * QPs), those that exist, and forgets them all.
 */
static inline int destroy_qps(struct ibv_qp **qp, struct ibv_cq **cq, int n)
{
	int ok = 1;

	for (int i = 0; i < n; i++) {
		ok &= !qp[i] || !ibv_destroy_qp(qp[i]);
		qp[i] = NULL;
	}
	for (int i = 0; i < n; i++) {
		ok &= !cq[i] || !ibv_destroy_cq(cq[i]);
		cq[i] = NULL;
	}
	return ok;
}

#endif
