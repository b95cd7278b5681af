/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: when an idle SQ engine lingers (engine.c), as a pure function.
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
 * if its QP received a request since the engine last went idle (the
 * consumer converses); one that only sends does.  On the wire a linger
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
 */
#ifndef SHCA_ENGINE_LOGIC_H
#define SHCA_ENGINE_LOGIC_H

#include <linux/types.h>

struct shca_linger {
	u32 rx_seen;	/* the QP's request count when it last went idle */
	bool inlined;	/* a request ran inline since then */
};

/**
 * shca_linger_talking - has the QP received a request since it went idle?
 * @l: the engine's linger state
 * @rx_reqs: the requests the QP's own RQ engine has taken so far
 *
 * Return: true for a consumer that converses (a ping-pong, an RPC).
 */
static inline bool shca_linger_talking(const struct shca_linger *l,
				       u32 rx_reqs)
{
	return rx_reqs != l->rx_seen;
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
	return want;
}

#endif /* SHCA_ENGINE_LOGIC_H */
