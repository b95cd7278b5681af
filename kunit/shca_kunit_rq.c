// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the checks a receive WQE passes where it leaves its ring
 * (rq_logic.h): the SGE count against the queue's limit and the device's,
 * and the sum of the lengths against 32 bits.
 */
#include <kunit/test.h>
#include <linux/kernel.h>

#include "shca.h"
#include "rq_logic.h"

/* SGE counts 0, max, max + 1 and 0xffffffff, for a full and a small queue */
static void shca_rq_test_num_sge(struct kunit *test)
{
	static const u32 limits[] = { SHCA_MAX_SGE, 1 };
	u32 i, max;

	for (i = 0; i < ARRAY_SIZE(limits); i++) {
		max = limits[i];
		KUNIT_EXPECT_TRUE(test, shca_rwqe_num_sge_ok(0, max,
							     SHCA_MAX_SGE));
		KUNIT_EXPECT_TRUE(test, shca_rwqe_num_sge_ok(max, max,
							     SHCA_MAX_SGE));
		KUNIT_EXPECT_FALSE(test, shca_rwqe_num_sge_ok(max + 1, max,
							      SHCA_MAX_SGE));
		KUNIT_EXPECT_FALSE(test, shca_rwqe_num_sge_ok(0xffffffff, max,
							      SHCA_MAX_SGE));
	}
	/* a queue limit above the device's never lets more through */
	KUNIT_EXPECT_FALSE(test, shca_rwqe_num_sge_ok(SHCA_MAX_SGE + 1,
						      U32_MAX, SHCA_MAX_SGE));
	KUNIT_EXPECT_FALSE(test, shca_rwqe_num_sge_ok(0xffffffff, U32_MAX,
						      SHCA_MAX_SGE));
	KUNIT_EXPECT_TRUE(test, shca_rwqe_num_sge_ok(SHCA_MAX_SGE, U32_MAX,
						     SHCA_MAX_SGE));
}

/* Lengths: none, zero-length SGEs, exactly 2^32 - 1, and one past it */
static void shca_rq_test_len(struct kunit *test)
{
	struct shca_sge sge[SHCA_MAX_SGE] = {};

	KUNIT_EXPECT_TRUE(test, shca_rwqe_len_ok(sge, 0));
	KUNIT_EXPECT_TRUE(test, shca_rwqe_len_ok(sge, SHCA_MAX_SGE));
	sge[0].length = U32_MAX;
	KUNIT_EXPECT_TRUE(test, shca_rwqe_len_ok(sge, SHCA_MAX_SGE));
	sge[SHCA_MAX_SGE - 1].length = 1;
	KUNIT_EXPECT_FALSE(test, shca_rwqe_len_ok(sge, SHCA_MAX_SGE));
	/* only the first num_sge count */
	KUNIT_EXPECT_TRUE(test, shca_rwqe_len_ok(sge, SHCA_MAX_SGE - 1));
	sge[0].length = U32_MAX / 2 + 1;
	sge[1].length = U32_MAX / 2 + 1;
	KUNIT_EXPECT_FALSE(test, shca_rwqe_len_ok(sge, 2));
}

static struct kunit_case shca_rq_test_cases[] = {
	KUNIT_CASE(shca_rq_test_num_sge),
	KUNIT_CASE(shca_rq_test_len),
	{}
};

static struct kunit_suite shca_rq_test_suite = {
	.name = "shca_rq",
	.test_cases = shca_rq_test_cases,
};

kunit_test_suites(&shca_rq_test_suite);
