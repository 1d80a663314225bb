// SPDX-License-Identifier: GPL-2.0
/*
 * A RoCEv2 packet injector: sends malformed packets to UDP port 4791 of a
 * peer through a raw IPv4 socket, building every header itself so that the
 * ICRC is exactly right (or exactly wrong) over what goes on the wire.
 *
 *   inject DST SRC QPN PSN COUNT [SEED]
 *
 * QPN and PSN are a live RC QP on DST and its first expected PSN: packets
 * aimed at it carry PSNs at least 2^23 - 2^20 away, so that none can ever be
 * the one it expects, however far the real traffic has moved it. Kinds, in
 * turn: truncated UDP payloads; a bad ICRC; unknown opcodes; unknown QPNs;
 * requests far out of the PSN window; lying lengths (pad beyond the payload,
 * headers cut short, payloads beyond the MTU or not whole words, a UDP
 * length past the end);
 * RDMA READs of random rkeys and lengths; atomics at unaligned addresses;
 * stray responses. Prints how many of each it sent; exits 0 if it sent them.
 *
 *   inject --read DST SRC QPN PSN COUNT RKEY VA LEN
 *
 * The READ flood: COUNT valid RDMA READ requests in sequence from PSN on,
 * each for LEN bytes at VA of the MR of RKEY (a path MTU of 1024 assumed),
 * as fast as the socket takes them, never waiting for a response.
 *
 *   inject --one DST SRC QPN PSN OPCODE RKEY VA LEN PAYLOAD
 *
 * One request of OPCODE (a number) at PSN, from SRC, which need not be this
 * host's address: a RETH of RKEY, VA and LEN if the opcode has one, then
 * PAYLOAD bytes of 0xa5.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ROCE_PORT 4791
#define IP_LEN 20
#define UDP_LEN 8
#define BTH_LEN 12
#define ICRC_LEN 4
#define MAX_PKT 4200
#define FAR 0x700000		/* 2^23 - 2^20 */

enum {
	SEND_ONLY = 0x04, WRITE_FIRST = 0x06, WRITE_ONLY = 0x0a, WRITE_ONLY_IMM = 0x0b,
	READ_REQUEST = 0x0c,
	READ_RESPONSE_FIRST = 0x0d, ACK = 0x11, ATOMIC_ACK = 0x12, CMP_SWAP = 0x13,
	SEND_ONLY_INV = 0x17,
};

enum kind {
	TRUNCATED, BAD_ICRC, UNKNOWN_OPCODE, UNKNOWN_QPN, FAR_PSN, LYING_LENGTH,
	READ_RANDOM_RKEY, UNALIGNED_ATOMIC, STRAY_RESPONSE, KINDS
};

static const char *const kind_names[KINDS] = {
	"truncated UDP payload", "bad ICRC", "unknown opcode", "unknown QPN",
	"request far out of the PSN window", "lying length", "RDMA READ of a random rkey",
	"atomic at an unaligned address", "stray response",
};

static uint64_t rng;
static uint32_t crc_table[256];
static struct in_addr dst, src;
static uint32_t victim_qpn, victim_psn;

static uint32_t rand32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng >> 16;
}

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320 ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc_update(uint32_t c, const uint8_t *p, size_t n)
{
	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

/*
 * The ICRC of the packet @p of @len bytes (IP header on): the CRC-32 of 8
 * bytes of 0xff and the packet up to the ICRC, with TOS, TTL, IP checksum,
 * UDP checksum and the BTH's FECN/BECN byte read as all ones.
 */
static uint32_t icrc(const uint8_t *p, size_t len)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t h[IP_LEN + UDP_LEN + BTH_LEN];
	uint32_t c = 0xffffffff;

	memcpy(h, p, sizeof(h));
	h[1] = h[8] = h[10] = h[11] = 0xff;
	h[IP_LEN + 6] = h[IP_LEN + 7] = 0xff;
	h[IP_LEN + UDP_LEN + 4] = 0xff;
	c = crc_update(c, ones, sizeof(ones));
	c = crc_update(c, h, sizeof(h));
	c = crc_update(c, p + sizeof(h), len - ICRC_LEN - sizeof(h));
	return ~c;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put24(uint8_t *p, uint32_t v) { p[0] = v >> 16; p[1] = v >> 8; p[2] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, v); }

