// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the arming rules of a CQ (cq_logic.h): the arm word of a user
 * CQ's mapped ctl, merged requests, and which completions raise the
 * event.
 */
#include <kunit/test.h>

#include "cq_logic.h"

static void shca_cq_test_arm_word(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(0), 0);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(SHCA_CQ_ARM_NEXT),
			IB_CQ_NEXT_COMP);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(SHCA_CQ_ARM_SOLICITED),
			IB_CQ_SOLICITED);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(SHCA_CQ_ARM_NEXT |
					       SHCA_CQ_ARM_SOLICITED),
			IB_CQ_NEXT_COMP);
	/* hostile bits around the two that count are ignored */
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(~(u32)SHCA_CQ_ARM_MASK), 0);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(0xfffffffe), IB_CQ_SOLICITED);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(0xffffffff), IB_CQ_NEXT_COMP);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_word(0x80000001), IB_CQ_NEXT_COMP);
}

static void shca_cq_test_arm_merge(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_cq_arm_merge(0, 0), 0);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_merge(0, IB_CQ_SOLICITED),
			IB_CQ_SOLICITED);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_merge(0, IB_CQ_NEXT_COMP),
			IB_CQ_NEXT_COMP);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_merge(IB_CQ_SOLICITED,
						IB_CQ_NEXT_COMP),
			IB_CQ_NEXT_COMP);
	/* NEXT is never narrowed to SOLICITED, and nothing disarms */
	KUNIT_EXPECT_EQ(test, shca_cq_arm_merge(IB_CQ_NEXT_COMP,
						IB_CQ_SOLICITED),
			IB_CQ_NEXT_COMP);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_merge(IB_CQ_SOLICITED, 0),
			IB_CQ_SOLICITED);
	KUNIT_EXPECT_EQ(test, shca_cq_arm_merge(IB_CQ_NEXT_COMP, 0),
			IB_CQ_NEXT_COMP);
}

static void shca_cq_test_notify_due(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, shca_cq_notify_due(0, true, IB_WC_SUCCESS));
	KUNIT_EXPECT_FALSE(test, shca_cq_notify_due(0, false,
						    IB_WC_GENERAL_ERR));
	KUNIT_EXPECT_TRUE(test, shca_cq_notify_due(IB_CQ_NEXT_COMP, false,
						   IB_WC_SUCCESS));
	KUNIT_EXPECT_FALSE(test, shca_cq_notify_due(IB_CQ_SOLICITED, false,
						    IB_WC_SUCCESS));
	KUNIT_EXPECT_TRUE(test, shca_cq_notify_due(IB_CQ_SOLICITED, true,
						   IB_WC_SUCCESS));
	/* an error completion is reported to a solicited-only arm too */
	KUNIT_EXPECT_TRUE(test, shca_cq_notify_due(IB_CQ_SOLICITED, false,
						   IB_WC_WR_FLUSH_ERR));
}

static struct kunit_case shca_cq_test_cases[] = {
	KUNIT_CASE(shca_cq_test_arm_word),
	KUNIT_CASE(shca_cq_test_arm_merge),
	KUNIT_CASE(shca_cq_test_notify_due),
	{}
};

static struct kunit_suite shca_cq_test_suite = {
	.name = "shca_cq",
	.test_cases = shca_cq_test_cases,
};

kunit_test_suites(&shca_cq_test_suite);
