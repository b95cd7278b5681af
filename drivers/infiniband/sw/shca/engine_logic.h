/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: when an idle SQ engine lingers (sq_engine.c), as a pure function.
 * KUnit: kunit/shca_kunit_engine.c.
 *
 * An RC/UC engine with nothing left to do may stay "active" for one more
 * run of sq_work (it lingers), so that a consumer reposting as its
 * completions come in needs no doorbell.  A linger costs a worker
 * wakeup, and pays off only if the consumer posts before that run.  A
 * request/response consumer (a ping-pong, an RPC, a storage command)
 * does not: it waits for its peer's request first, and the wakeup then
 * only takes a CPU from the threads on the round trip.  So an engine
 * whose requests ran inline at a same-host destination does not linger
 * if its QP received a request since the engine last went idle, or
 * between the last two doorbells (the consumer converses); one that only
 * sends does.  On the wire a linger
 * pays even for a ping-pong: the run it brings takes the next post's IP
 * stack work off the posting thread (make bench, TCG: 0.8x the round
 * trip).
 *
 * The same distinction decides where a same-host request is executed
 * (shca_rq_inline()): a conversing consumer's request runs in the
 * sender's thread, which saves a wakeup on the round trip; a streaming
 * sender's runs in the responder's rq_work, on another CPU, while the
 * sender goes on (and its engine lingers, so its posts need no
 * doorbell).
 *
 * A linger run may not help a streaming consumer at all: when the worker
 * that runs it wakes on the consumer's CPU it preempts the consumer, finds
 * nothing posted (the consumer could not run) and lets the engine go idle,
 * and the consumer's next post rings about the time of a wakeup later (6.12
 * under TCG: 9 in 10 such doorbells came 10 to 20 us after the engine went
 * idle, on the CPU it went idle on).  So a doorbell that comes within
 * SHCA_LINGER_GAP_MAX_NS of the engine going idle, from a consumer that is
 * not conversing, makes the next lingers timed (as NAPI defers its
 * interrupts): the engine stays active and a timer of twice that gap brings
 * the run, so the consumer's posts meanwhile need no doorbell and go out in
 * one run.  A timed linger that finds nothing posted is tried again, twice
 * as long, up to SHCA_LINGER_EMPTY_MAX times, and then the engine goes
 * idle; one that finds a single WR shows a consumer that posts one WR at a
 * time and waits for it (a latency test, a READ at a time), whom the timer
 * only delays: lingers are one run again, and the next SHCA_LINGER_HOLD
 * doorbells do not make them timed.
 */
#ifndef SHCA_ENGINE_LOGIC_H
#define SHCA_ENGINE_LOGIC_H

#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/types.h>

/* a doorbell this soon after the engine went idle makes lingers timed */
#define SHCA_LINGER_GAP_MAX_NS	(100 * NSEC_PER_USEC)
/* the bounds of a timed linger's period (twice that gap) */
#define SHCA_LINGER_MIN_NS	(2 * NSEC_PER_USEC)
#define SHCA_LINGER_MAX_NS	(200 * NSEC_PER_USEC)
/* timed lingers in a row that find nothing, after the first, before idle */
#define SHCA_LINGER_EMPTY_MAX	2
/* doorbells that cannot make lingers timed after a one-WR timed linger */
#define SHCA_LINGER_HOLD	16

/* what an engine with nothing left to do does (shca_linger_next()) */
enum shca_linger_how {
	SHCA_LINGER_NONE,	/* go idle: clear the active flag */
	SHCA_LINGER_RUN,	/* stay active for one more run, queued now */
	SHCA_LINGER_TIMED,	/* stay active for a run shca_linger_delay() on */
};

struct shca_linger {
	u32 rx_seen;	/* the QP's request count when it last went idle */
	u32 rx_rang;	/* the QP's request count at the last doorbell */
	bool rang_talk;	/* it took a request between the last two doorbells */
	bool inlined;	/* a request ran inline since it went idle */
	u8 how;		/* enum shca_linger_how: lingering since it was idle */
	u8 empty;	/* timed lingers in a row that found nothing */
	u8 hold;	/* doorbells that do not make lingers timed */
	u32 cons;	/* the SQ's consumer index when it lingered */
	u32 period_ns;	/* a timed linger's period; 0: lingers are a run */
};

/**
 * shca_linger_talking - has the QP received a request since it went idle,
 *	or between the doorbell that started this run and the one before?
 * @l: the engine's linger state
 * @rx_reqs: the requests the QP's own RQ engine has taken so far
 *
 * The second test is for a peer that answers before the engine has gone
 * idle (the response to our request reached it first, in our run): its
 * request is then counted when the engine goes idle, and only the
 * doorbell that follows shows the consumer converses.  Were it not
 * counted, that consumer's next request would be queued for its
 * destination's rq_work, its ACK would come back after the run ended, the
 * peer's answer would wait for sq_work to consume it, and a ping-pong
 * would go on that way, through workers, for many round trips.
 * Return: true for a consumer that converses (a ping-pong, an RPC).
 */
