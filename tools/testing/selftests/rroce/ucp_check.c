// SPDX-License-Identifier: GPL-2.0
/*
 * UCX's UCP API between two processes, every byte checked: tagged messages
 * from 1 byte to 4 MiB each way (eager below UCX's rendezvous threshold,
 * RDMA READ or WRITE zero copy above), stream messages, puts and gets into
 * the peer's registered memory, and 64-bit atomics (add, fetch-and-add,
 * compare-and-swap) on one of its words. The transports are the ones
 * UCX_TLS and UCX_NET_DEVICES allow.
 *
 *   ucp_check -p PORT [-r ROUNDS] [-m MAX] [-w]            server
 *   ucp_check -p PORT [-r ROUNDS] [-m MAX] [-w] ADDRESS    client (the server's IPv4 address)
 *
 * MAX (default 4 MiB) caps the message sizes; both sides must agree on it.
 * With -w a side with nothing to progress sleeps until UCX has an event
 * (UCP_FEATURE_WAKEUP), or 10 ms, instead of polling, so that it leaves
 * the CPU to others (the soak's kernel work). Not longer: UCX before 1.15
 * (Debian 12 ships 1.13) arms a transport that is progressed on demand
 * for receives only, not for send completions (openucx/ucx#8959), and
 * runs that slept without a bound hung, on rdma_rxe as on rroce.
 *
 * The two meet over TCP to swap UCP worker addresses and keys, then use UCP
 * only. Each side prints one "ok"/"not ok" line per check and
 * "ucp_check: N passed, N failed (N with wrong data)"; the exit status is
 * 1 if any failed. Wrong data is data of an operation that UCX completed
 * without error and that differs from what was sent: unlike an operation
 * that failed (UCX gave up on a peer it could not reach), no fault of the
 * link excuses it.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#define CHECK_NAME "ucp_check"
#include "check.h"

static ucp_context_h context;
static ucp_worker_h worker;
static ucp_ep_h ep;
static int is_server, efd = -1;

static int check_started(void)
{
	return worker != NULL;
}

/* A transport without RDMA (ud_verbs) serves the peer's puts, gets and
 * atomics in software, here. */
static int check_progress(void)
{
	return ucp_worker_progress(worker);
}

/* With -w, sleep until the worker has an event, FD (if not -1) has data,
 * or 10 ms have passed. */
static void check_idle(int fd)
{
	struct pollfd p[2] = { { .fd = efd, .events = POLLIN }, { .fd = fd, .events = POLLIN } };

	if (sleepy && ucp_worker_arm(worker) == UCS_OK)
		poll(p, fd < 0 ? 1 : 2, 10);
}

/* Progress until REQ, a request or status pointer, is done. */
static ucs_status_t wait_for(void *req)
{
	ucs_status_t st;

	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	if (!req)
		return UCS_OK;
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
		if (!ucp_worker_progress(worker))
			check_idle(-1);
	ucp_request_free(req);
	return st;
}

static const size_t sizes[] = { 1, 64, 1000, 4096, 8192, 16384, 65536, 262144, 1 << 20, 4 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void tag_messages(unsigned char *buf)
{
	ucp_request_param_t p = { 0 };
	char what[80];

	for (size_t s = 0; s < NSIZES && sizes[s] <= max_len; s++) {
		size_t len = sizes[s];
		int ok = 1, done;

		for (int r = 0; r < rounds; r++) {
			for (int from = 0; from < 2; from++) {
				if (from == is_server) {
					fill(buf, from, len, r);
					ok &= wait_for(ucp_tag_send_nbx(ep, buf, len, s, &p)) == UCS_OK;
				} else {
					memset(buf, 0, len);
					done = wait_for(ucp_tag_recv_nbx(worker, buf, len, s, ~0ull, &p)) == UCS_OK;
					ok &= delivered(done, intact(buf, from, len, r));
				}
			}
		}
		snprintf(what, sizeof(what), "tag send/recv %zu bytes, %d rounds each way", len, rounds);
		check(ok, what);
	}
}

static void stream_messages(unsigned char *buf)
{
	ucp_request_param_t p = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_STREAM_RECV_FLAG_WAITALL };
	ucp_request_param_t sp = { 0 };
	char what[80];
	const size_t len = max_len < (1 << 20) ? max_len : 1 << 20;
	int ok = 1;

	for (int r = 0; r < rounds; r++) {
		if (!is_server) {
			fill(buf, 0, len, r);
			ok &= wait_for(ucp_stream_send_nbx(ep, buf, len, &sp)) == UCS_OK;
		} else {
			size_t got = 0;
			int done;

			memset(buf, 0, len);
			done = wait_for(ucp_stream_recv_nbx(ep, buf, len, &got, &p)) == UCS_OK;
			ok &= delivered(done, intact(buf, 0, len, r));
		}
	}
	snprintf(what, sizeof(what), "stream: %zu-byte messages %s", len, is_server ? "received intact" : "sent");
	check(ok, what);
}

