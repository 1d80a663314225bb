/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CRC-32 of crc32_le() by carry-less multiplication, carried over a head
 * and then over a payload that it copies in the same pass: each 16 bytes are
 * loaded once, stored, and folded into the CRC. A packet's payload is thus
 * read once on its way into an skb, where memcpy() and then the crypto API's
 * crc32-pclmul read it twice.
 *
 * Four 16-byte lanes are folded 64 bytes at a time. A lane holds a piece of
 * the message as loaded (bit n is the coefficient of x^(127-n)); a constant
 * rev64(x^(k-1) mod P) in a quadword multiplies that quadword by x^k, modulo
 * P, into the lane's place (the carry-less product of two bit-reversed
 * operands is one bit short of the lane's). The folds by 64 and 16 bytes
 * take rev64(x^(k-33) mod P * x^32) instead, the same modulo P, in 32 bits
 * rather than 64: QEMU's emulated carry-less multiply takes time with its
 * operand's length, and the kernel's crc32-pclmul has 33-bit constants.
 * The lanes fold into one, which is multiplied by x^32 and reduced to 64
 * bits, and those by Barrett's reduction to the CRC (Gopal et al., "Fast
 * CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction",
 * Intel, 2009).
 *
 * The caller holds the FPU (kernel_fpu_begin()) and the CPU has PCLMULQDQ;
 * SSE4.1 for rroce_crc32_fold()'s last block (pblendvb); and AVX2 for the
 * _avx2 forms, which load (and store) 32 bytes at a time, and whose
 * three-operand forms need no copy of a lane to fold it.
 */

#include <linux/linkage.h>

.section .rodata, "a"
.align 16
/* Quadword 0 of a lane times x^576, quadword 1 times x^512: 64 bytes on. */
.Lfold_64_bytes:
	.quad 0x000000008f352d95, 0x000000001d9513d7
/* Times x^192 and x^128: one lane on. */
.Lfold_16_bytes:
	.quad 0x00000000ae689191, 0x00000000ccaa009e
/* The last lane times x^32: quadword 0 times x^96, quadword 1 times x^32. */
.Lfold_x32:
	.quad 0xccaa009e00000000, 0x0000000100000000
/* The 32 high coefficients of a 96-bit remainder times x^64. */
.Lfold_96_bits:
	.quad 0xb8bc676500000000, 0
/* Barrett: floor(x^64 / P) and P, each reversed in 33 bits. */
.Lbarrett:
	.quad 0x00000001f7011641, 0x00000001db710641
.Llow_32_bits:
	.quad 0x00000000ffffffff, 0
/*
 * pshufb's masks for a last block of r bytes, 16 bytes from r and from
 * r + 16: bytes with bit 7 set give zeros, and pblendvb takes the new bytes
 * there.
 */
.Lshift_table:
	.fill 16, 1, 0x80
	.byte 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	.fill 16, 1, 0x80

.text

/* Folds lane \lane (with \tmp) by the constants in %xmm0 and adds \data. */
.macro fold lane, tmp, data
	movdqa		\lane, \tmp
	pclmulqdq	$0x00, %xmm0, \lane
	pclmulqdq	$0x11, %xmm0, \tmp
	pxor		\tmp, \lane
	pxor		\data, \lane
.endm

/* Loads the 64 bytes at \src into %xmm5..%xmm8. */
.macro load64 src
	movdqu		0(\src), %xmm5
	movdqu		16(\src), %xmm6
	movdqu		32(\src), %xmm7
	movdqu		48(\src), %xmm8
.endm

/* Stores %xmm5..%xmm8 to the 64 bytes at \dst. */
.macro store64 dst
	movdqu		%xmm5, 0(\dst)
	movdqu		%xmm6, 16(\dst)
	movdqu		%xmm7, 32(\dst)
	movdqu		%xmm8, 48(\dst)
.endm

/* Folds the four lanes by 64 bytes by \f and adds %xmm5..%xmm8. */
.macro fold64 f=fold
	\f		%xmm1, %xmm9, %xmm5
	\f		%xmm2, %xmm10, %xmm6
	\f		%xmm3, %xmm11, %xmm7
	\f		%xmm4, %xmm12, %xmm8
