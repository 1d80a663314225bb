// SPDX-License-Identifier: GPL-2.0
/*
 * RC SENDs both ways between two hosts, every byte checked: each side sends
 * COUNT messages of SIZE bytes, up to DEPTH at a time, and checks that the
 * messages it receives are the peer's, in order, each once and intact. Message
 * i carries i in its first 8 bytes and a pattern of i in the rest, so a lost,
 * repeated, reordered or corrupted message is told apart.
 *
 * Unlike ibv_rc_pingpong, neither side destroys its QP before the other has
 * all its completions (a last TCP exchange): over a lossy link, the ACK of
 * the last message may need a retransmission that only a live QP answers.
 *
 *   rc_stream DEVICE PORT COUNT SIZE            serve, on TCP PORT
 *   rc_stream DEVICE PORT COUNT SIZE SERVER     connect to SERVER
 *
 * Both sides use the device's RoCE v2 GID of an IPv4 address, MTU 1024,
 * timeout 14 and retry_cnt 7. A side that sees no completion for 60 s gives
 * up. Exits 0 if every message went out and came in intact.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define DEPTH 16
#define IDLE_S 60

struct endpoint {
	uint32_t qpn;
	union ibv_gid gid;
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

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf, size_t size, int slot)
{
	struct ibv_sge sge = { (uintptr_t)(buf + slot * size), size, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return !ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf, size_t size,
		     uint64_t msg)
{
	uint8_t *at = buf + (msg % DEPTH) * size;
	struct ibv_sge sge = { (uintptr_t)at, size, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = DEPTH + msg % DEPTH, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	fill(at, msg, size);
	return !ibv_post_send(qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	uint64_t count, sent = 0, done = 0, received = 0;
	struct endpoint me = { 0 }, peer;
	struct ibv_context *ctx;
	double start, idle;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	uint8_t *recv_buf;
	size_t size;
	int fd, gid_index, ok;
	char bye = 1;

	if (argc < 5 || atoi(argv[4]) < 8) {
		fprintf(stderr, "usage: %s DEVICE PORT COUNT SIZE [SERVER] (SIZE >= 8)\n", argv[0]);
		return 2;
	}
	count = strtoull(argv[3], NULL, 0);
	size = atoi(argv[4]);
	ctx = open_device(argv[1]);
	gid_index = ctx ? ipv4_gid(ctx, &me.gid) : -1;
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0) : NULL;
	init.send_cq = init.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &init) : NULL;
	/* The send slots, then the receive slots. */
	uint8_t *buf = calloc(2 * DEPTH, size);
	mr = qp && buf ? ibv_reg_mr(pd, buf, 2 * DEPTH * size, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr || gid_index < 0) {
		printf("# setting up %s failed\n", argv[1]);
		return 1;
	}
	me.qpn = qp->qp_num;
	peer = me;
	fd = tcp_connect(argc > 5 ? argv[5] : NULL, argv[2]);
	ok = fd >= 0 && exchange(fd, &peer, sizeof(peer)) &&
	     connect_rc(qp, peer.qpn, &peer.gid, gid_index, 14, 7);
	/* A QP takes receives once it is out of RESET, and needs them before the peer sends. */
	recv_buf = buf + DEPTH * size;
	for (int slot = 0; ok && slot < DEPTH; slot++)
		ok = post_recv(qp, mr, recv_buf, size, slot);
	if (!ok || !exchange(fd, &bye, 1)) {
		printf("# connecting to the peer failed\n");
		return 1;
	}

	start = idle = now();
	while (ok && (done < count || received < count)) {
		struct ibv_wc wc[DEPTH];
		int n;

		while (sent < count && sent - done < DEPTH)
			if (!post_send(qp, mr, buf, size, sent++)) {
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
		for (int i = 0; i < n && ok; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				printf("# %s of message %llu: %s (%d)\n",
				       wc[i].wr_id < DEPTH ? "receive" : "send",
				       (unsigned long long)(wc[i].wr_id < DEPTH ? received : done),
				       ibv_wc_status_str(wc[i].status), wc[i].status);
				ok = 0;
			} else if (wc[i].wr_id >= DEPTH) {
				done++;
			} else {
				uint8_t *at = recv_buf + wc[i].wr_id * size;

				ok = intact(at, received, size, wc[i].byte_len) &&
				     post_recv(qp, mr, recv_buf, size, wc[i].wr_id);
				received++;
			}
		}
	}
	/* The peer may still need this QP to acknowledge its last messages. */
	ok &= exchange(fd, &bye, 1);
	if (ok)
		printf("%llu messages of %zu bytes each way in %.2f s: all intact, in order, once\n",
		       (unsigned long long)count, size, now() - start);
	close(fd);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return !ok;
}
