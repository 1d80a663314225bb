// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues through unmodified libibverbs and its rxe provider,
 * which mmaps each CQ's ring and polls it without a system call: create
 * (with and without a completion channel), poll an empty ring, arm, resize,
 * destroy, refuse bad sizes, and leave cleanup of what a process forgot to
 * the kernel.
 *
 * Usage: verbs_cq DEVICE.  Prints KTAP; exits 0 if every case passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

/* What libfabric's RDM endpoints (ofi_rxm over verbs) ask of one CQ. */
#define RXM_CQE (2 * 128 * 1024)

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq, *leftover[8];
	struct ibv_device_attr dev;
	struct ibv_wc wc[4];
	int i, ok, max_cqe;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..13\n");
	ctx = open_device(argv[1]);
	report(ctx != NULL, "open the device");
	if (!ctx || ibv_query_device(ctx, &dev))
		return 1;
	max_cqe = dev.max_cqe;
	printf("# max_cqe %d\n", max_cqe);
	report(max_cqe >= RXM_CQE, "max_cqe holds what a libfabric RDM endpoint asks");

	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	report(cq && cq->cqe >= 100 && cq->cqe < 256,
	       "a CQ of 100 entries holds 100 to 255 (the ring rounds up)");
	if (!cq)
		return 1;
	printf("# cqe %d\n", cq->cqe);

	/* The provider reads the mapped ring's indices: it must be mapped. */
	report(ibv_poll_cq(cq, 4, wc) == 0, "polling the empty ring finds nothing");
	report(!ibv_req_notify_cq(cq, 0) && !ibv_req_notify_cq(cq, 1),
	       "arm for the next and for the next solicited completion");
	/* The provider maps the new ring the response names. */
	report(!ibv_resize_cq(cq, 1000) && cq->cqe >= 1000 && ibv_poll_cq(cq, 4, wc) == 0 &&
	       !ibv_resize_cq(cq, 10) && cq->cqe >= 10 && cq->cqe < 1000 &&
	       ibv_poll_cq(cq, 4, wc) == 0,
	       "resize to 1000 and back to 10, polling the new ring each time");
	report(ibv_resize_cq(cq, max_cqe + 1) == EINVAL && cq->cqe >= 10,
	       "resize beyond max_cqe: EINVAL, the CQ unchanged");
	report(!ibv_destroy_cq(cq), "destroy it");

	channel = ibv_create_comp_channel(ctx);
	cq = channel ? ibv_create_cq(ctx, max_cqe, NULL, channel, 0) : NULL;
	report(cq && cq->cqe == max_cqe && !ibv_req_notify_cq(cq, 0) &&
	       !ibv_destroy_cq(cq) && !ibv_destroy_comp_channel(channel),
	       "the largest CQ, on a completion channel, armed and destroyed");

	errno = 0;
	cq = ibv_create_cq(ctx, max_cqe + 1, NULL, NULL, 0);
	report(!cq && errno == EINVAL, "one entry more than max_cqe: EINVAL");

	{
		struct ibv_cq_init_attr_ex a = {
			.cqe = 16,
			.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
			.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN,
		};
		struct ibv_cq_ex *cq_ex;

		errno = 0;
		cq_ex = ibv_create_cq_ex(ctx, &a);
		report(!cq_ex && errno == EOPNOTSUPP,
		       "an extended CQ that ignores overruns: EOPNOTSUPP, not supported");
		if (cq_ex)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq_ex));
	}

	ok = 1;
	for (i = 0; i < 200 && ok; i++) {
		cq = ibv_create_cq(ctx, 1 + i * 37 % 4000, NULL, NULL, 0);
		ok = cq && ibv_poll_cq(cq, 1, wc) == 0 && !ibv_destroy_cq(cq);
	}
	report(ok, "200 CQs of assorted sizes created, polled and destroyed");

	/* Left for the kernel to clean up when the device is closed. */
	ok = 1;
	for (i = 0; i < 8; i++)
		ok &= (leftover[i] = ibv_create_cq(ctx, 64, NULL, NULL, 0)) != NULL;
	report(ok && !ibv_close_device(ctx), "close the device with 8 CQs still open");
	return failed ? 1 : 0;
}
