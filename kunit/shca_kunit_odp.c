// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: on-demand paging rules (odp_logic.h) - what registration is
 * implicit, the page list entries a copy needs, whether they are mapped,
 * the ibv_advise_mr() advices and the ODP capabilities.
 */
#include <kunit/test.h>

#include "odp_logic.h"

static void shca_odp_test_va(struct kunit *test)
{
	/* iova and user address differ: the offset into the MR carries */
	KUNIT_EXPECT_EQ(test, shca_odp_va(0x1000, 0x7f0000001000ULL, 0x1234),
			0x7f0000001234ULL);
	KUNIT_EXPECT_EQ(test, shca_odp_va(0, 0x5000, 0), 0x5000ULL);
	/* a zero-based-looking iova above the user address */
	KUNIT_EXPECT_EQ(test, shca_odp_va(0x90000, 0x10000, 0x90010),
			0x10010ULL);
}

static void shca_odp_test_implicit(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, shca_odp_implicit(0, U64_MAX));
	KUNIT_EXPECT_FALSE(test, shca_odp_implicit(0, U64_MAX - 1));
	KUNIT_EXPECT_FALSE(test, shca_odp_implicit(0x1000, U64_MAX));
	KUNIT_EXPECT_FALSE(test, shca_odp_implicit(0, 0x1000));
}

static void shca_odp_test_span(struct kunit *test)
{
	u64 first = 99, count = 99;

	/* one byte, in the middle of the second page */
	KUNIT_EXPECT_TRUE(test, shca_odp_span(0x10000, 12, 4, 0x11800, 1,
					      &first, &count));
	KUNIT_EXPECT_EQ(test, first, 1ULL);
	KUNIT_EXPECT_EQ(test, count, 1ULL);
	/* the last byte of page 0 to the first of page 1 */
	KUNIT_EXPECT_TRUE(test, shca_odp_span(0x10000, 12, 4, 0x10fff, 2,
					      &first, &count));
	KUNIT_EXPECT_EQ(test, first, 0ULL);
	KUNIT_EXPECT_EQ(test, count, 2ULL);
	/* the whole list, exactly */
	KUNIT_EXPECT_TRUE(test, shca_odp_span(0x10000, 12, 4, 0x10000, 0x4000,
					      &first, &count));
	KUNIT_EXPECT_EQ(test, first, 0ULL);
	KUNIT_EXPECT_EQ(test, count, 4ULL);
	/* one byte past the list, below it, empty, wrapping */
	KUNIT_EXPECT_FALSE(test, shca_odp_span(0x10000, 12, 4, 0x10000,
					       0x4001, &first, &count));
	KUNIT_EXPECT_FALSE(test, shca_odp_span(0x10000, 12, 4, 0xffff, 1,
					       &first, &count));
	KUNIT_EXPECT_FALSE(test, shca_odp_span(0x10000, 12, 4, 0x10000, 0,
					       &first, &count));
	KUNIT_EXPECT_FALSE(test, shca_odp_span(0x10000, 12, ~0ULL, ~0ULL, 2,
					       &first, &count));
	/* 2 MiB pages */
	KUNIT_EXPECT_TRUE(test, shca_odp_span(0x200000, 21, 2, 0x3fffff, 2,
					      &first, &count));
	KUNIT_EXPECT_EQ(test, first, 0ULL);
	KUNIT_EXPECT_EQ(test, count, 2ULL);
}

static void shca_odp_test_mapped(struct kunit *test)
{
	const u64 r = ODP_READ_ALLOWED_BIT, w = ODP_WRITE_ALLOWED_BIT;
	dma_addr_t list[4] = { 0x1000 | r, 0x2000 | r | w, 0, 0x4000 | r | w };

	KUNIT_EXPECT_TRUE(test, shca_odp_mapped(list, 0, 2, r));
	KUNIT_EXPECT_FALSE(test, shca_odp_mapped(list, 0, 2, r | w));
	KUNIT_EXPECT_TRUE(test, shca_odp_mapped(list, 1, 1, r | w));
	/* an unmapped entry in the middle */
	KUNIT_EXPECT_FALSE(test, shca_odp_mapped(list, 1, 3, r));
	KUNIT_EXPECT_TRUE(test, shca_odp_mapped(list, 3, 1, r | w));
	KUNIT_EXPECT_EQ(test, shca_odp_perm(false), r);
	KUNIT_EXPECT_EQ(test, shca_odp_perm(true), r | w);
}

static void shca_odp_test_advice(struct kunit *test)
{
	bool fault = false;
	u64 perm = 0;

	KUNIT_EXPECT_EQ(test, shca_odp_advice(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH,
					      &perm, &fault), 0);
	KUNIT_EXPECT_EQ(test, perm, shca_odp_perm(false));
	KUNIT_EXPECT_TRUE(test, fault);
	KUNIT_EXPECT_EQ(test,
			shca_odp_advice(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					&perm, &fault), 0);
	KUNIT_EXPECT_EQ(test, perm, shca_odp_perm(true));
	KUNIT_EXPECT_TRUE(test, fault);
	KUNIT_EXPECT_EQ(test,
			shca_odp_advice(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
					&perm, &fault), 0);
	KUNIT_EXPECT_EQ(test, perm, shca_odp_perm(false));
	KUNIT_EXPECT_FALSE(test, fault);
	KUNIT_EXPECT_EQ(test, shca_odp_advice(3, &perm, &fault), -EOPNOTSUPP);
}

static void shca_odp_test_caps(struct kunit *test)
{
	const u32 all = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
			IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	struct ib_odp_caps caps = {};

	shca_odp_fill_caps(&caps);
	/* explicit and implicit ODP */
	KUNIT_EXPECT_EQ(test, caps.general_caps,
			(u64)(IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT));
	KUNIT_EXPECT_EQ(test, caps.per_transport_caps.rc_odp_caps, all);
	KUNIT_EXPECT_EQ(test, caps.per_transport_caps.xrc_odp_caps, all);
	/* UC: no READ, no atomics, no SRQ */
	KUNIT_EXPECT_EQ(test, caps.per_transport_caps.uc_odp_caps,
			(u32)(IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			      IB_ODP_SUPPORT_WRITE));
	KUNIT_EXPECT_EQ(test, caps.per_transport_caps.ud_odp_caps,
			(u32)(IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			      IB_ODP_SUPPORT_SRQ_RECV));
}

static struct kunit_case shca_odp_test_cases[] = {
	KUNIT_CASE(shca_odp_test_implicit),
	KUNIT_CASE(shca_odp_test_va),
	KUNIT_CASE(shca_odp_test_span),
	KUNIT_CASE(shca_odp_test_mapped),
	KUNIT_CASE(shca_odp_test_advice),
	KUNIT_CASE(shca_odp_test_caps),
	{}
};

static struct kunit_suite shca_odp_test_suite = {
	.name = "shca_odp",
	.test_cases = shca_odp_test_cases,
};

kunit_test_suites(&shca_odp_test_suite);
