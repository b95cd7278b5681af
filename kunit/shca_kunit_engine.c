// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: when an idle SQ engine lingers (engine_logic.h): a QP that only
 * sends lingers; one that received a request since it last went idle,
 * or between its last two doorbells (a peer that answered before the
 * engine went idle), as a ping-pong or an RPC does, and whose requests
 * ran inline at a same-host target does not; a conversing QP's requests are the ones that run
 * inline.  Timed lingers (shca_linger_next(), shca_linger_rang()): a
 * doorbell soon after idle from a streaming consumer makes them timed, for
 * twice the gap within bounds; they go on while they find WRs, back off
 * when they find none and end after SHCA_LINGER_EMPTY_MAX; a timed linger
 * that finds one WR (a serial consumer) ends them for SHCA_LINGER_HOLD
 * doorbells; a conversing QP's or a slow doorbell never makes them timed.
 */
#include <kunit/test.h>

#include "engine_logic.h"

static void shca_engine_test_sender(struct kunit *test)
{
	struct shca_linger l = {};
	int i;

	for (i = 0; i < 100; i++) {
		KUNIT_EXPECT_FALSE(test, shca_linger_talking(&l, 0));
		KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, 0));
	}
}

static void shca_engine_test_pingpong(struct kunit *test)
{
	struct shca_linger l = {};
	u32 rx = 0;
	int i;

	/* one request in between each time the engine goes idle */
	for (i = 0; i < 100; i++) {
		KUNIT_EXPECT_FALSE(test, shca_linger_talking(&l, rx));
		rx++;
		KUNIT_EXPECT_TRUE(test, shca_linger_talking(&l, rx));
		shca_linger_inlined(&l);
		KUNIT_EXPECT_FALSE(test, shca_linger_want(&l, rx));
	}
	/* the peer stops answering: lingers again */
	shca_linger_inlined(&l);
	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, rx));
	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, rx));
	/* requests in bulk count as one "talking" */
	rx += 1000;
	shca_linger_inlined(&l);
	KUNIT_EXPECT_FALSE(test, shca_linger_want(&l, rx));
	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, rx));
}

static void shca_engine_test_wire(struct kunit *test)
{
	struct shca_linger l = {};
	u32 rx = 0;
	int i;

	/* a ping-pong whose requests did not run inline (the wire) lingers */
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, ++rx));
	/* one inline request counts until the next idle moment only */
	shca_linger_inlined(&l);
	KUNIT_EXPECT_FALSE(test, shca_linger_want(&l, ++rx));
	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, ++rx));
}

static void shca_engine_test_early_answer(struct kunit *test)
{
	struct shca_linger l = {};
	u32 rx = 0;
	int i;

	shca_linger_rang(&l, 10 * NSEC_PER_USEC, rx);
	for (i = 0; i < 10; i++) {
		/* the first request of the exchange cannot run inline */
		KUNIT_EXPECT_EQ(test, shca_linger_talking(&l, rx), i > 0);
		if (shca_linger_talking(&l, rx))
			shca_linger_inlined(&l);
		/* the peer's answer is taken before the engine goes idle */
		rx++;
		KUNIT_EXPECT_EQ(test, shca_linger_want(&l, rx), i == 0);
		/* so only the next doorbell shows the consumer converses */
		KUNIT_EXPECT_FALSE(test, shca_linger_talking(&l, rx));
		shca_linger_rang(&l, 10 * NSEC_PER_USEC, rx);
		KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
	}
	/* the peer stops: a quiet doorbell after the next idle moment */
	KUNIT_EXPECT_TRUE(test, shca_linger_talking(&l, rx));
	shca_linger_inlined(&l);
	KUNIT_EXPECT_FALSE(test, shca_linger_want(&l, rx));
	shca_linger_rang(&l, 10 * NSEC_PER_USEC, rx);
	KUNIT_EXPECT_FALSE(test, shca_linger_talking(&l, rx));
}

static void shca_engine_test_wrap(struct kunit *test)
{
	struct shca_linger l = { .rx_seen = U32_MAX };

	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, U32_MAX));
	shca_linger_inlined(&l);
	KUNIT_EXPECT_FALSE(test, shca_linger_want(&l, 0));	/* wrapped */
	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, 0));
}

/* an engine idle after @posted more WRs were consumed: what does it do? */
static enum shca_linger_how idle_after(struct shca_linger *l, u32 *cons,
				       u32 posted, u32 rx)
{
	*cons += posted;
	return shca_linger_next(l, rx, *cons);
}

static void shca_engine_test_run_lingers(struct kunit *test)
{
	struct shca_linger l = {};
	u32 cons = 0;
	int i;

	/* a run's linger: once per idle moment, found posts or not */
	for (i = 0; i < 10; i++) {
		KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, i & 1, 0),
				SHCA_LINGER_RUN);
		KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, i & 2, 0),
				SHCA_LINGER_NONE);
	}
	KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
}

