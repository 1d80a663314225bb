/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's own view of its rxe rings, for tests that write requests the
 * provider would not (or cannot yet) write: finding the rings among the
 * uverbs mappings, their slots and indices (struct rxe_queue_buf), and the
 * doorbell.
 */
#ifndef RXE_RING_H
#define RXE_RING_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define MAX_MAPS 256
/* struct rxe_queue_buf */
#define PRODUCER 128
#define CONSUMER 256
#define DATA 384

/* A mapped ring. */
struct ring {
	uint8_t *base;
	size_t size;
};

static inline volatile uint32_t *idx(struct ring *r, size_t at)
{
	return (volatile uint32_t *)(r->base + at);
}

static inline uint32_t mask(struct ring *r)
{
	return *idx(r, 4);
}

static inline size_t elem_size(struct ring *r)
{
	return (size_t)1 << *idx(r, 0);
}

static inline void *slot(struct ring *r, uint32_t i)
{
	return r->base + DATA + (i & mask(r)) * elem_size(r);
}

/* Publishes @n as the producer index, as the provider does (release). */
static inline void produce(struct ring *r, uint32_t n)
{
	__atomic_store_n(idx(r, PRODUCER), n, __ATOMIC_RELEASE);
}

/* The uverbs mappings of this process, by start address. */
static inline int uverbs_maps(uintptr_t *start, size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && n < MAX_MAPS && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (strstr(line, "/dev/infiniband/uverbs") && sscanf(line, "%lx-%lx", &s, &e) == 2) {
			start[n] = s;
			len[n++] = e - s;
		}
	}
	if (f)
		fclose(f);
	return n;
}

/* The mappings in the @n of @after... that are not in @before: the rings just made. */
static inline int new_rings(const uintptr_t *before, int nb, struct ring *out, int max)
{
	uintptr_t start[MAX_MAPS];
	size_t len[MAX_MAPS];
	int n = uverbs_maps(start, len), found = 0;

	for (int i = 0; i < n; i++) {
		int old = 0;

		for (int j = 0; j < nb; j++)
			old |= before[j] == start[i];
		if (!old && found < max)
			out[found++] = (struct ring){ (uint8_t *)start[i], len[i] };
	}
	return found;
}

/* The doorbell: POST_SEND with no work request, as the provider writes it. */
static inline int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c = {
		.hdr = { .command = IB_USER_VERBS_CMD_POST_SEND, .in_words = sizeof(c) / 4,
			 .out_words = sizeof(struct ib_uverbs_post_send_resp) / 4 },
		.cmd = { .qp_handle = qp->handle, .wqe_size = sizeof(struct ib_uverbs_send_wr) },
	};
	struct ib_uverbs_post_send_resp resp;

	c.cmd.response = (uintptr_t)&resp;
	if (write(qp->context->cmd_fd, &c, sizeof(c)) == sizeof(c))
		return 1;
	printf("# doorbell: %s\n", strerror(errno));
	return 0;
}

#endif