.endm

/* The four lanes folded into %xmm1, with %xmm0 left at one lane's fold. */
.macro lanes_to_one
	movdqa		.Lfold_16_bytes(%rip), %xmm0
	fold		%xmm1, %xmm9, %xmm2
	fold		%xmm1, %xmm9, %xmm3
	fold		%xmm1, %xmm9, %xmm4
.endm

/* The four lanes reduced to the CRC, which it returns. */
.macro reduce
	lanes_to_one
	reduce_lane
.endm

/* The lane %xmm1 reduced to the CRC, which it returns. */
.macro reduce_lane
	/* Times x^32, into 96 bits. */
	movdqa		.Lfold_x32(%rip), %xmm0
	movdqa		%xmm1, %xmm9
	pclmulqdq	$0x00, %xmm0, %xmm1
	pclmulqdq	$0x11, %xmm0, %xmm9
	pxor		%xmm9, %xmm1
	/* Into 64 bits, in the high quadword, then moved to the low one. */
	movdqa		%xmm1, %xmm9
	pclmulqdq	$0x00, .Lfold_96_bits(%rip), %xmm1
	pxor		%xmm9, %xmm1
	psrldq		$8, %xmm1
	/* Barrett: the quotient from the high 32 coefficients, then the rest. */
	movdqa		.Lbarrett(%rip), %xmm0
	movdqa		.Llow_32_bits(%rip), %xmm10
	movdqa		%xmm1, %xmm9
	pand		%xmm10, %xmm1
	pclmulqdq	$0x00, %xmm0, %xmm1
	pand		%xmm10, %xmm1
	pclmulqdq	$0x10, %xmm0, %xmm1
	pxor		%xmm9, %xmm1
	psrlq		$32, %xmm1
	movd		%xmm1, %eax
	RET
.endm

/* \a ^= \b, in SSE's and AVX's forms. */
.macro xor2 b, a
	pxor		\b, \a
.endm
.macro vxor2 b, a
	vpxor		\b, \a, \a
.endm

/* Folds lane \lane (with \tmp) by the constants in %xmm0 and adds \data. */
.macro vfold lane, tmp, data
	vpclmulqdq	$0x00, %xmm0, \lane, \tmp
	vpclmulqdq	$0x11, %xmm0, \lane, \lane
	vpxor		\tmp, \lane, \lane
	vpxor		\data, \lane, \lane
.endm

/* load64 by 32-byte loads, the upper halves moved to %xmm6 and %xmm8. */
.macro vload64 src
	vmovdqu		0(\src), %ymm5
	vmovdqu		32(\src), %ymm7
	vextracti128	$1, %ymm5, %xmm6
	vextracti128	$1, %ymm7, %xmm8
.endm

/* store64 of what vload64 loaded, by 32-byte stores. */
.macro vstore64 dst
	vmovdqu		%ymm5, 0(\dst)
	vmovdqu		%ymm7, 32(\dst)
.endm

/*
 * The body of both functions below, by their loads and stores and their
 * forms (\v is "v" for AVX's): the first 64 bytes, with the CRC so far
 * added to the first 4, then the head, then the payload, copied.
 */
.macro fold_copy v, load, store
	test		%rdx, %rdx
	jz		1f
	\load		%rsi
	add		$64, %rsi
	sub		$64, %rdx
	jmp		2f
1:	\load		%r8
	\store		%rcx
	add		$64, %r8
	add		$64, %rcx
	sub		$64, %r9
2:	\v\()movd	%edi, %xmm1
	\v\()xor2	%xmm5, %xmm1
	\v\()movdqa	%xmm6, %xmm2
	\v\()movdqa	%xmm7, %xmm3
	\v\()movdqa	%xmm8, %xmm4
	\v\()movdqa	.Lfold_64_bytes(%rip), %xmm0
3:	test		%rdx, %rdx
	jz		4f
	\load		%rsi
	fold64		\v\()fold
	add		$64, %rsi
	sub		$64, %rdx
	jmp		3b
