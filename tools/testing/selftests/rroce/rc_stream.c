// SPDX-License-Identifier: GPL-2.0
/*
 * RC (or UC) traffic both ways between two hosts, every byte checked: each
 * side sends COUNT messages of SIZE bytes, up to DEPTH at a time, and checks
 * that the messages it receives are the peer's, in order, each once and
 * intact. Message i carries i in its first 8 bytes and a pattern of i in the
 * rest, so a lost, repeated, reordered or corrupted message is told apart.
 *
 * -o OP picks how a message travels:
 *   send       a SEND into one of the peer's posted receives (the default);
 *   write-imm  an RDMA WRITE with immediate into the peer's receive slot
 *              i % SLOTS, the immediate naming i: the peer checks the slot
 *              when the receive completes;
 *   write      an RDMA WRITE into the peer's slot i % SLOTS. Once both sides
 *              have all their completions (the last TCP exchange), each
 *              checks the last SLOTS messages the peer wrote: the completion
 *              of a WRITE must mean its bytes are in the responder's memory,
 *              as MPI_Put followed by MPI_Win_fence takes it to;
 *   read       an RDMA READ of the peer's source slot i % DEPTH (which holds
 *              message i % DEPTH from the start) into a local slot filled
 *              with 0xa5 before, checked when the READ completes;
 *   fetch-add  a fetch-and-add of 1 to the peer's counter, which only this
 *              side adds to: the value fetched must be i, and once both
 *              sides have all their completions, each checks that its own
 *              counter is COUNT (an atomic sent again after a loss must be
 *              answered from the responder's memory of it, not done twice).
 *
 * -p PSN starts both directions' PSNs at PSN (0x100 by default), e.g. just
 * before the 24-bit wrap. -t uc uses a UC QP (send, write-imm and write
 * only): with no retransmission, a lost or dropped message fails the run,
 * and as nothing paces the sender by the receives the peer has posted,
 * COUNT must not exceed 16 for send and write-imm. -T TIMEOUT sets the
 * QP's local ACK timeout (4.096 us << TIMEOUT; 14, 67 ms, by default), e.g.
 * longer than a deep queue on the way delays an ACK.
 *
 * -e waits for completions on a completion channel rather than polling the
 * CQ without pause, so that on one CPU the kernel's own work (soft RoCE's,
 * and that of other users of the device) keeps its share.
 *
 * Unlike ibv_rc_pingpong, neither side destroys its QP before the other has
 * all its completions (a last TCP exchange): over a lossy link, the ACK of
 * the last message may need a retransmission that only a live QP answers.
 *
 *   rc_stream [-e] [-o OP] [-p PSN] [-t uc] [-T TIMEOUT] DEVICE PORT COUNT SIZE    serve
 *   rc_stream [-e] [-o OP] [-p PSN] [-t uc] [-T TIMEOUT] DEVICE PORT COUNT SIZE SERVER  connect
 *
 * The server listens on TCP PORT. Both sides use the device's RoCE v2 GID of
 * an IPv4 address, MTU 1024 and retry_cnt 7. A side that sees no completion for 60 s gives
 * up. Exits 0 if every message went out and came in intact.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define DEPTH 16
/*
 * Receive slots. A WRITE places its data before it takes the receive its
 * immediate completes, and a writer can have DEPTH messages out beyond the
 * DEPTH receives posted ahead of the slot checked next: twice DEPTH slots
 * keep a slot from being written again before it is checked.
 */
#define SLOTS (2 * DEPTH)
#define IDLE_S 60

enum op { OP_SEND, OP_WRITE_IMM, OP_WRITE, OP_READ, OP_FETCH_ADD };

struct endpoint {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
	union ibv_gid gid;
};

/*
 * The registered buffer: the send slots (in read mode, the source slots the
 * peer reads), then the receive slots (in read mode, where READs land, in
 * fetch-add mode the values fetched), then the counter the peer adds to.
 */
struct slots {
	struct ibv_mr *mr;
	uint8_t *send;
	uint8_t *recv;
	uint64_t *counter;
	size_t size;
};