static inline bool shca_linger_talking(const struct shca_linger *l,
				       u32 rx_reqs)
{
	return rx_reqs != l->rx_seen || l->rang_talk;
}

/**
 * shca_linger_inlined - a request of the engine ran inline at its target
 * @l: the engine's linger state
 */
static inline void shca_linger_inlined(struct shca_linger *l)
{
	l->inlined = true;
}

/**
 * shca_linger_want - should an engine that goes idle linger?
 * @l: the engine's linger state
 * @rx_reqs: the requests the QP's own RQ engine has taken so far (a
 *	free-running count)
 *
 * Return: false if a request ran inline and the QP received a request
 * since the last call, else true.
 */
static inline bool shca_linger_want(struct shca_linger *l, u32 rx_reqs)
{
	bool want = !l->inlined || !shca_linger_talking(l, rx_reqs);

	l->rx_seen = rx_reqs;
	l->inlined = false;
	l->rang_talk = false;
	return want;
}

/*
 * The engine lingered, and is idle again: did that linger pay?  A timed
 * one that found nothing is tried again (true, l->how stays TIMED) until
 * SHCA_LINGER_EMPTY_MAX; false when the engine should decide afresh.
 */
static inline bool shca_linger_again(struct shca_linger *l, u32 cons)
{
	u32 n = cons - l->cons;		/* WRs consumed since it lingered */

	if (l->how == SHCA_LINGER_TIMED) {
		if (!n && l->empty < SHCA_LINGER_EMPTY_MAX) {
			l->empty++;
			return true;
		}
		l->empty = 0;
		if (n <= 1) {		/* the poster stopped, or posts serially */
			l->period_ns = 0;
			l->hold = n ? SHCA_LINGER_HOLD : 0;
		}
	}
	return false;
}

/**
 * shca_linger_next - what an RC/UC engine with nothing left to do does
 * @l: the engine's linger state
 * @rx_reqs: the requests the QP's own RQ engine has taken so far
 * @cons: the SQ's consumer index (free-running: WRs consumed)
 *
 * After a run's linger the engine goes idle; a timed linger that found
 * nothing is tried again, longer (shca_linger_again()), and one that
 * found posts goes on.  Otherwise the engine lingers as shca_linger_want()
 * says, timed if a doorbell asked for it (shca_linger_rang()) and the QP
 * took no request since.
 * Return: enum shca_linger_how.
 */
static inline enum shca_linger_how shca_linger_next(struct shca_linger *l,
						    u32 rx_reqs, u32 cons)
{
	bool talking = shca_linger_talking(l, rx_reqs);

	if (l->how != SHCA_LINGER_NONE) {
		if (shca_linger_again(l, cons))
			return SHCA_LINGER_TIMED;
		if (l->how == SHCA_LINGER_RUN || cons == l->cons) {
			l->how = SHCA_LINGER_NONE;
			return SHCA_LINGER_NONE;
		}
	}
	if (talking || rx_reqs != l->rx_rang)
		l->period_ns = 0;
	if (!shca_linger_want(l, rx_reqs)) {
		l->how = SHCA_LINGER_NONE;
		return SHCA_LINGER_NONE;
	}
	l->cons = cons;
	l->how = l->period_ns ? SHCA_LINGER_TIMED : SHCA_LINGER_RUN;
	return l->how;
}

/**
 * shca_linger_delay - how long a timed linger lasts
 * @l: the engine's linger state, after shca_linger_next() said TIMED
 *
 * Return: nanoseconds: the period, doubled for each linger in a row that
 * found nothing.
 */
static inline u64 shca_linger_delay(const struct shca_linger *l)
{
	return (u64)l->period_ns << l->empty;
}

/**
 * shca_linger_rang - a doorbell found the engine idle
 * @l: the engine's linger state
 * @gap_ns: the time since the engine went idle
 * @rx_reqs: the requests the QP's own RQ engine has taken so far
 *
 * A doorbell soon after the engine went idle, from a consumer that does
 * not converse (its QP took no request since it went idle, nor since the
 * last doorbell: on the wire a ping-pong's next request can be taken
 * before the ACK that lets the engine go idle), makes the lingers timed,
 * for twice that gap.
 */
static inline void shca_linger_rang(struct shca_linger *l, u64 gap_ns,
				    u32 rx_reqs)
{
	bool quiet = rx_reqs == l->rx_rang;

	l->rx_rang = rx_reqs;
	l->rang_talk = !quiet;
	if (l->hold) {
		l->hold--;
		return;
	}
	if (gap_ns > SHCA_LINGER_GAP_MAX_NS || !quiet ||
	    shca_linger_talking(l, rx_reqs)) {
		l->period_ns = 0;
		return;
	}
	l->period_ns = clamp_t(u64, 2 * gap_ns, SHCA_LINGER_MIN_NS,
			       SHCA_LINGER_MAX_NS);
	l->empty = 0;
}

#endif /* SHCA_ENGINE_LOGIC_H */
