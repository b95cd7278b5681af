/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the pure decisions of holding a packet that arrived after a gap,
 * the responder's requests (rc_resp.c) and the requester's responses
 * (rc_req_comp.c), while the packet that fills the gap may still be on
 * its way on this host (hold.c, shca_reorder_hold()).
 * kunit/shca_kunit_resp.c tests these exact functions.
 */
#ifndef SHCA_HOLD_LOGIC_H
#define SHCA_HOLD_LOGIC_H

#include <linux/types.h>

#include "psn.h"

/*
 * Packets held after a gap, per QP and side, at most: what a shca
 * requester may have in flight (SHCA_REQ_MAX_UNACKED), so that a gap of
 * a shca peer never overflows it.
 */
#define SHCA_HOLD_MAX		128

/**
 * shca_hold_ok() - may a packet after a gap wait for the gap to fill?
 * @held: packets held already
 * @nak_sent: (responder) a sequence or RNR NAK went out since ePSN last
 *	      moved: the requester resends from ePSN whatever is held
 * @started: a hold is running (packets are held, or being run again)
 * @may_start: (no hold running) the gap's packet may be on its way,
 *	       overtaken on this host
 * @over: (a hold running) it was ended (shca_hold_end())
 *
 * A running hold is joined whatever its age: whether it ran out is
 * decided at the end of a run (shca_hold_keep()), once every packet
 * queued behind this one, the gap's perhaps, was looked at.
 *
 * Return: true to hold it, false to act on the gap now (NAK, go back).
 */
static inline bool shca_hold_ok(u32 held, bool nak_sent, bool started,
				bool may_start, bool over)
{
	if (nak_sent || held >= SHCA_HOLD_MAX)
		return false;
	return started ? !over : may_start;
}

/* When a hold started, and how long it lasts (ns, ktime_get_ns()). */
struct shca_hold_time {
	u64 start;
	u64 min;	/* it lasts this long whatever else */
	u64 len;	/* and never longer than this */
};

/**
 * shca_hold_expired() - has a hold run out?
 * @t: the hold
 * @now: ktime_get_ns()
 *
 * Return: true once it is @t->len old.
 */
static inline bool shca_hold_expired(const struct shca_hold_time *t, u64 now)
{
	return now - t->start >= t->len;
}

/* End a hold: what it holds is handled as if it had never been held. */
static inline void shca_hold_end(struct shca_hold_time *t)
{
	t->len = 0;
}

/* Was the hold ended (shca_hold_end())? */
static inline bool shca_hold_over(const struct shca_hold_time *t)
{
	return !t->len;
}

/**
 * shca_hold_restart() - the gap a hold waited for filled, another remains
 * @t: the hold
 * @now: ktime_get_ns()
 *
 * The hold waits for the next gap as long as for a first one: its time
 * counts from when ePSN or una last moved, as a retransmit timer does.
 * An ended hold stays ended.
 */
static inline void shca_hold_restart(struct shca_hold_time *t, u64 now)
{
	if (!shca_hold_over(t))
		t->start = now;
}

/**
 * shca_hold_keep() - should a hold go on?
 * @t: the hold
 * @now: ktime_get_ns()
 * @busy: a packet may still bring the gap's (a receive backlog or the
 *	  QP's own queue holds some)
 *
 * Return: true until it is @t->min old, then while @busy, never once it
 * ran out.
 */
static inline bool shca_hold_keep(const struct shca_hold_time *t, u64 now,
				  bool busy)
{
	if (shca_hold_expired(t, now))
		return false;
	return now - t->start < t->min || busy;
}

/**
 * shca_hold_transit() - packets a peer sent that have not arrived
 * @out: the peer's count of packets it sent
 * @in: the count of those that arrived
 *
 * Both counters wrap; the difference is small either way.
 * Return: how many are on their way; negative if more arrived than
 * were counted sent (a count given up on earlier, see
 * shca_reorder_hold_keep()).
 */
static inline s32 shca_hold_transit(u32 out, u32 in)
{
	return (s32)(out - in);
}

/**
 * shca_hold_wait() - when to look at a hold again
 * @t: the hold, kept
 * @now: ktime_get_ns()
 * @check: the interval past its minimum
 *
 * Return: ns until its minimum ends, or @check once it has.
 */
static inline u64 shca_hold_wait(const struct shca_hold_time *t, u64 now,
				 u64 check)
{
	u64 age = now - t->start;

	return age < t->min ? t->min - age : check;
}

/**
 * shca_hold_before() - is a held request at @a due before one at @b?
 * @a: PSN
 * @b: PSN
 * @epsn: the responder's expected PSN; both are after it
 *
 * Return: true if @a lies nearer after @epsn than @b.
 */
static inline bool shca_hold_before(u32 a, u32 b, u32 epsn)
{
	return shca_psn_mask(a - epsn) < shca_psn_mask(b - epsn);
}

#endif /* SHCA_HOLD_LOGIC_H */
