// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions through unmodified libibverbs: user memory is pinned and
 * named by keys that are unique and not guessable by counting; on-demand
 * registration is offered exactly when the device says so; bad requests
 * (unmapped or read-only memory) are refused; what a
 * process leaves registered is cleaned up when it closes the device.
 *
 * Usage: verbs_mr DEVICE.  Prints KTAP; exits 0 if every case passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define NR_MRS 100
#define LEN (1 << 20)
#define ALL_RIGHTS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)


/* reg_fails: registering fails with @want (0: any errno). */
static int reg_fails(struct ibv_pd *pd, void *addr, size_t len, int access, int want)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (mr) {
		ibv_dereg_mr(mr);
		return 0;
	}
	printf("# errno %d (%s)\n", errno, strerror(errno));
	return want ? errno == want : errno != 0;
}

int main(int argc, char **argv)
{
	static struct ibv_mr *mrs[NR_MRS];
	unsigned char seen_low[1 << 12] = { 0 };
	int i, j, ok, odp, unique = 1, low_values = 0;
	struct ibv_device_attr_ex attr;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf, *ro;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..11\n");
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = malloc(LEN);
	report(ctx && pd && buf, "open the device, allocate a PD");
	if (!pd || !buf)
		return 1;
	memset(buf, 0xa5, LEN);

	mrs[0] = ibv_reg_mr(pd, buf, LEN, ALL_RIGHTS);
	report(mrs[0] && mrs[0]->lkey && mrs[0]->lkey == mrs[0]->rkey &&
	       mrs[0]->addr == buf && mrs[0]->length == LEN,
	       "register 1 MiB with every right: lkey = rkey, not 0");
	if (!mrs[0])
		return 1;

	ok = 1;
	for (i = 1; i < NR_MRS; i++)
		ok &= (mrs[i] = ibv_reg_mr(pd, buf + i * 4096, 4096,
					   IBV_ACCESS_LOCAL_WRITE)) != NULL;
	report(ok, "100 MRs registered");
	/* rroce's keys have 12 random bits below the MR's index. */
	for (i = 0; ok && i < NR_MRS; i++) {
		for (j = 0; j < i; j++)
			unique &= mrs[i]->rkey != mrs[j]->rkey;
		low_values += !seen_low[mrs[i]->rkey & 0xfff]++;
	}
	report(ok && unique, "their keys name distinct MRs");
	printf("# %d distinct random parts in %d keys\n", low_values, NR_MRS);
	report(ok && low_values > NR_MRS / 2, "their keys are not a count: the low bits vary");

	errno = 0;
	report(ibv_dealloc_pd(pd) == EBUSY, "the PD cannot go while MRs use it: EBUSY");

	ok = 1;
	for (i = 0; i < NR_MRS; i++)
		ok &= mrs[i] && !ibv_dereg_mr(mrs[i]);
	report(ok, "deregister them all");

	mrs[0] = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	report(mrs[0] && !ibv_dereg_mr(mrs[0]), "register and deregister with MW_BIND");
	if (ibv_query_device_ex(ctx, NULL, &attr))
		attr.odp_caps.general_caps = 0;
	odp = attr.odp_caps.general_caps & IBV_ODP_SUPPORT;
	ok = odp ? !reg_fails(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, 0) :
		   reg_fails(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, EOPNOTSUPP);
	report(ok, odp ? "ON_DEMAND registers: the device offers on-demand paging" :
			 "ON_DEMAND without on-demand paging in the kernel: EOPNOTSUPP");

	ro = mmap(NULL, 4 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = ro != MAP_FAILED && !munmap(ro + 2 * 4096, 2 * 4096) &&
	     reg_fails(pd, ro, 4 * 4096, IBV_ACCESS_LOCAL_WRITE, 0) &&
	     reg_fails(pd, ro, 2 * 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	report(ok, "memory partly unmapped, or read-only for a writable MR: refused");

	/* Left for the kernel to clean up when the device is closed. */
	for (i = 0; i < 8; i++)
		ok &= ibv_reg_mr(pd, buf, LEN, ALL_RIGHTS) != NULL;
	report(ok && !ibv_close_device(ctx), "close the device with 8 MRs registered");
	return failed ? 1 : 0;
}