/* The server's memory, which the client writes, reads and adds to. */
static void rma_and_atomics(unsigned char *buf)
{
	ucp_request_param_t p = { 0 };
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.address = buf,
		.length = CHECK_MAXLEN,
	};
	ucp_mem_h mem;
	char what[80];

	if (ucp_mem_map(context, &mp, &mem) != UCS_OK)
		die("ucp_mem_map");
	if (is_server) {
		uint64_t addr = (uintptr_t)buf;
		void *rkey;
		size_t rkey_len;

		ucp_rkey_pack(context, mem, &rkey, &rkey_len);
		oob_send(&addr, sizeof(addr));
		oob_send(rkey, rkey_len);
		ucp_rkey_buffer_release(rkey);
		rma_target(buf, sizes, NSIZES, "put");
	} else {
		uint64_t *addr = oob_recv(), remote = *addr, v, want;
		void *packed = oob_recv();
		unsigned char *local = malloc(CHECK_MAXLEN);
		ucp_rkey_h rkey;
		int done, right;

		if (ucp_ep_rkey_unpack(ep, packed, &rkey) != UCS_OK)
			die("ucp_ep_rkey_unpack");
		for (size_t s = 0; s < NSIZES && sizes[s] <= max_len; s++) {
			size_t len = sizes[s];

			fill(local, 1, len, 0);
			done = wait_for(ucp_put_nbx(ep, local, len, remote, rkey, &p)) == UCS_OK &&
			       wait_for(ucp_ep_flush_nbx(ep, &p)) == UCS_OK;
			snprintf(what, sizeof(what), "put of %zu bytes completed", len);
			check(done, what);
			barrier_with(done);
			barrier();
			memset(local, 0, len);
			done = wait_for(ucp_get_nbx(ep, local, len, remote, rkey, &p)) == UCS_OK;
			snprintf(what, sizeof(what), "get of %zu bytes intact", len);
			check(delivered(done, intact(local, 0, len, 1)), what);
		}
		barrier();
		barrier();
		/* add, then fetch-and-add, then a compare-and-swap that fails and one that succeeds */
		done = right = 1;
		v = 1;
		for (int i = 0; i < 100 * rounds; i++)
			done &= wait_for(ucp_atomic_op_nbx(ep, UCP_ATOMIC_OP_ADD, &v, 1, remote, rkey,
							   &(ucp_request_param_t){
								 .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
								 .datatype = ucp_dt_make_contig(8) })) == UCS_OK;
		done &= wait_for(ucp_ep_flush_nbx(ep, &p)) == UCS_OK;
		for (int i = 0; i < 100 * rounds; i++) {
			uint64_t old = 0;

			v = 2;
			done &= wait_for(ucp_atomic_op_nbx(ep, UCP_ATOMIC_OP_ADD, &v, 1, remote, rkey,
							   &(ucp_request_param_t){
								 .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
										 UCP_OP_ATTR_FIELD_REPLY_BUFFER,
								 .datatype = ucp_dt_make_contig(8),
								 .reply_buffer = &old })) == UCS_OK;
			right &= old == 100ull * rounds + 2ull * i;
		}
		want = 3ull * 100 * rounds;
		for (int i = 0; i < 2; i++) {
			/* compare with 0 (fails), then with want; both return want */
			uint64_t compare = i ? want : 0, old = 0xdead0000ull + want;

			done &= wait_for(ucp_atomic_op_nbx(ep, UCP_ATOMIC_OP_CSWAP, &compare, 1, remote, rkey,
							   &(ucp_request_param_t){
								 .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
										 UCP_OP_ATTR_FIELD_REPLY_BUFFER,
								 .datatype = ucp_dt_make_contig(8),
								 .reply_buffer = &old })) == UCS_OK;
			right &= old == want;
		}
		done &= wait_for(ucp_ep_flush_nbx(ep, &p)) == UCS_OK;
		snprintf(what, sizeof(what), "%d adds, %d fetch-and-adds, 2 compare-and-swaps", 100 * rounds,
			 100 * rounds);
		check(delivered(done, right), what);
		barrier_with(done);
		ucp_rkey_destroy(rkey);
		free(addr);
		free(packed);
		free(local);
	}
	barrier();
	ucp_mem_unmap(context, mem);
}

int main(int argc, char **argv)
{
	ucp_params_t params = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_STREAM | UCP_FEATURE_RMA | UCP_FEATURE_AMO64,
	};
	ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				   .thread_mode = UCS_THREAD_MODE_SINGLE };
	ucp_ep_params_t epp = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS };
	int opt;
	ucp_address_t *addr;
	size_t addr_len;
	unsigned char *buf;
	void *close_req;

	port = 13340;
	while ((opt = getopt(argc, argv, "p:r:m:w")) != -1)
		if (!check_option(opt))
			die("usage: ucp_check -p PORT [-r ROUNDS] [-m MAX] [-w] [SERVER]");
	is_server = optind >= argc;
	oob_connect(is_server ? NULL : argv[optind]);
	if (sleepy)
		params.features |= UCP_FEATURE_WAKEUP;

	if (ucp_init(&params, NULL, &context) != UCS_OK || ucp_worker_create(context, &wp, &worker) != UCS_OK ||
	    ucp_worker_get_address(worker, &addr, &addr_len) != UCS_OK ||
	    (sleepy && ucp_worker_get_efd(worker, &efd) != UCS_OK))
		die("UCP setup");
	oob_send(addr, addr_len);
	epp.address = oob_recv();
	if (ucp_ep_create(worker, &epp, &ep) != UCS_OK)
		die("ucp_ep_create");
	ucp_worker_release_address(worker, addr);

	buf = aligned_alloc(4096, CHECK_MAXLEN);
	tag_messages(buf);
	barrier();
	stream_messages(buf);
	barrier();
	rma_and_atomics(buf);

	close_req = ucp_ep_close_nb(ep, UCP_EP_CLOSE_MODE_FLUSH);
	wait_for(close_req);
	barrier();
	report();
	free(buf);
	ucp_worker_destroy(worker);
	ucp_cleanup(context);
	return failed != 0;
}
