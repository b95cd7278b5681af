/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the arming rules of a CQ (cq.c), as pure functions.
 * KUnit: kunit/shca_kunit_cq.c.
 */
#ifndef SHCA_CQ_LOGIC_H
#define SHCA_CQ_LOGIC_H

#include <rdma/ib_verbs.h>
#include <rdma/shca-abi.h>

/* The bits of a user CQ's arm word that mean anything. */
#define SHCA_CQ_ARM_MASK	(SHCA_CQ_ARM_NEXT | SHCA_CQ_ARM_SOLICITED)

/**
 * shca_cq_arm_word - the request in a user CQ's arm word
 * @word: the word as read from user memory
 *
 * Only "armed or not" and "solicited only or not" are taken from it;
 * NEXT wins when both are set.
 * Return: IB_CQ_NEXT_COMP, IB_CQ_SOLICITED, or 0 for none.
 */
static inline enum ib_cq_notify_flags shca_cq_arm_word(u32 word)
{
	if (word & SHCA_CQ_ARM_NEXT)
		return IB_CQ_NEXT_COMP;
	if (word & SHCA_CQ_ARM_SOLICITED)
		return IB_CQ_SOLICITED;
	return 0;
}

/**
 * shca_cq_arm_merge - the armed state after one more request
 * @cur: the armed state (0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP)
 * @how: the request (0: none)
 *
 * Arming for any completion wins over arming for solicited ones; no
 * request never disarms.
 */
static inline enum ib_cq_notify_flags
shca_cq_arm_merge(enum ib_cq_notify_flags cur, enum ib_cq_notify_flags how)
{
	if (!how || cur == IB_CQ_NEXT_COMP)
		return cur;
	return how;
}

/**
 * shca_cq_notify_due - does a completion raise the event?
 * @notify: the CQ's armed state
 * @solicited: the completion is for a solicited message
 * @status: its status (enum ib_wc_status)
 *
 * Armed for any completion: yes.  Armed for solicited ones: a solicited
 * one, or any that failed.
 */
static inline bool shca_cq_notify_due(enum ib_cq_notify_flags notify,
				      bool solicited, u8 status)
{
	if (notify == IB_CQ_NEXT_COMP)
		return true;
	return notify == IB_CQ_SOLICITED &&
	       (solicited || status != IB_WC_SUCCESS);
}

#endif /* SHCA_CQ_LOGIC_H */