/*
 * Builds IP, UDP and BTH headers for @opcode to @qpn at @psn with @pad pad
 * bytes, followed by @body_len bytes already at p + 40 and an ICRC; returns
 * the packet's length.
 */
static size_t build(uint8_t *p, uint8_t opcode, uint32_t qpn, uint32_t psn, int pad,
		    size_t body_len)
{
	size_t len = IP_LEN + UDP_LEN + BTH_LEN + body_len + ICRC_LEN;
	uint8_t *ip = p, *udp = p + IP_LEN, *bth = udp + UDP_LEN;
	uint32_t crc;

	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, len);
	put16(ip + 4, 1 + rand32() % 0xfffe);	/* not 0: the kernel would pick one */
	put16(ip + 6, 0x4000);			/* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	put16(ip + 10, 0);			/* the kernel fills the checksum in */
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	put16(udp, 0xc000 | (rand32() & 0x3fff));
	put16(udp + 2, ROCE_PORT);
	put16(udp + 4, len - IP_LEN);
	put16(udp + 6, 0);			/* no checksum, as RoCEv2 allows */
	bth[0] = opcode;
	bth[1] = (pad & 3) << 4;		/* SE 0, M 0, pad, TVer 0 */
	put16(bth + 2, 0xffff);
	bth[4] = 0;
	put24(bth + 5, qpn);
	bth[8] = 0x80;				/* AckReq */
	put24(bth + 9, psn);
	crc = icrc(p, len);
	memcpy(p + len - ICRC_LEN, &crc, 4);	/* least significant byte first */
	return len;
}

static uint32_t far_psn(void)
{
	return (victim_psn + FAR + rand32() % (2 * (0x800000 - FAR))) & 0xffffff;
}

static uint8_t *body(uint8_t *p)
{
	return p + IP_LEN + UDP_LEN + BTH_LEN;
}

