// SPDX-License-Identifier: GPL-2.0
/*
 * The target of a flood of RDMA READ requests (data_read_flood.sh): an RC
 * QP connected to a QP number at PEER that no QP has, so that only a
 * crafted requester (inject.c in its READ mode) can talk to it, and an MR of
 * BYTES that it may read.
 *
 *   read_target DEVICE PEER PEER_QPN BYTES SECONDS
 *
 * Prints "target QPN PSN RKEY VA", then waits SECONDS or for a SIGUSR1, and
 * checks that the QP has stayed ready (a responder never fails its QP over
 * requests it cannot answer yet) and the memory unchanged (READs only
 * read). Exits 0 if both hold.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdlib.h>
#include "verbs_util.h"

static void wake(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr;
	struct ibv_context *ctx;
	union ibv_gid local, peer = { .raw = { [10] = 0xff, [11] = 0xff } };
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned char *buf;
	size_t bytes, i;
	int gid_index, ok = 1;

	if (argc != 6 || inet_pton(AF_INET, argv[2], peer.raw + 12) != 1) {
		fprintf(stderr, "usage: %s DEVICE PEER PEER_QPN BYTES SECONDS\n", argv[0]);
		return 2;
	}
	bytes = strtoull(argv[4], NULL, 0);
	buf = malloc(bytes);
	ctx = open_device(argv[1]);
	if (!buf || !ctx || (gid_index = ipv4_gid(ctx, &local)) < 0) {
		printf("# no memory, no device %s or no IPv4 GID\n", argv[1]);
		return 1;
	}
	for (i = 0; i < bytes; i++)
		buf[i] = i * 7 + (i >> 12);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) :
		  NULL;
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	init.send_cq = init.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &init) : NULL;
	if (!mr || !qp || !connect_rc(qp, strtoul(argv[3], NULL, 0), &peer, gid_index, 14, 7)) {
		printf("# setting the target up failed\n");
		return 1;
	}
	printf("target %#x %#x %#x %#llx\n", qp->qp_num, first_psn, mr->rkey,
	       (unsigned long long)(uintptr_t)buf);
	fflush(stdout);
	signal(SIGUSR1, wake);
	sleep(atoi(argv[5]));
	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) || attr.qp_state != IBV_QPS_RTS) {
		printf("# the QP left RTS: state %d\n", attr.qp_state);
		ok = 0;
	}
	for (i = 0; i < bytes; i++)
		if (buf[i] != (unsigned char)(i * 7 + (i >> 12))) {
			printf("# byte %zu changed\n", i);
			ok = 0;
			break;
		}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return !ok;
}
