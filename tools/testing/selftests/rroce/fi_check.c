// SPDX-License-Identifier: GPL-2.0
/*
 * libfabric's reliable datagram endpoints (FI_EP_RDM) between two processes,
 * every byte checked: tagged and untagged messages from 0 bytes to 4 MiB each
 * way (eager below the provider's rendezvous threshold, RDMA READ above),
 * RMA writes and reads of the peer's registered memory, and 64-bit atomics
 * (sum, fetch-and-sum, compare-and-swap) on one of its words. fi_pingpong
 * checks messages only, and polls its CQ without a pause.
 *
 *   fi_check -p PORT [-f PROVIDER] [-d DOMAIN] [-r ROUNDS] [-m MAX] [-w]            server
 *   fi_check -p PORT [-f PROVIDER] [-d DOMAIN] [-r ROUNDS] [-m MAX] [-w] ADDRESS    client
 *
 * PROVIDER defaults to "verbs;ofi_rxm" (RDM over RC QPs), DOMAIN to any;
 * ADDRESS is the server's IPv4 address. MAX (default 4 MiB) caps the
 * message sizes; both sides must agree on it. With -w a side with nothing
 * to progress sleeps on its CQ's file descriptor (FI_WAIT_FD), or 10 ms,
 * instead of polling, so that it leaves the CPU to others (the soak's
 * kernel work).
 *
 * The two meet over TCP to swap endpoint names, addresses and keys; each
 * side prints one "ok"/"not ok" line per check and "fi_check: N passed,
 * N failed (N with wrong data)"; the exit status is 1 if any failed. As in
 * ucp_check.c, wrong data is data of an operation that libfabric completed
 * without error and that differs from what was sent; an operation that
 * ended in an error completion (the provider gave up on its peer) is a
 * failure, not wrong data.
 */
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "fi_check"
#include "check.h"

/* An operation in flight: libfabric's context, then what its completion said. */
struct op {
	struct fi_context ctx;
	int done, err;
};

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_cq *cq;
static struct fid_av *av;
static struct fid_ep *ep;
static fi_addr_t peer;
static int cq_fd = -1, is_server;

/* What libfabric call WHAT returned, ERR (negative), and the end. */
static void die_with(const char *what, int err)
{
	fprintf(stderr, "fi_check: %s: %s\n", what, fi_strerror(-err));
	exit(2);
}

static int check_started(void)
{
	return cq != NULL;
}

/* Takes one completion off the CQ, if there is one: true if it did. */
static int check_progress(void)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = { 0 };
	struct op *op;
	ssize_t n = fi_cq_read(cq, &e, 1);

	if (n == 1) {
		((struct op *)e.op_context)->done = 1;
		return 1;
	}
	if (n == -FI_EAGAIN)
		return 0;
	if (n != -FI_EAVAIL || fi_cq_readerr(cq, &err, 0) != 1)
		die_with("fi_cq_read", (int)n);
	op = err.op_context;
	fprintf(stderr, "fi_check: error completion: %s\n", fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
	op->done = 1;
	op->err = err.err ? err.err : FI_EOTHER;
	return 1;
}

/* With -w, sleep until the CQ or FD (if not -1) has something, or 10 ms
 * have passed. */
static void check_idle(int fd)
{
	struct fid *fids[] = { &cq->fid };
	struct pollfd p[2] = { { .fd = cq_fd, .events = POLLIN }, { .fd = fd, .events = POLLIN } };

	if (sleepy && fi_trywait(fabric, fids, 1) == FI_SUCCESS)
		poll(p, fd < 0 ? 1 : 2, 10);
}

/* Progress until OP is done; true if it ended without error. */
static int wait_for(struct op *op)
{
	while (!op->done)
		if (!check_progress())
			check_idle(-1);
	return !op->err;
}

/* Posts CALL, a libfabric call on the context of O, an operation, once the
 * provider has room for it; true if it was posted. */
