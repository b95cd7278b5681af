/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: CRC-32 (the ICRC's) by reduction modulo a sparse multiple of its
 * polynomial.  Pure logic, no state; KUnit: kunit/shca_kunit_icrc.c.
 *
 * The table-driven crc32_le() of 6.1 and 6.12 (slice-by-8) makes one
 * table load per byte.  Where loads are dear, as under an emulator's
 * soft MMU, that is most of a packet's cost.  This one makes one load
 * per eight bytes and otherwise only shifts and XORs.
 *
 * The idea (the "Chorba" CRC, S. Russell, 2024): if M(x) is a multiple
 * of the CRC polynomial P(x), then m mod M and m have the same remainder
 * modulo P, so the CRC of a message does not change when its leading
 * part is reduced modulo M.  With a sparse M the reduction is cheap:
 *
 *     M(x) = x^307 + x^144 + x^110 + x^93 + x^55 + 1
 *
 * is divisible by P(x) = x^32 + x^26 + ... + 1 (0x04c11db7; found by a
 * meet-in-the-middle search over the remainders x^k mod P; KUnit checks
 * the division).  As x^307 = x^144 + x^110 + x^93 + x^55 + 1 modulo M, a
 * message bit of degree d >= 307 can be cleared and the bits of degree
 * d - 163, d - 197, d - 214, d - 252 and d - 307 flipped instead.
 *
 * The reflected CRC-32 takes a message's first bit (bit 0 of its first
 * byte) as its highest-degree one, so in a little-endian 64-bit word w
 * of it, bit b is the message's bit 64i + b, and "degree lower by g" is
 * "g bits later": word i's bits go to words i + g / 64 (shifted left by
 * g % 64) and i + g / 64 + 1 (shifted right by 64 - g % 64).  Every gap
 * is at least 64, so a word never feeds itself.  Words are folded this
 * way from the start while all their bits have degree >= 307; what is
 * left (the last 39 to 46 bytes, with what was folded into them) has the
 * same CRC as the whole, since leading zero bits do not change a CRC
 * with a zero seed.  A non-zero seed is the same as XORing it into the
 * first four bytes.
 *
 * Six accumulators (the words 0 to 5 ahead of the current one) hold
 * what was folded forward; the loop is unrolled by six so that they
 * rotate by naming, not by moves.
 */
#ifndef SHCA_CRC_LOGIC_H
#define SHCA_CRC_LOGIC_H

#include <asm/byteorder.h>
#include <linux/crc32.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/types.h>

/*
 * The running CRC after the pseudo-LRH, the eight bytes of 0xff that
 * start every RoCE v2 ICRC: crc32_le(~0U, those bytes), the same for
 * every packet (KUnit shca_icrc_test_lrh checks it).
 */
#define SHCA_ICRC_LRH_CRC	0xdebb20e3U

#define SHCA_CRC_SPARSE_DEG	307	/* the degree of M(x) */
#define SHCA_CRC_SPARSE_WIN	6	/* accumulators: words 0..5 ahead */
/* below this many bytes the table-driven crc32_le() is as quick */
#define SHCA_CRC_SPARSE_MIN	128

/* The little-endian 64-bit word at @p, any alignment. */
static __always_inline u64 shca_crc_le64(const u8 *p)
{
	__le64 w;

	memcpy(&w, p, sizeof(w));
	return le64_to_cpu(w);
}

/*
 * Fold the word at @p (plus what was folded into it, *@x0) forward: to
 * the words 2, 3, 4 and 5 ahead (*@x2 .. *@x5), by the gaps 163, 197,
 * 214, 252 and 307 of M(x).  *@x0 is consumed and becomes the (empty)
 * accumulator of the word six ahead.
 */
static __always_inline void shca_crc_sparse_step(const u8 *p, u64 *x0,
						 u64 *x2, u64 *x3, u64 *x4,
						 u64 *x5)
{
	u64 v = shca_crc_le64(p) ^ *x0;

	*x0 = 0;
	/* gap 64q + s: x[q] ^= v << s, x[q + 1] ^= v >> (64 - s) */
	*x2 ^= v << 35;					/* 163 = 128 + 35 */
	*x3 ^= (v >> 29) ^ (v << 5) ^ (v << 22) ^ (v << 60);	/* 197, 214, 252 */
	*x4 ^= (v >> 59) ^ (v >> 42) ^ (v >> 4) ^ (v << 51);
	*x5 ^= v >> 13;					/* 307 = 256 + 51 */
}

/*
 * The @len bytes at @p left after the folded words (39 to 46 of them),
 * with the accumulators @a XORed in, through crc32_le() with a zero seed.
 */
static inline u32 shca_crc_sparse_tail(const u8 *p, size_t len,
				       const u64 a[SHCA_CRC_SPARSE_WIN])
{
	u8 buf[SHCA_CRC_SPARSE_WIN * sizeof(u64)];
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, p, min(len, sizeof(buf)));
	for (i = 0; i < SHCA_CRC_SPARSE_WIN; i++) {
		__le64 w = cpu_to_le64(shca_crc_le64(buf + 8 * i) ^ a[i]);

		memcpy(buf + 8 * i, &w, sizeof(w));
	}
	return crc32_le(0, buf, min(len, sizeof(buf)));
}

/**
 * shca_crc32_sparse() - crc32_le() by sparse-multiple reduction
 * @crc: running value (seed), as crc32_le() takes it
 * @p: bytes, any alignment
 * @len: number of bytes
 *
 * Context: any.
 * Return: crc32_le(@crc, @p, @len).
 */
static inline u32 shca_crc32_sparse(u32 crc, const u8 *p, size_t len)
{
	u64 a0 = crc, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, t;
	size_t words, j;

	if (len < SHCA_CRC_SPARSE_MIN)
		return crc32_le(crc, p, len);
	words = (len * 8 - SHCA_CRC_SPARSE_DEG) / 64;
	for (j = 0; j + SHCA_CRC_SPARSE_WIN <= words;
	     j += SHCA_CRC_SPARSE_WIN, p += 8 * SHCA_CRC_SPARSE_WIN) {
		shca_crc_sparse_step(p, &a0, &a2, &a3, &a4, &a5);
		shca_crc_sparse_step(p + 8, &a1, &a3, &a4, &a5, &a0);
		shca_crc_sparse_step(p + 16, &a2, &a4, &a5, &a0, &a1);
		shca_crc_sparse_step(p + 24, &a3, &a5, &a0, &a1, &a2);
		shca_crc_sparse_step(p + 32, &a4, &a0, &a1, &a2, &a3);
		shca_crc_sparse_step(p + 40, &a5, &a1, &a2, &a3, &a4);
	}
	for (; j < words; j++, p += 8) {
		shca_crc_sparse_step(p, &a0, &a2, &a3, &a4, &a5);
		t = a0;
		a0 = a1;
		a1 = a2;
		a2 = a3;
		a3 = a4;
		a4 = a5;
		a5 = t;
	}
	return shca_crc_sparse_tail(p, len - 8 * words,
				    (const u64 [SHCA_CRC_SPARSE_WIN])
				    { a0, a1, a2, a3, a4, a5 });
}

#endif /* SHCA_CRC_LOGIC_H */
