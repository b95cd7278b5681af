/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: 24-bit packet sequence number arithmetic.
 *
 * PSNs live in a ring of 2^24 values.  Two PSNs are compared by the signed
 * distance between them, taken modulo 2^24 and folded into
 * [-2^23, 2^23 - 1]: a PSN less than half the ring ahead of another is
 * "after" it.  Every helper masks its inputs, so callers may pass values
 * with garbage in the top byte (e.g. a raw BTH word).
 */
#ifndef SHCA_PSN_H
#define SHCA_PSN_H

#include <linux/bitops.h>
#include <linux/types.h>

#define SHCA_PSN_BITS		24
#define SHCA_PSN_MASK		((1U << SHCA_PSN_BITS) - 1)
/* Largest window for which before/after stay unambiguous. */
#define SHCA_PSN_MAX_WINDOW	(1U << (SHCA_PSN_BITS - 1))

/**
 * shca_psn_mask() - reduce a value to a 24-bit PSN
 * @psn: any 32-bit value
 *
 * Return: @psn modulo 2^24.
 */
static inline u32 shca_psn_mask(u32 psn)
{
	return psn & SHCA_PSN_MASK;
}

/**
 * shca_psn_add() - advance a PSN
 * @psn: starting PSN
 * @n: number of packets to advance by (wraps modulo 2^24)
 *
 * Return: (@psn + @n) modulo 2^24, e.g. shca_psn_add(0xffffff, 1) == 0.
 */
static inline u32 shca_psn_add(u32 psn, u32 n)
{
	return shca_psn_mask(psn + n);
}

/**
 * shca_psn_diff() - signed distance from one PSN to another
 * @a: PSN
 * @b: PSN
 *
 * Return: the d in [-2^23, 2^23 - 1] with @b + d == @a modulo 2^24.
 * Positive when @a is after @b, negative when before, 0 when equal.
 */
static inline s32 shca_psn_diff(u32 a, u32 b)
{
	return sign_extend32(shca_psn_mask(a - b), SHCA_PSN_BITS - 1);
}

/**
 * shca_psn_before() - is one PSN older than another?
 * @a: PSN
 * @b: PSN
 *
 * Return: true if @a precedes @b within half the PSN space.
 */
static inline bool shca_psn_before(u32 a, u32 b)
{
	return shca_psn_diff(a, b) < 0;
}

/**
 * shca_psn_after() - is one PSN newer than another?
 * @a: PSN
 * @b: PSN
 *
 * Return: true if @a follows @b within half the PSN space.
 */
static inline bool shca_psn_after(u32 a, u32 b)
{
	return shca_psn_diff(a, b) > 0;
}

/**
 * shca_psn_in_window() - is a PSN inside [start, start + len)?
 * @psn: PSN to test
 * @start: first PSN of the window
 * @len: number of PSNs in the window, at most SHCA_PSN_MAX_WINDOW
 *
 * The window may straddle the 0xffffff -> 0 wrap.  An empty window
 * (@len == 0) contains nothing.
 *
 * Return: true if @psn lies in the window.
 */
static inline bool shca_psn_in_window(u32 psn, u32 start, u32 len)
{
	return shca_psn_mask(psn - start) < len;
}

#endif /* SHCA_PSN_H */
