/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bytes the middleware test programs (ucp_check.c, mpi_check.c) send:
 * each depends on its offset, the message's length, its sender and its
 * round, so that a byte out of place, a message of another round and one
 * from the other side all show.
 */
#ifndef RROCE_PATTERN_H
#define RROCE_PATTERN_H

#include <stdio.h>
#include <stddef.h>

static inline unsigned char pattern(int from, size_t len, int round, size_t i)
{
	return (unsigned char)(i * 31 + len * 7 + from * 101 + round * 13 + (i >> 8));
}

static inline void fill(unsigned char *b, int from, size_t len, int round)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pattern(from, len, round, i);
}

/* Whether B holds what FROM sent in ROUND; says where it first differs. */
static inline int intact(const unsigned char *b, int from, size_t len, int round)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != pattern(from, len, round, i)) {
			fprintf(stderr, "byte %zu of %zu from %d differs\n", i, len, from);
			return 0;
		}
	return 1;
}

#endif
