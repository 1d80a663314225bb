// SPDX-License-Identifier: GPL-2.0
/*
 * The target of single forged requests (data_forged.sh): an RC QP connected
 * to a QP number at PEER that no QP has, so that only a crafted requester
 * (inject.c --one) talks to it, which peers may write but not read; and an
 * MR of 8 KiB that would let them do both.
 *
 *   forged_target DEVICE PEER PEER_QPN SECONDS
 *
 * Prints "target QPN PSN RKEY VA". On SIGUSR1 deregisters the MR and prints
 * "deregistered". After SECONDS, or on SIGUSR2, checks the memory: the first
 * KiB must hold what the one WRITE packet accepted carried (0xa5), the rest
 * what it held from the start. Exits 0 if it does.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdlib.h>
#include "verbs_util.h"

#define BYTES 8192
#define WRITTEN 1024

static volatile sig_atomic_t deregister, finish;

static void on_usr1(int sig)
{
	(void)sig;
	deregister = 1;
}

static void on_usr2_or_alarm(int sig)
{
	(void)sig;
	finish = 1;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr write_only = { .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_context *ctx;
	union ibv_gid local, peer = { .raw = { [10] = 0xff, [11] = 0xff } };
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	static unsigned char buf[BYTES] __attribute__((aligned(4096)));
	int gid_index, ok = 1;
	sigset_t wake, waiting;
	size_t i;

	if (argc != 5 || inet_pton(AF_INET, argv[2], peer.raw + 12) != 1) {
		fprintf(stderr, "usage: %s DEVICE PEER PEER_QPN SECONDS\n", argv[0]);
		return 2;
	}
	ctx = open_device(argv[1]);
	if (!ctx || (gid_index = ipv4_gid(ctx, &local)) < 0) {
		printf("# no device %s or no IPv4 GID\n", argv[1]);
		return 1;
	}
	for (i = 0; i < BYTES; i++)
		buf[i] = i * 7 + (i >> 8);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ) : NULL;
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	init.send_cq = init.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &init) : NULL;
	if (!mr || !qp || !connect_rc(qp, strtoul(argv[3], NULL, 0), &peer, gid_index, 14, 7) ||
	    ibv_modify_qp(qp, &write_only, IBV_QP_ACCESS_FLAGS)) {
		printf("# setting the target up failed\n");
		return 1;
	}
	printf("target %#x %#x %#x %#llx\n", qp->qp_num, first_psn, mr->rkey,
	       (unsigned long long)(uintptr_t)buf);
	fflush(stdout);
	/* Blocked but in sigsuspend(), so that none comes between a check and the wait. */
	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	sigaddset(&wake, SIGUSR2);
	sigaddset(&wake, SIGALRM);
	sigprocmask(SIG_BLOCK, &wake, &waiting);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2_or_alarm);
	signal(SIGALRM, on_usr2_or_alarm);
	alarm(atoi(argv[4]));
	while (!finish) {
		if (!deregister || !mr)
			sigsuspend(&waiting);
		if (deregister && mr) {
			ok &= !ibv_dereg_mr(mr);
			mr = NULL;
			printf("deregistered\n");
			fflush(stdout);
		}
	}
	for (i = 0; i < BYTES; i++) {
		unsigned char want = i < WRITTEN ? 0xa5 : (unsigned char)(i * 7 + (i >> 8));

		if (buf[i] != want) {
			printf("# byte %zu is %#x, not %#x\n", i, buf[i], want);
			ok = 0;
			break;
		}
	}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	if (mr)
		ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return !ok;
}