/* A packet of @kind in @p; returns its length. */
static size_t make(uint8_t *p, enum kind kind)
{
	uint8_t *b = body(p);
	/* Payloads are whole 32-bit words, as RoCE wants, unless lying. */
	size_t len, n = rand32() % 1024 & ~3;

	for (size_t i = 0; i < n; i++)
		b[i] = rand32();
	switch (kind) {
	case TRUNCATED:
		len = build(p, SEND_ONLY, victim_qpn, far_psn(), 0, n);
		len = IP_LEN + UDP_LEN + rand32() % (BTH_LEN + ICRC_LEN);
		put16(p + 2, len);
		put16(p + IP_LEN + 4, len - IP_LEN);
		return len;
	case BAD_ICRC:
		len = build(p, SEND_ONLY, victim_qpn, far_psn(), 0, n);
		p[len - 1 - rand32() % ICRC_LEN] ^= 1 + rand32() % 255;
		return len;
	case UNKNOWN_OPCODE: {
		static const uint8_t unknown[] = { 0x15, 0x18, 0x19, 0x1f, 0x3f, 0x5f, 0x7f, 0x9f,
						   0xc0, 0xdf, 0xff };

		return build(p, unknown[rand32() % sizeof(unknown)], victim_qpn, far_psn(), 0, n);
	}
	case UNKNOWN_QPN:
		return build(p, SEND_ONLY, 0x10000 + rand32() % 0xff0000, rand32(), 0, n);
	case FAR_PSN: {
		static const uint8_t ops[] = { SEND_ONLY, WRITE_ONLY, SEND_ONLY_INV };
		uint8_t op = ops[rand32() % sizeof(ops)];

		/* RETH or IETH first, as the opcode wants; the rest random. */
		return build(p, op, victim_qpn, far_psn(), 0, op == WRITE_ONLY ? n + 16 : n + 4);
	}
	case LYING_LENGTH:
		switch (rand32() % 5) {
		case 0:		/* pad bytes beyond the payload */
			return build(p, SEND_ONLY, victim_qpn, far_psn(), 3, rand32() % 3);
		case 4:		/* a payload that is not whole words */
			return build(p, SEND_ONLY, victim_qpn, far_psn(), 0, n + 1 + rand32() % 3);
		case 1:		/* a RETH cut short */
			return build(p, WRITE_FIRST, victim_qpn, far_psn(), 0, rand32() % 16);
		case 2:		/* a payload beyond the path MTU (1024) */
			for (size_t i = 0; i < 1400; i++)
				b[i] = rand32();
			return build(p, SEND_ONLY, victim_qpn, far_psn(), 0, 1100 + rand32() % 300);
		default:	/* a UDP length past the end of the IP packet */
			len = build(p, SEND_ONLY, victim_qpn, far_psn(), 0, n);
			put16(p + IP_LEN + 4, len - IP_LEN + 1 + rand32() % 1000);
			return len;
		}
	case READ_RANDOM_RKEY:
		put64(b, ((uint64_t)rand32() << 32) | rand32());
		put32(b + 8, rand32());
		put32(b + 12, rand32() % (1 << 21));
		return build(p, READ_REQUEST, victim_qpn, far_psn(), 0, 16);
	case UNALIGNED_ATOMIC:
		put64(b, (((uint64_t)rand32() << 32) | rand32()) | (1 + rand32() % 7));
		put32(b + 8, rand32());
		return build(p, CMP_SWAP, victim_qpn, far_psn(), 0, 28);
	case STRAY_RESPONSE: {
		static const uint8_t ops[] = { ACK, ATOMIC_ACK, READ_RESPONSE_FIRST };
		uint8_t op = ops[rand32() % sizeof(ops)];

		return build(p, op, victim_qpn, rand32(), 0, op == ATOMIC_ACK ? 12 : n + 4);
	}
	default:
		return 0;
	}
}

static int open_raw(void)
{
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);

	if (fd < 0)
		perror("socket");
	return fd;
}

/* Sends the packet @p of @len bytes; counts the times the socket was full. */
static int send_packet(int fd, const uint8_t *p, size_t len, unsigned long *blocked)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = dst };

	while (sendto(fd, p, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
		if (errno != ENOBUFS && errno != EAGAIN) {
			perror("sendto");
			return -1;
		}
		(*blocked)++;
		usleep(1000);
	}
	return 0;
}

static int read_flood(char **argv)
{
	static uint8_t pkt[MAX_PKT];
	unsigned long count = strtoul(argv[4], NULL, 0), blocked = 0, n;
	uint32_t psn = strtoul(argv[3], NULL, 0) & 0xffffff, rkey = strtoul(argv[5], NULL, 0);
	uint64_t va = strtoull(argv[6], NULL, 0);
	uint32_t len = strtoul(argv[7], NULL, 0), npsn = len ? (len + 1023) / 1024 : 1;
	int fd = open_raw();

	if (fd < 0)
		return 1;
	printf("# %lu READs of %u bytes to %s QPN %#x from PSN %#x\n", count, len,
	       inet_ntoa(dst), victim_qpn, psn);
	for (n = 0; n < count; n++, psn = (psn + npsn) & 0xffffff) {
		put64(body(pkt), va);
		put32(body(pkt) + 8, rkey);
		put32(body(pkt) + 12, len);
		if (send_packet(fd, pkt, build(pkt, READ_REQUEST, victim_qpn, psn, 0, 16),
				&blocked))
			return 1;
		/* A breath now and then, so that the link itself loses none. */
		if (n % 64 == 63)
			usleep(1000);
	}
	printf("# %lu READ requests sent (%lu times the socket was full)\n", n, blocked);
	close(fd);
	return 0;
}