static void shca_engine_test_timed_stream(struct kunit *test)
{
	struct shca_linger l = {};
	u32 cons = 0;
	int i;

	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 5, 0), SHCA_LINGER_RUN);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, 0), SHCA_LINGER_NONE);
	/* the doorbell came 15 us after idle: lingers are timed, 30 us */
	shca_linger_rang(&l, 15 * NSEC_PER_USEC, 0);
	KUNIT_EXPECT_EQ(test, l.period_ns, 30 * NSEC_PER_USEC);
	for (i = 0; i < 20; i++) {
		KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 7, 0),
				SHCA_LINGER_TIMED);
		KUNIT_EXPECT_EQ(test, shca_linger_delay(&l),
				30ULL * NSEC_PER_USEC);
	}
	/* the consumer stops: two more, each twice as long, then idle */
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, 0), SHCA_LINGER_TIMED);
	KUNIT_EXPECT_EQ(test, shca_linger_delay(&l), 60ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, 0), SHCA_LINGER_TIMED);
	KUNIT_EXPECT_EQ(test, shca_linger_delay(&l), 120ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, 0), SHCA_LINGER_NONE);
	KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
	/* a backed-off linger that finds posts goes on at the period */
	shca_linger_rang(&l, 10 * NSEC_PER_USEC, 0);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 1, 0), SHCA_LINGER_TIMED);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, 0), SHCA_LINGER_TIMED);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 4, 0), SHCA_LINGER_TIMED);
	KUNIT_EXPECT_EQ(test, shca_linger_delay(&l), 20ULL * NSEC_PER_USEC);
}

static void shca_engine_test_timed_bounds(struct kunit *test)
{
	struct shca_linger l = {};

	shca_linger_rang(&l, 100, 0);
	KUNIT_EXPECT_EQ(test, l.period_ns, (u32)SHCA_LINGER_MIN_NS);
	shca_linger_rang(&l, SHCA_LINGER_GAP_MAX_NS, 0);
	KUNIT_EXPECT_EQ(test, l.period_ns, (u32)SHCA_LINGER_MAX_NS);
	/* a slow doorbell (or one after seconds idle) ends timed lingers */
	shca_linger_rang(&l, SHCA_LINGER_GAP_MAX_NS + 1, 0);
	KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
	shca_linger_rang(&l, U64_MAX, 0);
	KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
}

static void shca_engine_test_timed_serial(struct kunit *test)
{
	struct shca_linger l = {};
	u32 cons = 0;
	int i;

	shca_linger_rang(&l, 10 * NSEC_PER_USEC, 0);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 1, 0), SHCA_LINGER_TIMED);
	/* the timed linger found one WR: lingers are runs again */
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 1, 0), SHCA_LINGER_RUN);
	KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, 0), SHCA_LINGER_NONE);
	/* and the next SHCA_LINGER_HOLD quick doorbells change nothing */
	for (i = 0; i < SHCA_LINGER_HOLD; i++) {
		shca_linger_rang(&l, 10 * NSEC_PER_USEC, 0);
		KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
	}
	shca_linger_rang(&l, 10 * NSEC_PER_USEC, 0);
	KUNIT_EXPECT_EQ(test, l.period_ns, 20 * NSEC_PER_USEC);
}

static void shca_engine_test_timed_talking(struct kunit *test)
{
	struct shca_linger l = {};
	u32 cons = 0, rx = 0;
	int i;

	/* a quick doorbell from a QP that received a request: no timer */
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 1, rx), SHCA_LINGER_RUN);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, rx), SHCA_LINGER_NONE);
	shca_linger_rang(&l, 10 * NSEC_PER_USEC, ++rx);
	KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
	/*
	 * A wire ping-pong whose peer's next request was taken before the
	 * engine went idle: not "talking" since idle, but a request came
	 * since the last doorbell each time.
	 */
	for (i = 0; i < 10; i++) {
		KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 1, ++rx),
				SHCA_LINGER_RUN);
		KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 0, rx),
				SHCA_LINGER_NONE);
		shca_linger_rang(&l, 10 * NSEC_PER_USEC, rx);
		KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
	}
	/* no request since the last doorbell: timed again */
	shca_linger_rang(&l, 10 * NSEC_PER_USEC, rx);
	KUNIT_EXPECT_EQ(test, l.period_ns, 20 * NSEC_PER_USEC);
	/* timed lingers end once the QP takes a request */
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 3, rx), SHCA_LINGER_TIMED);
	KUNIT_EXPECT_EQ(test, idle_after(&l, &cons, 3, ++rx), SHCA_LINGER_RUN);
	KUNIT_EXPECT_EQ(test, l.period_ns, 0U);
}

static struct kunit_case shca_engine_test_cases[] = {
	KUNIT_CASE(shca_engine_test_sender),
	KUNIT_CASE(shca_engine_test_pingpong),
	KUNIT_CASE(shca_engine_test_wire),
	KUNIT_CASE(shca_engine_test_early_answer),
	KUNIT_CASE(shca_engine_test_wrap),
	KUNIT_CASE(shca_engine_test_run_lingers),
	KUNIT_CASE(shca_engine_test_timed_stream),
	KUNIT_CASE(shca_engine_test_timed_bounds),
	KUNIT_CASE(shca_engine_test_timed_serial),
	KUNIT_CASE(shca_engine_test_timed_talking),
	{}
};

static struct kunit_suite shca_engine_test_suite = {
	.name = "shca_engine",
	.test_cases = shca_engine_test_cases,
};

kunit_test_suites(&shca_engine_test_suite);
