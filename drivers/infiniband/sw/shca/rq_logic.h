/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the geometry of work queue entries, and the checks a receive WQE
 * passes where it leaves its ring - the pure part.
 *
 * A queue's stride follows what its creator asked for (shca_wqe_shift()),
 * and what it was granted is what that stride holds (shca_wqe_sges(),
 * shca_wqe_inline()): a QP of one SGE and no inline data has 128-byte
 * send and 32-byte receive entries, not the largest ones.
 *
 * The producer of an RQ, SRQ (basic, XRC, TM) or WQ ring is the process
 * that maps it, so every field is hostile until checked; shca_rwqe_pop()
 * (rwqe.c) checks each WQE once, as it copies it out, and hands its
 * consumers only WQEs that passed.  No locks, no memory of its own;
 * kunit/shca_kunit_rq.c tests these directly.
 */
#ifndef SHCA_RQ_LOGIC_H
#define SHCA_RQ_LOGIC_H

#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/types.h>
#include <rdma/shca-abi.h>

/**
 * shca_wqe_shift - log2 of the stride of a queue's entries
 * @hdr: the bytes of an entry's header (struct shca_send_wqe or
 *	 struct shca_recv_wqe)
 * @nsge: the SGEs an entry must hold (at least one is always given)
 * @inl: the inline bytes it must hold (0 for a receive queue)
 * @max_shift: the largest stride (the one the device's maxima fit)
 *
 * The smallest power of two that holds the header and the larger of the
 * SGEs and the inline bytes, at most 1 << @max_shift: the caller has
 * checked the request against the maxima.
 * Context: any.
 */
static inline u32 shca_wqe_shift(u32 hdr, u32 nsge, u32 inl, u32 max_shift)
{
	u32 body = max_t(u32, max_t(u32, nsge, 1) * sizeof(struct shca_sge),
			 inl);
	u32 shift = order_base_2(hdr + body);

	return min(shift, max_shift);
}

/**
 * shca_wqe_sges - the SGEs an entry of stride 1 << @shift holds
 * @shift: from shca_wqe_shift()
 * @hdr: its header's bytes
 * @cap: the most any queue has (SHCA_MAX_SGE)
 * Context: any.
 */
static inline u32 shca_wqe_sges(u32 shift, u32 hdr, u32 cap)
{
	return min_t(u32, ((1U << shift) - hdr) / sizeof(struct shca_sge), cap);
}

/**
 * shca_wqe_inline - the inline bytes an entry of stride 1 << @shift holds
 * @shift: from shca_wqe_shift()
 * @hdr: its header's bytes
 * Context: any.
 */
static inline u32 shca_wqe_inline(u32 shift, u32 hdr)
{
	return (1U << shift) - hdr;
}

/**
 * shca_rwqe_num_sge_ok - may a receive WQE scatter into @num_sge SGEs?
 * @num_sge: the count its producer wrote
 * @max_sge: the scatter limit of its queue, as created
 * @cap: the most any queue has (SHCA_MAX_SGE, what a WQE copy holds)
 *
 * Zero is valid: a receive of a message without payload.
 * Context: any.
 */
static inline bool shca_rwqe_num_sge_ok(u32 num_sge, u32 max_sge, u32 cap)
{
	return num_sge <= max_sge && num_sge <= cap;
}

/**
 * shca_rwqe_len_ok - do the lengths of @num_sge SGEs add up to a length?
 * @sge: the WQE's SGEs, already checked by shca_rwqe_num_sge_ok()
 * @num_sge: their count
 *
 * A message's byte count is 32 bits: a WQE whose buffers add up to more
 * cannot be described by its completion.
 * Context: any.
 */
static inline bool shca_rwqe_len_ok(const struct shca_sge *sge, u32 num_sge)
{
	u64 total = 0;
	u32 i;

	for (i = 0; i < num_sge; i++)
		total += sge[i].length;
	return total <= U32_MAX;
}

#endif /* SHCA_RQ_LOGIC_H */