#define post(o, call)                                                                   \
	({                                                                              \
		ssize_t _ret;                                                           \
		*(o) = (struct op){ 0 };                                                \
		while ((_ret = (call)) == -FI_EAGAIN)                                   \
			check_progress();                                               \
		if (_ret)                                                               \
			fprintf(stderr, "fi_check: %s: %s\n", #call, fi_strerror((int)-_ret)); \
		_ret == 0;                                                              \
	})

static const size_t sizes[] = { 0, 1, 64, 1000, 4096, 8192, 16384, 65536, 262144, 1 << 20, 4 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Messages of every size, each way, -r times: tagged (the tag is the
 * size's index) if TAGGED, else untagged. */
static void messages(unsigned char *buf, void *desc, int tagged)
{
	const char *kind = tagged ? "tagged" : "untagged";
	char what[80];

	for (size_t s = 0; s < NSIZES && sizes[s] <= max_len; s++) {
		size_t len = sizes[s];
		int ok = 1, done;
		struct op op;

		for (int r = 0; r < rounds; r++) {
			for (int from = 0; from < 2; from++) {
				if (from == is_server) {
					fill(buf, from, len, r);
					done = tagged ? post(&op, fi_tsend(ep, buf, len, desc, peer, s, &op.ctx))
						      : post(&op, fi_send(ep, buf, len, desc, peer, &op.ctx));
					ok &= done && wait_for(&op);
				} else {
					memset(buf, 0, len);
					done = tagged ? post(&op, fi_trecv(ep, buf, len, desc, peer, s, 0, &op.ctx))
						      : post(&op, fi_recv(ep, buf, len, desc, peer, &op.ctx));
					done = done && wait_for(&op);
					ok &= delivered(done, intact(buf, from, len, r));
				}
			}
		}
		snprintf(what, sizeof(what), "%s send/recv %zu bytes, %d rounds each way", kind, len, rounds);
		check(ok, what);
	}
}

/* The server's memory, which the client writes, reads and adds to;
 * VIRT_ADDR: the provider takes remote addresses as virtual addresses
 * (FI_MR_VIRT_ADDR), not as offsets into the MR. */
static void rma_and_atomics(unsigned char *buf, struct fid_mr *mr, int virt_addr)
{
	char what[80];
	struct op op;
	int done;

	if (is_server) {
		/* The peer addresses buf by its address or by its offset in the MR. */
		uint64_t addr_key[2] = { virt_addr ? (uintptr_t)buf : 0, fi_mr_key(mr) };

		oob_write(addr_key, sizeof(addr_key));
		rma_target(buf, sizes, NSIZES, "write");
	} else {
		unsigned char *local = aligned_alloc(4096, CHECK_MAXLEN);
		uint64_t addr_key[2], remote, key, *word, want;
		struct fid_mr *local_mr;
		void *desc;
		int right, ret;

		oob_read(addr_key, sizeof(addr_key));
		remote = addr_key[0];
		key = addr_key[1];
		if (!local)
			die("aligned_alloc");
		/* Key 1: a provider that takes the keys asked for has given 0 to buf. */
		ret = fi_mr_reg(domain, local, CHECK_MAXLEN, FI_READ | FI_WRITE, 0, 1, 0, &local_mr, NULL);
		if (ret)
			die_with("fi_mr_reg", ret);
		desc = fi_mr_desc(local_mr);
		for (size_t s = 0; s < NSIZES && sizes[s] <= max_len; s++) {
			size_t len = sizes[s];

			fill(local, 1, len, 0);
			/* A write may complete once sent; a read after it completes
			 * once the write has landed (a read does not pass a write:
			 * FI_ORDER_RAW, which RC keeps). */
			done = post(&op, fi_write(ep, local, len, desc, peer, remote, key, &op.ctx)) && wait_for(&op) &&
			       post(&op, fi_read(ep, local + CHECK_MAXLEN - 1, 1, desc, peer, remote, key, &op.ctx)) &&
			       wait_for(&op);
			snprintf(what, sizeof(what), "write of %zu bytes completed", len);
			check(done, what);
			barrier_with(done);
			barrier();
			memset(local, 0, len);
			done = post(&op, fi_read(ep, local, len, desc, peer, remote, key, &op.ctx)) && wait_for(&op);
			snprintf(what, sizeof(what), "read of %zu bytes intact", len);
			check(delivered(done, intact(local, 0, len, 1)), what);
		}
		barrier();
		barrier();
		/* sums, then fetch-and-sums, then a compare-and-swap that fails and one that succeeds */
		done = right = 1;
		word = (uint64_t *)local;
		for (int i = 0; i < 100 * rounds; i++) {
			word[0] = 1;
			done &= post(&op, fi_atomic(ep, &word[0], 1, desc, peer, remote, key, FI_UINT64, FI_SUM,
						    &op.ctx)) &&
				wait_for(&op);
		}
		for (int i = 0; i < 100 * rounds; i++) {
			word[0] = 2;
			word[1] = 0;
			done &= post(&op, fi_fetch_atomic(ep, &word[0], 1, desc, &word[1], desc, peer, remote, key,
							  FI_UINT64, FI_SUM, &op.ctx)) &&
				wait_for(&op);
			right &= word[1] == 100ull * rounds + 2ull * i;
		}
		want = 3ull * 100 * rounds;
		for (int i = 0; i < 2; i++) {
			/* compare with 0 (fails), then with want; both return want */
			word[0] = 0xdead0000ull + want;
			word[1] = i ? want : 0;
			word[2] = 0;
			done &= post(&op, fi_compare_atomic(ep, &word[0], 1, desc, &word[1], desc, &word[2], desc, peer,
							    remote, key, FI_UINT64, FI_CSWAP, &op.ctx)) &&
				wait_for(&op);
			right &= word[2] == want;
		}
		snprintf(what, sizeof(what), "%d sums, %d fetch-and-sums, 2 compare-and-swaps", 100 * rounds,
			 100 * rounds);
		check(delivered(done, right), what);
		barrier_with(done);
		fi_close(&local_mr->fid);
		free(local);
	}
	barrier();
}

int main(int argc, char **argv)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	const char *provider = "verbs;ofi_rxm", *domain_name = NULL;
	int opt, ret;
	char name[256], *peer_name;
	size_t name_len = sizeof(name);
	struct fid_mr *mr;
	unsigned char *buf;

	port = 13350;
	while ((opt = getopt(argc, argv, "p:f:d:r:m:w")) != -1) {
		if (opt == 'f')
			provider = optarg;
		else if (opt == 'd')
			domain_name = optarg;
		else if (!check_option(opt))
			die("usage: fi_check -p PORT [-f PROVIDER] [-d DOMAIN] [-r ROUNDS] [-m MAX] [-w] [SERVER]");
	}
	is_server = optind >= argc;
	/* First, so that a side whose setup fails ends the other's run too. */
	oob_connect(is_server ? NULL : argv[optind]);

	if (!hints)
		die("fi_allocinfo");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(provider);
	if (domain_name)
		hints->domain_attr->name = strdup(domain_name);
	cq_attr.wait_obj = sleepy ? FI_WAIT_FD : FI_WAIT_NONE;

	ret = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info);
	if (ret)
		die_with("fi_getinfo", ret);
	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)) || (ret = fi_domain(fabric, info, &domain, NULL)) ||
	    (ret = fi_cq_open(domain, &cq_attr, &cq, NULL)) || (ret = fi_av_open(domain, &av_attr, &av, NULL)) ||
	    (ret = fi_endpoint(domain, info, &ep, NULL)) || (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) || (ret = fi_enable(ep)) ||
	    (ret = fi_getname(&ep->fid, name, &name_len)) ||
	    (sleepy && (ret = fi_control(&cq->fid, FI_GETWAIT, &cq_fd))))
		die_with("libfabric setup", ret);
	printf("# %s, domain %s\n", info->fabric_attr->prov_name, info->domain_attr->name);

	oob_send(name, name_len);
	peer_name = oob_recv();
	if (fi_av_insert(av, peer_name, 1, &peer, 0, NULL) != 1)
		die("fi_av_insert");
	free(peer_name);

	buf = aligned_alloc(4096, CHECK_MAXLEN);
	if (!buf)
		die("aligned_alloc");
	ret = fi_mr_reg(domain, buf, CHECK_MAXLEN,
			FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL);
	if (ret)
		die_with("fi_mr_reg", ret);
	messages(buf, fi_mr_desc(mr), 1);
	barrier();
	messages(buf, fi_mr_desc(mr), 0);
	barrier();
	rma_and_atomics(buf, mr, !!(info->domain_attr->mr_mode & FI_MR_VIRT_ADDR));

	report();
	fi_close(&mr->fid);
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(buf);
	return failed != 0;
}