static int one(char **argv)
{
	static uint8_t pkt[MAX_PKT];
	uint32_t psn = strtoul(argv[1], NULL, 0) & 0xffffff;
	uint8_t opcode = strtoul(argv[2], NULL, 0);
	uint32_t rkey = strtoul(argv[3], NULL, 0), len = strtoul(argv[5], NULL, 0);
	uint64_t va = strtoull(argv[4], NULL, 0);
	size_t payload = strtoul(argv[6], NULL, 0), reth = 0;
	unsigned long blocked = 0;
	int fd = open_raw();

	if (fd < 0 || payload > 4096)
		return 1;
	if (opcode == WRITE_FIRST || opcode == WRITE_ONLY || opcode == WRITE_ONLY_IMM ||
	    opcode == READ_REQUEST) {
		put64(body(pkt), va);
		put32(body(pkt) + 8, rkey);
		put32(body(pkt) + 12, len);
		reth = 16;
	}
	memset(body(pkt) + reth, 0xa5, payload);
	printf("# opcode %#x to %s QPN %#x PSN %#x from %s: rkey %#x va %#llx length %#x, "
	       "%zu bytes\n", opcode, inet_ntoa(dst), victim_qpn, psn, argv[-1], rkey,
	       (unsigned long long)va, len, payload);
	if (send_packet(fd, pkt, build(pkt, opcode, victim_qpn, psn, 0, reth + payload),
			&blocked))
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t pkt[MAX_PKT];
	unsigned long sent[KINDS] = { 0 }, count, total = 0, blocked = 0;
	int fd;

	if (argc == 10 && !strcmp(argv[1], "--read") && inet_aton(argv[2], &dst) &&
	    inet_aton(argv[3], &src)) {
		victim_qpn = strtoul(argv[4], NULL, 0) & 0xffffff;
		rng = 0x72656164ULL;
		crc_init();
		return read_flood(argv + 2);
	}
	if (argc == 11 && !strcmp(argv[1], "--one") && inet_aton(argv[2], &dst) &&
	    inet_aton(argv[3], &src)) {
		victim_qpn = strtoul(argv[4], NULL, 0) & 0xffffff;
		rng = 0x6f6e65ULL;
		crc_init();
		return one(argv + 4);
	}
	if (argc < 6 || !inet_aton(argv[1], &dst) || !inet_aton(argv[2], &src)) {
		fprintf(stderr, "usage: %s DST SRC QPN PSN COUNT [SEED]\n"
			"       %s --read DST SRC QPN PSN COUNT RKEY VA LEN\n"
			"       %s --one DST SRC QPN PSN OPCODE RKEY VA LEN PAYLOAD\n", argv[0],
			argv[0], argv[0]);
		return 2;
	}
	victim_qpn = strtoul(argv[3], NULL, 0) & 0xffffff;
	victim_psn = strtoul(argv[4], NULL, 0) & 0xffffff;
	count = strtoul(argv[5], NULL, 0);
	rng = argc > 6 ? strtoull(argv[6], NULL, 0) : 0x696e6a656374ULL;
	crc_init();
	fd = open_raw();
	if (fd < 0)
		return 1;
	printf("# to %s QPN %#x (first PSN %#x), %lu packets, seed %#llx\n", argv[1], victim_qpn,
	       victim_psn, count, (unsigned long long)rng);
	while (total < count) {
		enum kind kind = total % KINDS;
		size_t len = make(pkt, kind);

		if (send_packet(fd, pkt, len, &blocked))
			return 1;
		sent[kind]++;
		total++;
		/* Leave the link room for the real traffic. */
		if (total % 64 == 0)
			usleep(2000);
	}
	for (int k = 0; k < KINDS; k++)
		printf("# %-36s %lu\n", kind_names[k], sent[k]);
	printf("# %lu packets sent (%lu times the socket was full)\n", total, blocked);
	close(fd);
	return 0;
}
