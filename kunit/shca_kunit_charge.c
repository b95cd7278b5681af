// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the ring memory charge's arithmetic (charge_logic.h) - page
 * rounding, RLIMIT_MEMLOCK in pages, the device ceiling, the limit
 * comparison at its edges and on wrap.
 */
#include <kunit/test.h>
#include <linux/resource.h>

#include "charge_logic.h"

static void shca_charge_test_pages(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_charge_pages(0, 12), 0ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_pages(1, 12), 1ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_pages(4096, 12), 1ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_pages(4097, 12), 2ULL);
	/* a 16384-deep SQ of 256-byte WQEs plus its control page */
	KUNIT_EXPECT_EQ(test, shca_charge_pages((16384ULL << 8) + 4096, 12),
			1025ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_pages(65536, 16), 1ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_pages(65537, 16), 2ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_pages(U64_MAX, 12),
			(U64_MAX >> 12) + 1);
}

static void shca_charge_test_rlimit(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_charge_rlimit_pages(64ULL << 20, 12),
			16384ULL);
	/* rounded down: 4095 bytes lock no page */
	KUNIT_EXPECT_EQ(test, shca_charge_rlimit_pages(4095, 12), 0ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_rlimit_pages(8191, 12), 1ULL);
	/* unlimited stays above any count a charge can reach */
	KUNIT_EXPECT_GT(test, shca_charge_rlimit_pages(RLIM_INFINITY, 12),
			1ULL << 50);
}

static void shca_charge_test_ceiling(struct kunit *test)
{
	/* 0: a quarter of RAM */
	KUNIT_EXPECT_EQ(test, shca_charge_ceiling(0, 786432, 12), 196608ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_ceiling(0, 3, 12), 0ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_ceiling(1, 786432, 12), 256ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_ceiling(64, 0, 12), 16384ULL);
	KUNIT_EXPECT_EQ(test, shca_charge_ceiling(64, 0, 16), 1024ULL);
	/* the largest parameter does not wrap */
	KUNIT_EXPECT_EQ(test, shca_charge_ceiling(U32_MAX, 0, 12),
			(u64)U32_MAX << 8);
}

static void shca_charge_test_within(struct kunit *test)
{
	/* exactly at the limit is allowed, one page more is not */
	KUNIT_EXPECT_TRUE(test, shca_charge_within(16384, 1025, 16384));
	KUNIT_EXPECT_FALSE(test, shca_charge_within(16385, 1025, 16384));
	KUNIT_EXPECT_TRUE(test, shca_charge_within(0, 0, 0));
	KUNIT_EXPECT_FALSE(test, shca_charge_within(1, 1, 0));
	/* a sum that wrapped around is never within */
	KUNIT_EXPECT_FALSE(test, shca_charge_within(5, 10, U64_MAX));
	KUNIT_EXPECT_TRUE(test, shca_charge_within(U64_MAX, 10, U64_MAX));
}

static void shca_charge_test_vmalloc(struct kunit *test)
{
	/* up to kmalloc's largest cache: kmalloc */
	KUNIT_EXPECT_FALSE(test, shca_alloc_wants_vmalloc(8192, 8192, 12));
	KUNIT_EXPECT_FALSE(test, shca_alloc_wants_vmalloc(100, 8192, 12));
	/* a power of two of pages: kmalloc wastes nothing */
	KUNIT_EXPECT_FALSE(test, shca_alloc_wants_vmalloc(65536, 8192, 12));
	KUNIT_EXPECT_FALSE(test, shca_alloc_wants_vmalloc(16384, 8192, 12));
	/* 15 of 16 pages: one wasted, within an eighth */
	KUNIT_EXPECT_FALSE(test, shca_alloc_wants_vmalloc(15 * 4096, 8192, 12));
	/* 76 KiB (256 shadow WQEs of 304 B): 19 pages of 32 */
	KUNIT_EXPECT_TRUE(test, shca_alloc_wants_vmalloc(256 * 304, 8192, 12));
	/* just past a power of two: 17 pages of 32 */
	KUNIT_EXPECT_TRUE(test, shca_alloc_wants_vmalloc(65537, 8192, 12));
	/* 13 of 16 pages: 3 wasted, more than an eighth */
	KUNIT_EXPECT_TRUE(test, shca_alloc_wants_vmalloc(13 * 4096, 8192, 12));
	/* 14 of 16: 2 wasted, exactly an eighth: kmalloc */
	KUNIT_EXPECT_FALSE(test, shca_alloc_wants_vmalloc(14 * 4096, 8192, 12));
}

static struct kunit_case shca_charge_test_cases[] = {
	KUNIT_CASE(shca_charge_test_pages),
	KUNIT_CASE(shca_charge_test_rlimit),
	KUNIT_CASE(shca_charge_test_ceiling),
	KUNIT_CASE(shca_charge_test_within),
	KUNIT_CASE(shca_charge_test_vmalloc),
	{}
};

static struct kunit_suite shca_charge_test_suite = {
	.name = "shca_charge",
	.test_cases = shca_charge_test_cases,
};

kunit_test_suites(&shca_charge_test_suite);
