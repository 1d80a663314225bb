// SPDX-License-Identifier: GPL-2.0
/*
 * rust/helpers/crc32_copy_x86_64.S on the host, against the textbook
 * CRC-32 of crc32_le(): heads and payloads of every number of 64-byte
 * blocks up to 2 and 64, random bytes and CRCs; the copy must be exact.
 * The fold without a copy, of every length from 16 bytes to 1 KiB and of
 * 16-byte blocks up to 4 KiB.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t fold_copy(uint32_t crc, const uint8_t *head, size_t head_len,
			   uint8_t *dst, const uint8_t *src, size_t len);
fold_copy rroce_crc32_fold_copy, rroce_crc32_fold_copy_avx2;
typedef uint32_t fold(uint32_t crc, const uint8_t *p, size_t len);
fold rroce_crc32_fold, rroce_crc32_fold_avx2;

/* crc32_le(): reflected, polynomial 0xedb88320, no inversion. */
static uint32_t crc32_le(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	return crc;
}

/* Each variant the host's CPU runs: AVX2 only where it has it. */
static int check(const char *name, fold_copy *fold)
{
	static uint8_t head[128], src[64 * 64], dst[64 * 64 + 1];
	unsigned int runs = 0;

	srand(1);
	for (size_t h = 0; h <= sizeof(head); h += 64) {
		for (size_t n = 0; n <= sizeof(src); n += 64) {
			if (!h && !n)
				continue;
			for (size_t i = 0; i < h; i++)
				head[i] = rand();
			for (size_t i = 0; i < n; i++)
				src[i] = rand();
			memset(dst, 0x5a, sizeof(dst));
			uint32_t crc = (uint32_t)rand() << 1 ^ rand();
			uint32_t want = crc32_le(crc32_le(crc, head, h), src, n);
			uint32_t got = fold(crc, head, h, dst, src, n);
			if (got != want || memcmp(dst, src, n) || dst[n] != 0x5a) {
				printf("not ok: %s, head %zu, payload %zu: %08x, want %08x\n",
				       name, h, n, got, want);
				return 1;
			}
			runs++;
		}
	}
	printf("ok: %s, %u CRCs copied and checked\n", name, runs);
	return 0;
}

/* The fold alone, at every offset of a 16-byte block in memory. */
static int check_fold(const char *name, fold *fold)
{
	static uint8_t buf[4096 + 16];
	unsigned int runs = 0;

	srand(2);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = rand();
	for (size_t n = 16; n <= 4096; n += n < 1024 ? 1 : 16) {
		const uint8_t *p = buf + n / 16 % 16;
		uint32_t crc = (uint32_t)rand() << 1 ^ rand();
		uint32_t want = crc32_le(crc, p, n);
		uint32_t got = fold(crc, p, n);

		if (got != want) {
			printf("not ok: %s fold, %zu bytes: %08x, want %08x\n",
			       name, n, got, want);
			return 1;
		}
		runs++;
	}
	printf("ok: %s fold, %u CRCs checked\n", name, runs);
	return 0;
}

int main(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("pclmul")) {
		puts("skip: no PCLMULQDQ on this host");
		return 0;
	}
	if (check("SSE", rroce_crc32_fold_copy) ||
	    check_fold("SSE", rroce_crc32_fold))
		return 1;
	if (!__builtin_cpu_supports("avx2")) {
		puts("skip: AVX2, not on this host");
		return 0;
	}
	return check("AVX2", rroce_crc32_fold_copy_avx2) ||
	       check_fold("AVX2", rroce_crc32_fold_avx2);
}
