// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: which queued wire packets share one UDP GSO datagram
 * (gso_logic.h): none larger than the first, and the segment and byte
 * limits.
 */
#include <kunit/test.h>

#include "gso_logic.h"

#define MTU_PKT		1040	/* BTH + 1 KiB + ICRC */
#define FIRST_PKT	1056	/* with a RETH */
#define BIG		60000
#define SEGS		64

/* Equal packets join until the segment limit. */
static void shca_gso_test_equal(struct kunit *test)
{
	struct shca_gso_run r = {};
	int i;

	for (i = 0; i < SEGS; i++)
		KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, U32_MAX,
						      SEGS));
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, MTU_PKT, U32_MAX, SEGS));
	KUNIT_EXPECT_EQ(test, r.segs, SEGS);
	KUNIT_EXPECT_EQ(test, r.seg, MTU_PKT);
	KUNIT_EXPECT_EQ(test, r.bytes, SEGS * MTU_PKT);
}

/* Shorter packets join anywhere; a longer one never does. */
static void shca_gso_test_shorter(struct kunit *test)
{
	struct shca_gso_run r = {};

	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, BIG, SEGS));
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, 300, BIG, SEGS));
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, BIG, SEGS));
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, 28, BIG, SEGS));
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, MTU_PKT + 1, BIG, SEGS));
	KUNIT_EXPECT_EQ(test, r.segs, 4);
	KUNIT_EXPECT_EQ(test, r.seg, MTU_PKT);
	KUNIT_EXPECT_EQ(test, r.bytes, 2 * MTU_PKT + 328);
}

/* gso_size is the first packet's: a shorter first keeps longer ones out. */
static void shca_gso_test_sizes(struct kunit *test)
{
	struct shca_gso_run r = {};

	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, BIG, SEGS));
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, FIRST_PKT, BIG, SEGS));
	KUNIT_EXPECT_EQ(test, r.segs, 1);

	r = (struct shca_gso_run){};
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, FIRST_PKT, BIG, SEGS));
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, BIG, SEGS));
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, FIRST_PKT, BIG, SEGS));
	KUNIT_EXPECT_EQ(test, r.segs, 3);
	KUNIT_EXPECT_EQ(test, r.seg, FIRST_PKT);

	/* an empty packet never joins */
	r = (struct shca_gso_run){};
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, BIG, SEGS));
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, 0, BIG, SEGS));
}

/* The byte limit: the run stops before it, whatever the first packet. */
static void shca_gso_test_bytes(struct kunit *test)
{
	u32 max = 10 * MTU_PKT + 100;
	struct shca_gso_run r = {};
	int i;

	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, max, SEGS));
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, MTU_PKT, max, SEGS));
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, 100, max, SEGS));
	KUNIT_EXPECT_EQ(test, r.bytes, max);
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, 1, max, SEGS));

	/* a first packet over the limit stays alone (no wrap-around) */
	r = (struct shca_gso_run){};
	KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, MTU_PKT, 500, SEGS));
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, 4, 500, SEGS));
	KUNIT_EXPECT_EQ(test, r.segs, 1);
}

/*
 * 4 KiB WRITEs (a first packet with a RETH, three without) make one run
 * over many messages, up to the segment limit.
 */
static void shca_gso_test_messages(struct kunit *test)
{
	struct shca_gso_run r = {};
	int i;

	for (i = 0; i < SEGS; i++)
		KUNIT_EXPECT_TRUE(test, shca_gso_join(&r, i % 4 ? MTU_PKT :
							    FIRST_PKT,
						      BIG * 2, SEGS));
	KUNIT_EXPECT_EQ(test, r.segs, SEGS);
	KUNIT_EXPECT_FALSE(test, shca_gso_join(&r, FIRST_PKT, BIG * 2, SEGS));
}

static struct kunit_case shca_gso_test_cases[] = {
	KUNIT_CASE(shca_gso_test_equal),
	KUNIT_CASE(shca_gso_test_shorter),
	KUNIT_CASE(shca_gso_test_sizes),
	KUNIT_CASE(shca_gso_test_bytes),
	KUNIT_CASE(shca_gso_test_messages),
	{}
};

static struct kunit_suite shca_gso_test_suite = {
	.name = "shca_gso",
	.test_cases = shca_gso_test_cases,
};

kunit_test_suites(&shca_gso_test_suite);
