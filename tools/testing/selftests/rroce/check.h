/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the middleware check programs (ucp_check.c, fi_check.c) share: their
 * results, one "ok"/"not ok" line per check, and the TCP connection over
 * which their two sides swap addresses and keys and meet between checks.
 *
 * A program defines CHECK_NAME before it includes this, and the three
 * functions declared below: a wait for the peer keeps the middleware
 * progressing, which serves some of the peer's operations in software
 * (UCX's ud_verbs its puts, gets and atomics; libfabric's ofi_rxm its
 * atomics and rendezvous).
 */
#ifndef RROCE_CHECK_H
#define RROCE_CHECK_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pattern.h"

/* Whether the middleware is set up, so that a wait progresses it. */
static int check_started(void);
/* One round of the middleware's progress; true if it did anything. */
static int check_progress(void);
/* Nothing to progress: sleep until the middleware or FD (if not -1) has
 * something, or not at all (the program's choice, its -w). */
static void check_idle(int fd);

static int sock, passed, failed, wrong;

/* The options of both programs: -p PORT, -r ROUNDS, -m MAX (the largest
 * message, at most CHECK_MAXLEN; both sides must agree on it), -w (sleep
 * when there is nothing to progress). */
#define CHECK_MAXLEN (4 << 20)
static int port, rounds = 2, sleepy;
static size_t max_len = CHECK_MAXLEN;

/* Takes OPT, one of the options above, and its optarg; false if OPT is
 * not one of them. */
static int check_option(int opt)
{
	if (opt == 'p')
		port = atoi(optarg);
	else if (opt == 'r')
		rounds = atoi(optarg);
	else if (opt == 'm' && atol(optarg) > 0 && atol(optarg) <= CHECK_MAXLEN)
		max_len = atol(optarg);
	else if (opt == 'w')
		sleepy = 1;
	else
		return 0;
	return 1;
}

static void check(int ok, const char *what)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("%s %s\n", ok ? "ok" : "not ok", what);
	fflush(stdout);
}

/* DONE: the middleware completed the operation; RIGHT: its data is what
 * was sent. Wrong data, unlike an operation that failed (the middleware
 * gave up on a peer it could not reach), no fault of the link excuses. */
static int delivered(int done, int right)
{
	if (done && !right)
		wrong++;
	return done && right;
}

/* The summary line that the soak and the selftests read. */
static void report(void)
{
	printf(CHECK_NAME ": %d passed, %d failed (%d with wrong data)\n", passed, failed, wrong);
}

static void die(const char *what)
{
	fprintf(stderr, CHECK_NAME ": %s\n", what);
	exit(2);
}

static void oob_write(const void *b, size_t len)
{
	if (write(sock, b, len) != (ssize_t)len)
		die("out-of-band write");
}

static void oob_read(void *b, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(sock, (char *)b + got, len - got, check_started() ? MSG_DONTWAIT : 0);

		if (n < 0 && errno == EAGAIN) {
			if (!check_progress())
				check_idle(sock);
			continue;
		}
		if (n <= 0)
			die("out-of-band read");
		got += n;
	}
}

/* A blob of LEN bytes, its length first. */
static void oob_send(const void *b, uint64_t len)
{
	oob_write(&len, sizeof(len));
	oob_write(b, len);
}

/* The peer's blob, in memory of its own, which the caller frees. */
static void *oob_recv(void)
{
	uint64_t len;
	void *b;

	oob_read(&len, sizeof(len));
	if (len > (1 << 20) || !(b = malloc(len ? len : 1)))
		die("out-of-band blob");
	oob_read(b, len);
	return b;
}

/* Both sides have come this far; each tells the other whether its last
 * operation completed (DONE), and learns the same of the other's. */
static int barrier_with(int done)
{
	char c = done;

	oob_write(&c, 1);
	oob_read(&c, 1);
	return c;
}

static void barrier(void)
{
	barrier_with(1);
}

/* The server's side of the RMA checks, BUF its memory that the client
 * writes (WRITE names them), reads and adds to: for each of the N SIZES up
 * to max_len, it checks what was written, then fills BUF for the read; at
 * the end it zeroes the word of the atomics and checks what they left
 * (0xdead0000 + 300 per round, as the client's compare-and-swap sets it). */
static void rma_target(unsigned char *buf, const size_t *sizes, size_t n, const char *write)
{
	char what[80];
	int done;

	for (size_t s = 0; s < n && sizes[s] <= max_len; s++) {
		done = barrier_with(1);
		snprintf(what, sizeof(what), "%s of %zu bytes arrived intact", write, sizes[s]);
		check(delivered(done, intact(buf, 1, sizes[s], 0)), what);
		fill(buf, 0, sizes[s], 1);
		barrier();
	}
	/* The client's last read is done; then the word for the atomics. */
	barrier();
	memset(buf, 0, 8);
	barrier();
	done = barrier_with(1);
	snprintf(what, sizeof(what), "atomics left %#llx", (unsigned long long)*(uint64_t *)buf);
	check(delivered(done, *(uint64_t *)buf == 0xdead0000ull + 3ull * 100 * rounds), what);
}

/* The server (SERVER NULL) waits on the port for its client; the client
 * tries SERVER, an IPv4 address, for 30 s. */
static void oob_connect(const char *server)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1;

	if (!server) {
		int l = socket(AF_INET, SOCK_STREAM, 0);

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		a.sin_addr.s_addr = INADDR_ANY;
		if (bind(l, (void *)&a, sizeof(a)) || listen(l, 1))
			die("listen");
		sock = accept(l, NULL, NULL);
		close(l);
	} else {
		sock = socket(AF_INET, SOCK_STREAM, 0);
		if (inet_pton(AF_INET, server, &a.sin_addr) != 1)
			die("bad server address");
		for (int i = 0; connect(sock, (void *)&a, sizeof(a)); i++) {
			if (i == 300)
				die("connecting to the server failed");
			usleep(100000);
		}
	}
	if (sock < 0)
		die("connect");
}

#endif
