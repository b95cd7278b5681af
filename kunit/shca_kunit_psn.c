// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: 24-bit PSN arithmetic (psn.h).
 */
#include <kunit/test.h>

#include "psn.h"

static void shca_psn_test_add_wrap(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_psn_add(0, 1), 1U);
	KUNIT_EXPECT_EQ(test, shca_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, shca_psn_add(0xfffffe, 5), 3U);
	KUNIT_EXPECT_EQ(test, shca_psn_add(0x123456, 0x1000000), 0x123456U);
	KUNIT_EXPECT_EQ(test, shca_psn_add(0x800000, 0x800000), 0U);
	KUNIT_EXPECT_EQ(test, shca_psn_mask(0xff123456), 0x123456U);
	KUNIT_EXPECT_EQ(test, shca_psn_mask(0x1000000), 0U);
	/* garbage above bit 23 of the input is ignored */
	KUNIT_EXPECT_EQ(test, shca_psn_add(0x80ffffff, 2), 1U);
}

static void shca_psn_test_diff(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_psn_diff(5, 5), 0);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(7, 5), 2);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(5, 7), -2);
	/* across the wrap */
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0, 0xffffff), 1);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0xffffff, 0), -1);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(2, 0xfffffd), 5);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0xfffffd, 2), -5);
	/* the ends of the signed range */
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0x800000, 0), -0x800000);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0, 0x800000), -0x800000);
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0, 0x800001), 0x7fffff);
	/* top byte ignored */
	KUNIT_EXPECT_EQ(test, shca_psn_diff(0xab000003, 0xcd000001), 2);
}

static void shca_psn_test_add_diff_inverse(struct kunit *test)
{
	static const u32 bases[] = { 0, 1, 0x7fffff, 0x800000, 0xfffff0,
				     0xffffff };
	static const s32 deltas[] = { 0, 1, -1, 16, -16, 0x7fffff, -0x800000 };
	int i, j;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		for (j = 0; j < ARRAY_SIZE(deltas); j++) {
			u32 b = bases[i];
			u32 a = shca_psn_add(b, (u32)deltas[j]);

			KUNIT_EXPECT_EQ(test, shca_psn_diff(a, b), deltas[j]);
		}
	}
}

static void shca_psn_test_before_after(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, shca_psn_before(1, 2));
	KUNIT_EXPECT_FALSE(test, shca_psn_before(2, 1));
	KUNIT_EXPECT_FALSE(test, shca_psn_before(3, 3));
	KUNIT_EXPECT_FALSE(test, shca_psn_after(3, 3));
	KUNIT_EXPECT_TRUE(test, shca_psn_after(2, 1));
	/* wrap: 0 comes after 0xffffff */
	KUNIT_EXPECT_TRUE(test, shca_psn_after(0, 0xffffff));
	KUNIT_EXPECT_TRUE(test, shca_psn_before(0xffffff, 0));
	KUNIT_EXPECT_TRUE(test, shca_psn_after(0x10, 0xfffff0));
	/* half the ring away: the older side wins */
	KUNIT_EXPECT_TRUE(test, shca_psn_after(0x7fffff, 0));
	KUNIT_EXPECT_TRUE(test, shca_psn_before(0x800000, 0));
	KUNIT_EXPECT_FALSE(test, shca_psn_after(0x800000, 0));
}

static void shca_psn_test_window(struct kunit *test)
{
	/* [10, 20) */
	KUNIT_EXPECT_FALSE(test, shca_psn_in_window(9, 10, 10));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(10, 10, 10));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(19, 10, 10));
	KUNIT_EXPECT_FALSE(test, shca_psn_in_window(20, 10, 10));
	/* [0xfffffe, 2) across the wrap */
	KUNIT_EXPECT_FALSE(test, shca_psn_in_window(0xfffffd, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(0xfffffe, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(0xffffff, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(0, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(1, 0xfffffe, 4));
	KUNIT_EXPECT_FALSE(test, shca_psn_in_window(2, 0xfffffe, 4));
	/* empty and maximal windows */
	KUNIT_EXPECT_FALSE(test, shca_psn_in_window(10, 10, 0));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(0x7fffff, 0,
						   SHCA_PSN_MAX_WINDOW));
	KUNIT_EXPECT_FALSE(test, shca_psn_in_window(0x800000, 0,
						    SHCA_PSN_MAX_WINDOW));
	KUNIT_EXPECT_TRUE(test, shca_psn_in_window(0x1000005, 5, 1));
}

static struct kunit_case shca_psn_test_cases[] = {
	KUNIT_CASE(shca_psn_test_add_wrap),
	KUNIT_CASE(shca_psn_test_diff),
	KUNIT_CASE(shca_psn_test_add_diff_inverse),
	KUNIT_CASE(shca_psn_test_before_after),
	KUNIT_CASE(shca_psn_test_window),
	{}
};

static struct kunit_suite shca_psn_test_suite = {
	.name = "shca_psn",
	.test_cases = shca_psn_test_cases,
};

kunit_test_suites(&shca_psn_test_suite);