4:	test		%r9, %r9
	jz		6f
5:	\load		%r8
	\store		%rcx
	fold64		\v\()fold
	add		$64, %r8
	add		$64, %rcx
	sub		$64, %r9
	jnz		5b
6:
.endm

/*
 * u32 rroce_crc32_fold_copy(u32 crc, const u8 *head, size_t head_len,
 *			     u8 *dst, const u8 *src, size_t len);
 *
 * crc32_le(crc, head ++ src) for head_len and len multiples of 64, at least
 * one of them not 0; copies src to dst. Each byte of src is read once.
 */
SYM_FUNC_START(rroce_crc32_fold_copy)
	fold_copy	, load64, store64
	reduce
SYM_FUNC_END(rroce_crc32_fold_copy)

/* rroce_crc32_fold_copy(), with AVX2. */
SYM_FUNC_START(rroce_crc32_fold_copy_avx2)
	fold_copy	v, vload64, vstore64
	vzeroupper
	reduce
SYM_FUNC_END(rroce_crc32_fold_copy_avx2)

/*
 * The body of rroce_crc32_fold() and its AVX2 form (\v is "v" for AVX's):
 * the four lanes, loaded by \load, while 64 bytes are left for them, then
 * one lane. %rdx counts what is left, less what the next step takes.
 */
.macro fold_any v, load
	movd		%edi, %xmm1
	movdqu		(%rsi), %xmm5
	pxor		%xmm5, %xmm1
	add		$16, %rsi
	sub		$16, %rdx
	cmp		$240, %rdx
	jb		1f
	movdqu		0(%rsi), %xmm2
	movdqu		16(%rsi), %xmm3
	movdqu		32(%rsi), %xmm4
	add		$48, %rsi
	sub		$112, %rdx
	movdqa		.Lfold_64_bytes(%rip), %xmm0
2:	\load		%rsi
	fold64		\v\()fold
	add		$64, %rsi
	sub		$64, %rdx
	jae		2b
	add		$64, %rdx
	.ifnb \v
	vzeroupper
	.endif
	lanes_to_one
	jmp		3f
1:	movdqa		.Lfold_16_bytes(%rip), %xmm0
3:	sub		$16, %rdx
	jb		5f
4:	movdqu		(%rsi), %xmm5
	fold		%xmm1, %xmm9, %xmm5
	add		$16, %rsi
	sub		$16, %rdx
	jae		4b
5:	add		$16, %rdx
	jz		6f
	/* The last 16 bytes, of which the last %rdx are still to come. */
	movdqu		-16(%rsi,%rdx), %xmm5
	lea		.Lshift_table(%rip), %rax
	movdqu		(%rax,%rdx), %xmm10
	movdqu		16(%rax,%rdx), %xmm0
	movdqa		%xmm1, %xmm2
	pshufb		%xmm10, %xmm1
	pshufb		%xmm0, %xmm2
	pblendvb	%xmm0, %xmm5, %xmm2
	movdqa		.Lfold_16_bytes(%rip), %xmm0
	fold		%xmm1, %xmm9, %xmm2
6:	reduce_lane
.endm

/*
 * u32 rroce_crc32_fold(u32 crc, const u8 *p, size_t len);
 *
 * crc32_le(crc, p) for a len of at least 16: from 256 bytes on, four lanes
 * 64 bytes at a time while 64 are left, then one lane 16 bytes at a time.
 * The last r < 16 bytes take one more fold: the lane's first r bytes, with
 * zeros before them (the high coefficients of what is yet to be reduced),
 * are followed by its other 16 - r and those r, a whole lane. So a short
 * packet takes its blocks' folds and the reduction, nothing by the table.
 */
SYM_FUNC_START(rroce_crc32_fold)
	fold_any	, load64
SYM_FUNC_END(rroce_crc32_fold)

/* rroce_crc32_fold(), its four lanes by AVX2's loads and folds. */
SYM_FUNC_START(rroce_crc32_fold_avx2)
	fold_any	v, vload64
SYM_FUNC_END(rroce_crc32_fold_avx2)
