// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: when an idle SQ engine lingers (engine_logic.h): a QP that only
 * sends lingers; one that received a request since it last went idle
 * (a ping-pong, an RPC) and whose requests ran inline at a same-host
 * target does not; a conversing QP's requests are the ones that run
 * inline.
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

static void shca_engine_test_wrap(struct kunit *test)
{
	struct shca_linger l = { .rx_seen = U32_MAX };

	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, U32_MAX));
	shca_linger_inlined(&l);
	KUNIT_EXPECT_FALSE(test, shca_linger_want(&l, 0));	/* wrapped */
	KUNIT_EXPECT_TRUE(test, shca_linger_want(&l, 0));
}

static struct kunit_case shca_engine_test_cases[] = {
	KUNIT_CASE(shca_engine_test_sender),
	KUNIT_CASE(shca_engine_test_pingpong),
	KUNIT_CASE(shca_engine_test_wire),
	KUNIT_CASE(shca_engine_test_wrap),
	{}
};

static struct kunit_suite shca_engine_test_suite = {
	.name = "shca_engine",
	.test_cases = shca_engine_test_cases,
};

kunit_test_suites(&shca_engine_test_suite);
