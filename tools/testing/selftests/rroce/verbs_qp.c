// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs through unmodified libibverbs and its rxe provider: RC, UC
 * and UD QPs get distinct numbers and the capacities asked for, with rings
 * the provider maps; oversized or unsupported requests are refused; what a
 * process leaves open is cleaned up when it closes the device.
 *
 * Usage: verbs_qp DEVICE.  Prints KTAP; exits 0 if every case passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#define NR_QPS 100

static int cases, failed;

static void report(int ok, const char *what)
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
	ibv_free_device_list(list);
	return ctx;
}

static struct ibv_qp_init_attr attr(struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 100,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 64,
		},
	};
	return a;
}

/* create_fails: creating a QP with @a fails with @want (0: any errno). */
static int create_fails(struct ibv_pd *pd, struct ibv_qp_init_attr a, int want)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &a);
	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	printf("# errno %d (%s)\n", errno, strerror(errno));
	return want ? errno == want : errno != 0;
}

int main(int argc, char **argv)
{
	static struct ibv_qp *qps[NR_QPS];
	struct ibv_qp *rc, *uc, *ud;
	struct ibv_qp_init_attr a;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, ok;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..8\n");
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	report(ctx && pd && cq, "open the device, allocate a PD and a CQ");
	if (!pd || !cq)
		return 1;

	a = attr(cq, IBV_QPT_RC);
	rc = ibv_create_qp(pd, &a);
	report(rc && rc->qp_num >= 16 && a.cap.max_send_wr >= 64 && a.cap.max_recv_wr >= 100 &&
	       a.cap.max_send_sge >= 4 && a.cap.max_recv_sge >= 4 && a.cap.max_inline_data >= 64,
	       "an RC QP, with at least the capacities asked for");
	if (!rc)
		return 1;
	printf("# qpn %u, send_wr %u, recv_wr %u\n", rc->qp_num, a.cap.max_send_wr,
	       a.cap.max_recv_wr);

	a = attr(cq, IBV_QPT_UC);
	uc = ibv_create_qp(pd, &a);
	a = attr(cq, IBV_QPT_UD);
	ud = ibv_create_qp(pd, &a);
	report(uc && ud && uc->qp_num != rc->qp_num && ud->qp_num != rc->qp_num &&
	       uc->qp_num != ud->qp_num, "UC and UD QPs, with distinct numbers");

	ok = 1;
	for (i = 0; i < NR_QPS && ok; i++) {
		a = attr(cq, IBV_QPT_RC);
		a.cap.max_send_wr = 1 + i * 97 % 8000;
		ok = (qps[i] = ibv_create_qp(pd, &a)) != NULL;
	}
	for (i = 0; i < NR_QPS && ok; i++)
		ok = !ibv_destroy_qp(qps[i]);
	report(ok, "100 QPs of assorted sizes created and destroyed");

	a = attr(cq, IBV_QPT_RC);
	a.cap.max_send_wr = 1 << 20;
	ok = create_fails(pd, a, EINVAL);
	a = attr(cq, IBV_QPT_RC);
	a.cap.max_recv_sge = 33;
	ok &= create_fails(pd, a, EINVAL);
	a = attr(cq, IBV_QPT_RC);
	a.cap.max_inline_data = 4096;
	ok &= create_fails(pd, a, EINVAL);
	report(ok, "more WRs, SGEs or inline data than the device has: EINVAL");

	report(create_fails(pd, attr(cq, IBV_QPT_RAW_PACKET), 0), "a raw packet QP: refused");

	report(!ibv_destroy_qp(uc) && !ibv_destroy_qp(ud), "destroy the UC and UD QPs");

	/* The RC QP, its CQ and PD are left for the kernel to clean up. */
	report(!ibv_close_device(ctx), "close the device with a QP still open");
	return failed ? 1 : 0;
}