static int tcp_connect(const char *server, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	int one = 1, fd, s;

	if (getaddrinfo(server, port, &hints, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd >= 0 && server) {
		if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			close(fd);
			fd = -1;
		}
	} else if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		s = fd;
		fd = bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1) ? -1 :
			accept(s, NULL, NULL);
		close(s);
	}
	freeaddrinfo(ai);
	return fd;
}

/* Sends @len bytes of @buf to the peer and reads as many back into @buf. */
static int exchange(int fd, void *buf, size_t len)
{
	char peer[64];

	if (len > sizeof(peer) || write(fd, buf, len) != (ssize_t)len)
		return 0;
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, peer + got, len - got);

		if (n <= 0)
			return 0;
		got += n;
	}
	memcpy(buf, peer, len);
	return 1;
}

static uint8_t pattern(uint64_t msg, size_t at)
{
	return (uint8_t)(msg * 131 + at * 7 + (at >> 8));
}

static void fill(uint8_t *buf, uint64_t msg, size_t size)
{
	memcpy(buf, &msg, sizeof(msg));
	for (size_t at = sizeof(msg); at < size; at++)
		buf[at] = pattern(msg, at);
}

/* Whether @buf holds message @msg of @size bytes; says why not. */
static int intact(const uint8_t *buf, uint64_t msg, size_t size, uint32_t byte_len)
{
	uint64_t got;

	memcpy(&got, buf, sizeof(got));
	if (byte_len != size || got != msg) {
		printf("# message %llu: got message %llu of %u bytes\n",
		       (unsigned long long)msg, (unsigned long long)got, byte_len);
		return 0;
	}
	for (size_t at = sizeof(msg); at < size; at++)
		if (buf[at] != pattern(msg, at)) {
			printf("# message %llu: byte %zu is %#x, not %#x\n", (unsigned long long)msg,
			       at, buf[at], pattern(msg, at));
			return 0;
		}
	return 1;
}

/* Whether the fetch-and-add of message @msg fetched @msg; says why not. */
static int fetched(const uint8_t *at, uint64_t msg)
{
	uint64_t got;

	memcpy(&got, at, sizeof(got));
	if (got != msg)
		printf("# fetch-and-add %llu fetched %#llx\n", (unsigned long long)msg,
		       (unsigned long long)got);
	return got == msg;
}

static int post_recv(struct ibv_qp *qp, const struct slots *b, int slot)
{
	struct ibv_sge sge = { (uintptr_t)(b->recv + slot * b->size), b->size, b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return !ibv_post_recv(qp, &wr, &bad);
}

/* Message @msg to the peer at @peer, as @op has it travel. */
static int post_send(struct ibv_qp *qp, const struct slots *b, enum op op,
		     const struct endpoint *peer, uint64_t msg)
{
	uint8_t *at = (op == OP_READ || op == OP_FETCH_ADD ? b->recv : b->send) +
		      (msg % DEPTH) * b->size;
	struct ibv_sge sge = { (uintptr_t)at, b->size, b->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = DEPTH + msg % DEPTH, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == OP_WRITE_IMM || op == OP_WRITE) {
		wr.opcode = op == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl((uint32_t)msg);
		wr.wr.rdma.remote_addr = peer->addr + DEPTH * b->size + (msg % SLOTS) * b->size;
		wr.wr.rdma.rkey = peer->rkey;
	} else if (op == OP_FETCH_ADD) {
		sge.length = sizeof(uint64_t);
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = peer->addr + ((uint8_t *)b->counter - b->send);
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.rkey = peer->rkey;
		memset(at, 0xa5, sizeof(uint64_t));
		return !ibv_post_send(qp, &wr, &bad);
	} else if (op == OP_READ) {
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = peer->addr + (msg % DEPTH) * b->size;
		wr.wr.rdma.rkey = peer->rkey;
		memset(at, 0xa5, b->size);
		return !ibv_post_send(qp, &wr, &bad);
	}
	fill(at, msg, b->size);
	return !ibv_post_send(qp, &wr, &bad);
}

/*
 * Checks what completion @wc brought as message @msg, and gives its receive
 * back; false, saying why, if it is not that message, intact.
 */
static int check_recv(struct ibv_qp *qp, const struct slots *b, enum op op,
		      const struct ibv_wc *wc, uint64_t msg)
{
	int slot = wc->wr_id;

	if (op == OP_WRITE_IMM) {
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc->wc_flags & IBV_WC_WITH_IMM) ||
		    ntohl(wc->imm_data) != (uint32_t)msg) {
			printf("# message %llu: a receive of opcode %d, immediate %u\n",
			       (unsigned long long)msg, wc->opcode, ntohl(wc->imm_data));
			return 0;
		}
		slot = msg % SLOTS;
	}
	return intact(b->recv + slot * b->size, msg, b->size, wc->byte_len) &&
	       post_recv(qp, b, wc->wr_id);
}

