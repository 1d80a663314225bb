// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI program whose every result is checked, for two ranks: tagged
 * point-to-point messages from empty to 4 MiB each way (UCX's eager
 * protocols below its rendezvous threshold, RDMA READ zero copy above),
 * non-blocking exchanges, allreduce, alltoall, and one-sided put, get and
 * fetch-and-op. Rank 0 prints one "ok"/"not ok" line per check and
 * "mpi_check: N passed, N failed"; the exit status is 1 if any failed.
 *
 *   mpirun -np 2 ... mpi_check [ROUNDS]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

static int rank, passed, failed;

/* Both ranks agree on each check: rank 0 reports it. */
static void check(int ok, const char *what)
{
	int all;

	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (all)
		passed++;
	else
		failed++;
	if (rank == 0)
		printf("%s %s\n", all ? "ok" : "not ok", what);
	fflush(stdout);
}

static const size_t sizes[] = { 0, 1, 8, 100, 1024, 4096, 8192, 16384, 65536, 262144, 1 << 20, 4 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXLEN (4 << 20)

/* Rank 0 sends to rank 1, then rank 1 back, each size ROUNDS times. */
static void ping_pong(unsigned char *sbuf, unsigned char *rbuf, int rounds)
{
	char what[80];

	for (size_t s = 0; s < NSIZES; s++) {
		size_t len = sizes[s];
		int ok = 1;

		for (int r = 0; r < rounds; r++) {
			MPI_Status st;
			int got;

			memset(rbuf, 0, len);
			if (rank == 0) {
				fill(sbuf, 0, len, r);
				MPI_Send(sbuf, len, MPI_BYTE, 1, s, MPI_COMM_WORLD);
				MPI_Recv(rbuf, len, MPI_BYTE, 1, s, MPI_COMM_WORLD, &st);
				ok &= intact(rbuf, 1, len, r);
			} else {
				MPI_Recv(rbuf, len, MPI_BYTE, 0, s, MPI_COMM_WORLD, &st);
				ok &= intact(rbuf, 0, len, r);
				fill(sbuf, 1, len, r);
				MPI_Send(sbuf, len, MPI_BYTE, 0, s, MPI_COMM_WORLD);
			}
			MPI_Get_count(&st, MPI_BYTE, &got);
			ok &= (size_t)got == len;
		}
		snprintf(what, sizeof(what), "send/recv %zu bytes, %d rounds each way", len, rounds);
		check(ok, what);
	}
}

/* Both ranks send at once, with a message of every size in flight. */
static void exchange(int rounds)
{
	MPI_Request req[2 * NSIZES];
	unsigned char *out[NSIZES], *in[NSIZES];
	int peer = 1 - rank, ok = 1;

	for (size_t s = 0; s < NSIZES; s++) {
		out[s] = malloc(sizes[s] + 1);
		in[s] = malloc(sizes[s] + 1);
	}
	for (int r = 0; r < rounds; r++) {
		for (size_t s = 0; s < NSIZES; s++) {
			fill(out[s], rank, sizes[s], r);
			memset(in[s], 0, sizes[s]);
			MPI_Irecv(in[s], sizes[s], MPI_BYTE, peer, 100 + s, MPI_COMM_WORLD, &req[2 * s]);
			MPI_Isend(out[s], sizes[s], MPI_BYTE, peer, 100 + s, MPI_COMM_WORLD, &req[2 * s + 1]);
		}
		MPI_Waitall(2 * NSIZES, req, MPI_STATUSES_IGNORE);
		for (size_t s = 0; s < NSIZES; s++)
			ok &= intact(in[s], peer, sizes[s], r);
	}
	for (size_t s = 0; s < NSIZES; s++) {
		free(out[s]);
		free(in[s]);
	}
	check(ok, "isend/irecv of every size at once, both ways");
}

static void collectives(void)
{
	const int n = 1 << 17;
	int64_t *v = malloc(n * sizeof(*v)), *sum = malloc(n * sizeof(*sum));
	int64_t *a = malloc(2 * n * sizeof(*a)), *b = malloc(2 * n * sizeof(*b));
	int ok = 1;

	for (int i = 0; i < n; i++)
		v[i] = (int64_t)i * (rank + 1) + rank;
	MPI_Allreduce(v, sum, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < n; i++)
		ok &= sum[i] == (int64_t)i * 3 + 1;
	check(ok, "allreduce of 1 MiB of int64 sums");

	/* Block j of rank r's send buffer goes to rank j. */
	ok = 1;
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < n; i++)
			a[j * n + i] = ((int64_t)rank << 40) | ((int64_t)j << 32) | i;
	MPI_Alltoall(a, n, MPI_INT64_T, b, n, MPI_INT64_T, MPI_COMM_WORLD);
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < n; i++)
			ok &= b[j * n + i] == (((int64_t)j << 40) | ((int64_t)rank << 32) | i);
	check(ok, "alltoall of 1 MiB blocks");
	free(v);
	free(sum);
	free(a);
	free(b);
}

/* One-sided: each rank puts into the peer's window, gets it back, and
 * both add to a counter on rank 0. */
static void one_sided(int rounds)
{
	const size_t len = 1 << 20;
	unsigned char *base, *mine = malloc(len), *back = malloc(len);
	int64_t *counter, one = 1, old;
	MPI_Win win, cwin;
	int peer = 1 - rank, ok = 1;

	MPI_Win_allocate(len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Win_allocate(sizeof(*counter), sizeof(*counter), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &cwin);
	*counter = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < rounds; r++) {
		fill(mine, rank, len, r);
		MPI_Win_fence(0, win);
		MPI_Put(mine, len, MPI_BYTE, peer, 0, len, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		ok &= intact(base, peer, len, r);
		memset(back, 0, len);
		MPI_Get(back, len, MPI_BYTE, peer, 0, len, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		ok &= intact(back, rank, len, r);
	}
	check(ok, "put and get of 1 MiB into the peer's window");

	MPI_Win_lock_all(0, cwin);
	for (int r = 0; r < 100 * rounds; r++)
		MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, cwin);
	MPI_Win_unlock_all(cwin);
	MPI_Barrier(MPI_COMM_WORLD);
	check(rank != 0 || *counter == 2 * 100 * rounds, "fetch-and-add from both ranks to one counter");

	MPI_Win_free(&cwin);
	MPI_Win_free(&win);
	free(mine);
	free(back);
}

int main(int argc, char **argv)
{
	int size, rounds = argc > 1 ? atoi(argv[1]) : 3;
	unsigned char *sbuf, *rbuf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs 2 ranks, has %d\n", size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	sbuf = malloc(MAXLEN);
	rbuf = malloc(MAXLEN);
	ping_pong(sbuf, rbuf, rounds);
	exchange(rounds);
	collectives();
	one_sided(rounds);
	free(sbuf);
	free(rbuf);
	if (rank == 0)
		printf("mpi_check: %d passed, %d failed\n", passed, failed);
	MPI_Finalize();
	return failed != 0;
}
