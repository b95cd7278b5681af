/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the checks a receive WQE passes where it leaves its ring - the
 * pure part.  The producer of an RQ, SRQ (basic, XRC, TM) or WQ ring is
 * the process that maps it, so every field is hostile until checked;
 * shca_rwqe_pop() (rq.c) checks each WQE once, as it copies it out, and
 * hands its consumers only WQEs that passed.  No locks, no memory of its
 * own; kunit/shca_kunit_rq.c tests these directly.
 */
#ifndef SHCA_RQ_LOGIC_H
#define SHCA_RQ_LOGIC_H

#include <linux/limits.h>
#include <linux/types.h>
#include <rdma/shca-abi.h>

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