/*
 * Sleeps until the CQ's completion channel signals (or a second passes),
 * then arms the CQ again; the caller polls the CQ next, which takes what
 * came before the arming.
 */
static void wait_event(struct ibv_comp_channel *channel, struct ibv_cq *cq)
{
	struct pollfd p = { .fd = channel->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&p, 1, 1000) > 0 && !ibv_get_cq_event(channel, &ev_cq, &ev_ctx)) {
		ibv_ack_cq_events(ev_cq, 1);
		ibv_req_notify_cq(cq, 0);
	}
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	static const char *const ops[] = { "send", "write-imm", "write", "read", "fetch-add" };
	uint64_t count, sent = 0, done = 0, received = 0;
	struct endpoint me = { 0 }, peer;
	struct ibv_context *ctx;
	struct slots b = { 0 };
	enum op op = OP_SEND;
	double start, idle;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	int fd, gid_index, ok, opt, timeout = 14, events = 0;
	struct ibv_comp_channel *channel = NULL;
	size_t counter_at;
	char bye = 1;

	while ((opt = getopt(argc, argv, "eo:p:t:T:")) != -1) {
		if (opt == 'e') {
			events = 1;
			continue;
		}
		if (opt == 'p') {
			first_psn = strtoul(optarg, NULL, 0) & 0xffffff;
			continue;
		}
		if (opt == 'T') {
			timeout = atoi(optarg) & 0x1f;
			continue;
		}
		if (opt == 't') {
			init.qp_type = strcmp(optarg, "uc") ? IBV_QPT_RC : IBV_QPT_UC;
			continue;
		}
		for (op = OP_SEND; opt == 'o' && op <= OP_FETCH_ADD && strcmp(optarg, ops[op]); op++)
			;
		if (opt != 'o' || op > OP_FETCH_ADD)
			argc = 0;
	}
	argv += optind;
	argc -= optind;
	if (argc < 4 || atoi(argv[3]) < 8 ||
	    (init.qp_type == IBV_QPT_UC && (op == OP_READ || op == OP_FETCH_ADD))) {
		fprintf(stderr, "usage: rc_stream [-e] [-o send|write-imm|write|read|fetch-add] [-p PSN]"
			" [-t uc] [-T TIMEOUT] DEVICE PORT COUNT SIZE [SERVER] (SIZE >= 8; UC: no read,"
			" fetch-add)\n");
		return 2;
	}
	count = strtoull(argv[2], NULL, 0);
	b.size = atoi(argv[3]);
	ctx = open_device(argv[0]);
	gid_index = ctx ? ipv4_gid(ctx, &me.gid) : -1;
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	channel = pd && events ? ibv_create_comp_channel(ctx) : NULL;
	cq = pd && (channel || !events) ? ibv_create_cq(ctx, 2 * DEPTH, NULL, channel, 0) : NULL;
	if (cq && channel && ibv_req_notify_cq(cq, 0))
		cq = NULL;
	init.send_cq = init.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &init) : NULL;
	/* The counter after the slots, 8-byte aligned as atomics want. */
	counter_at = ((DEPTH + SLOTS) * b.size + 7) & ~(size_t)7;
	b.send = calloc(counter_at + sizeof(uint64_t), 1);
	b.recv = b.send + DEPTH * b.size;
	b.counter = (uint64_t *)(b.send + counter_at);
	b.mr = qp && b.send ? ibv_reg_mr(pd, b.send, counter_at + sizeof(uint64_t),
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	if (!b.mr || gid_index < 0) {
		printf("# setting up %s failed\n", argv[0]);
		return 1;
	}
	/* What the peer reads: message s in source slot s. */
	for (int slot = 0; op == OP_READ && slot < DEPTH; slot++)
		fill(b.send + slot * b.size, slot, b.size);
	me.qpn = qp->qp_num;
	me.rkey = b.mr->rkey;
	me.addr = (uintptr_t)b.send;
	peer = me;
	fd = tcp_connect(argc > 4 ? argv[4] : NULL, argv[1]);
	ok = fd >= 0 && exchange(fd, &peer, sizeof(peer)) &&
	     connect_rc(qp, peer.qpn, &peer.gid, gid_index, timeout, 7);
	/* A QP takes receives once it is out of RESET, and needs them before the peer sends. */
	for (int slot = 0; ok && slot < DEPTH; slot++)
		ok = post_recv(qp, &b, slot);
	if (!ok || !exchange(fd, &bye, 1)) {
		printf("# connecting to the peer failed\n");
		return 1;
	}

	/* Nothing comes into a receive. */
	if (op == OP_WRITE || op == OP_READ || op == OP_FETCH_ADD)
		received = count;
	start = idle = now();
	while (ok && (done < count || received < count)) {
		struct ibv_wc wc[DEPTH];
		int n;

		while (sent < count && sent - done < DEPTH)
			if (!post_send(qp, &b, op, &peer, sent++)) {
				printf("# posting message %llu failed\n", (unsigned long long)sent);
				ok = 0;
			}
		n = ibv_poll_cq(cq, DEPTH, wc);
		if (n < 0 || (n == 0 && now() - idle > IDLE_S)) {
			printf("# no completion for %d s: %llu sent, %llu received\n", IDLE_S,
			       (unsigned long long)done, (unsigned long long)received);
			ok = 0;
		}
		if (n > 0)
			idle = now();
		else if (n == 0 && channel)
			wait_event(channel, cq);
		for (int i = 0; i < n && ok; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				printf("# %s of message %llu: %s (%d)\n",
				       wc[i].wr_id < DEPTH ? "receive" : ops[op],
				       (unsigned long long)(wc[i].wr_id < DEPTH ? received : done),
				       ibv_wc_status_str(wc[i].status), wc[i].status);
				ok = 0;
			} else if (wc[i].wr_id < DEPTH) {
				ok = check_recv(qp, &b, op, &wc[i], received++);
			} else if (op == OP_READ) {
				ok = intact(b.recv + (done % DEPTH) * b.size, done % DEPTH, b.size,
					    wc[i].byte_len);
				done++;
			} else if (op == OP_FETCH_ADD) {
				ok = fetched(b.recv + (done % DEPTH) * b.size, done);
				done++;
			} else {
				done++;
			}
		}
	}
	/* The peer may still need this QP to acknowledge its last messages. */
	ok &= exchange(fd, &bye, 1);
	for (uint64_t msg = count > SLOTS ? count - SLOTS : 0; ok && op == OP_WRITE && msg < count;
	     msg++)
		ok = intact(b.recv + (msg % SLOTS) * b.size, msg, b.size, b.size);
	if (ok && op == OP_FETCH_ADD && *b.counter != count) {
		printf("# the peer's adds left the counter at %llu, not %llu\n",
		       (unsigned long long)*b.counter, (unsigned long long)count);
		ok = 0;
	}
	if (ok)
		printf("%llu messages of %zu bytes each way in %.2f s: all intact, in order, once\n",
		       (unsigned long long)count, b.size, now() - start);
	close(fd);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(b.mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(b.send);
	return !ok;
}
