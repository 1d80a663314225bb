// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast through libibverbs alone, for the groups rdma_cm does not
 * join on RoCE v2 (IPv6 ones):
 *
 *   mcast recv DEV GID_INDEX GROUP COUNT QPS   QPS QPs attach to GROUP and
 *                                             each must receive COUNT
 *                                             datagrams, each one once
 *   mcast send DEV GID_INDEX GROUP COUNT       sends COUNT datagrams to GROUP
 *
 * GROUP is an IPv6 multicast address, or an IPv4 one (taken as
 * ::ffff:a.b.c.d). The receiver prints "ready" once attached, then a line
 * per QP; both exit 0 on success.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include "verbs_util.h"

#define QKEY 0x11111111
#define MSG 256
#define GRH 40
#define MAX_QPS 8
#define MAX_COUNT 1000

static int parse_group(const char *s, union ibv_gid *gid)
{
	struct in_addr v4;

	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET6, s, gid->raw) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &v4) != 1)
		return -1;
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &v4, 4);
	return 0;
}

/* A UD QP of @pd on @cq, in RTS. */
static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq, int depth)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	/* A few PSNs before the 24-bit wrap: every sender's run crosses it. */
	a.sq_psn = 0xfffff8;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

static int receive(struct ibv_pd *pd, union ibv_gid *group, int count, int nqps)
{
	static char buf[MAX_QPS][MAX_COUNT][GRH + MSG];
	static char seen[MAX_QPS][MAX_COUNT];
	struct ibv_cq *cq[MAX_QPS];
	struct ibv_qp *qp[MAX_QPS];
	struct ibv_mr *mr;
	int ok = 1;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return 0;
	for (int q = 0; q < nqps; q++) {
		cq[q] = ibv_create_cq(pd->context, count, NULL, NULL, 0);
		qp[q] = cq[q] ? ud_qp(pd, cq[q], count) : NULL;
		if (!qp[q] || ibv_attach_mcast(qp[q], group, 0)) {
			printf("# QP %d: cannot attach\n", q);
			return 0;
		}
		for (int i = 0; i < count; i++) {
			struct ibv_sge sge = { (uintptr_t)buf[q][i], GRH + MSG, mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

			if (ibv_post_recv(qp[q], &wr, &bad))
				return 0;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (int q = 0; q < nqps; q++) {
		struct ibv_wc wc[MAX_COUNT];
		int n = poll_cq_for(cq[q], wc, count, 60), good = 0;

		for (int i = 0; i < n; i++) {
			int seq;

			if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != GRH + MSG ||
			    sscanf(buf[q][wc[i].wr_id] + GRH, "rroce mcast %d", &seq) != 1 ||
			    seq < 0 || seq >= count || seen[q][seq]++)
				continue;
			good++;
		}
		printf("# QP %d (QPN %u): %d of %d datagrams intact\n", q, qp[q]->qp_num, good, count);
		ok &= good == count;
		ok &= !ibv_detach_mcast(qp[q], group, 0);
	}
	return destroy_qps(qp, cq, nqps) && !ibv_dereg_mr(mr) && ok;
}

static int send_all(struct ibv_pd *pd, int gid_index, union ibv_gid *group, int count)
{
	static char buf[MSG];
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *group, .sgid_index = gid_index, .hop_limit = 1 },
	};
	struct ibv_cq *cq = ibv_create_cq(pd->context, 4, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? ud_qp(pd, cq, 4) : NULL;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), 0);
	struct ibv_ah *ah = ibv_create_ah(pd, &ah_attr);
	int sent = 0;

	if (!qp || !mr || !ah)
		return 0;
	for (int i = 0; i < count; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, MSG, mr->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = 0xffffff, .remote_qkey = QKEY },
		}, *bad;
		struct ibv_wc wc;

		snprintf(buf, sizeof(buf), "rroce mcast %d", i);
		if (ibv_post_send(qp, &wr, &bad) || poll_cq_for(cq, &wc, 1, 10) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			break;
		sent++;
		/* A pace the receivers' softirq backlog takes in any VM. */
		usleep(20000);
	}
	printf("# sent %d of %d datagrams\n", sent, count);
	return !ibv_destroy_ah(ah) && destroy_qps(&qp, &cq, 1) && !ibv_dereg_mr(mr) &&
	       sent == count;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	union ibv_gid group;
	struct ibv_pd *pd;
	int count, ok;

	if (argc < 6 || parse_group(argv[4], &group) || (count = atoi(argv[5])) < 1 ||
	    count > MAX_COUNT) {
		fprintf(stderr, "usage: mcast recv|send DEV GID_INDEX GROUP COUNT [QPS]\n");
		return 2;
	}
	ctx = open_device(argv[2]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		printf("# cannot open %s\n", argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "recv")) {
		int nqps = argc > 6 ? atoi(argv[6]) : 1;

		ok = nqps >= 1 && nqps <= MAX_QPS && receive(pd, &group, count, nqps);
	}
	else
		ok = send_all(pd, atoi(argv[3]), &group, count);
	return ok ? 0 : 1;
}
