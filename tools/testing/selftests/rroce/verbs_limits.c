// SPDX-License-Identifier: GPL-2.0
/*
 * More QPs and MRs than 2^16 at once, rroce's old limits: the device
 * reports the C rxe's limits and gives out that many, with distinct QP
 * numbers and keys, and `rdma res` counts them. The QPs are UD QPs on one
 * SRQ with a one-slot send queue, the MRs one page each, to keep the VM's
 * memory in bounds.
 *
 * Usage: verbs_limits DEVICE [COUNT].  Prints KTAP; exits 0 if every case
 * passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

/* How many QPs, MRs... `rdma res show DEV` counts now; -1 if unknown. */
static long res_count(const char *dev, const char *what)
{
	char cmd[128], line[512], key[32];
	long n = -1;
	char *at;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show %s", dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	snprintf(key, sizeof(key), " %s ", what);
	while (fgets(line, sizeof(line), f))
		if ((at = strstr(line, key)))
			n = strtol(at + strlen(key), NULL, 10);
	pclose(f);
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether the @n numbers at @v are all different (sorts them). */
static int distinct(uint32_t *v, int n)
{
	int i;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (i = 1; i < n; i++)
		if (v[i] == v[i - 1])
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	int count = argc > 2 ? atoi(argv[2]) : 66000;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	struct ibv_qp **qps;
	struct ibv_mr **mrs;
	uint32_t *nums;
	long qps0, mrs0;
	int i, made, ok;
	static char page[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE [COUNT]\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..6\n");
	qps = calloc(count, sizeof(*qps));
	mrs = calloc(count, sizeof(*mrs));
	nums = calloc(count, sizeof(*nums));
	ctx = open_device(argv[1]);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_srq *srq = pd ? ibv_create_srq(pd, &sa) : NULL;

	ok = qps && mrs && nums && ctx && pd && cq && srq && !ibv_query_device(ctx, &da);
	report(ok && da.max_qp >= 1048560 && da.max_mr >= 524287 && da.max_qp_wr >= 1048576 &&
	       da.max_pd >= 1048576 && da.max_cq >= 1048576 && da.max_mcast_grp >= 8192,
	       "the device reports the C rxe's limits");
	if (!ok)
		return 1;
	printf("# max_qp %d, max_mr %d, max_qp_wr %d, max_pd %d, max_cq %d, max_mcast_grp %d\n",
	       da.max_qp, da.max_mr, da.max_qp_wr, da.max_pd, da.max_cq, da.max_mcast_grp);
	qps0 = res_count(argv[1], "qp");
	mrs0 = res_count(argv[1], "mr");

	qa.send_cq = qa.recv_cq = cq;
	qa.srq = srq;
	for (made = 0; made < count; made++) {
		qps[made] = ibv_create_qp(pd, &qa);
		if (!qps[made])
			break;
		nums[made] = qps[made]->qp_num;
	}
	printf("# %d QPs created, the last numbered %u\n", made, made ? nums[made - 1] : 0);
	report(made == count && distinct(nums, made), "that many QPs, with distinct numbers");

	for (i = 0; i < count; i++) {
		mrs[i] = ibv_reg_mr(pd, page, sizeof(page), IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ);
		if (!mrs[i])
			break;
		nums[i] = mrs[i]->rkey;
	}
	printf("# %d MRs registered\n", i);
	report(i == count && distinct(nums, i), "that many MRs of one page, with distinct keys");

	report(res_count(argv[1], "qp") - qps0 == made && res_count(argv[1], "mr") - mrs0 == i,
	       "rdma res counts them");

	ok = 1;
	for (i = 0; i < count; i++)
		if (mrs[i] && ibv_dereg_mr(mrs[i]))
			ok = 0;
	for (i = 0; i < made; i++)
		if (ibv_destroy_qp(qps[i]))
			ok = 0;
	report(ok && res_count(argv[1], "qp") == qps0 && res_count(argv[1], "mr") == mrs0,
	       "all destroyed, and rdma res counts none of them");

	ok = !ibv_destroy_srq(srq) && !ibv_destroy_cq(cq) && !ibv_dealloc_pd(pd) &&
	     !ibv_close_device(ctx);
	report(ok, "destroy the SRQ, CQ and PD, close the device");
	return failed ? 1 : 0;
}
