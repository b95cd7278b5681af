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

/* The stride a request needs, and what that stride grants. */
static void shca_rq_test_wqe_shift(struct kunit *test)
{
	const u32 shdr = sizeof(struct shca_send_wqe);
	const u32 rhdr = sizeof(struct shca_recv_wqe);

	KUNIT_EXPECT_EQ(test, shdr, 64U);
	KUNIT_EXPECT_EQ(test, rhdr, 16U);
	/* one SGE, no inline: 128-byte send entries, 4 SGEs or 64 bytes */
	KUNIT_EXPECT_EQ(test, shca_wqe_shift(shdr, 1, 0, SHCA_SQ_ENTRY_SHIFT), 7U);
	KUNIT_EXPECT_EQ(test, shca_wqe_sges(7, shdr, SHCA_MAX_SGE), 4U);
	KUNIT_EXPECT_EQ(test, shca_wqe_inline(7, shdr), 64U);
	/* none asked: one is given all the same */
	KUNIT_EXPECT_EQ(test, shca_wqe_shift(shdr, 0, 0, SHCA_SQ_ENTRY_SHIFT), 7U);
	/* the inline bytes decide when they take more */
	KUNIT_EXPECT_EQ(test, shca_wqe_shift(shdr, 1, 65, SHCA_SQ_ENTRY_SHIFT), 8U);
	/* the maxima fill the largest stride exactly */
	KUNIT_EXPECT_EQ(test, shca_wqe_shift(shdr, SHCA_MAX_SGE, SHCA_MAX_INLINE,
					     SHCA_SQ_ENTRY_SHIFT), 8U);
	KUNIT_EXPECT_EQ(test, shca_wqe_sges(8, shdr, SHCA_MAX_SGE), SHCA_MAX_SGE);
	KUNIT_EXPECT_EQ(test, shca_wqe_inline(8, shdr), SHCA_MAX_INLINE);
	/* receive entries: 32 bytes for one SGE, 64 for two or three */
	KUNIT_EXPECT_EQ(test, shca_wqe_shift(rhdr, 1, 0, SHCA_RQ_ENTRY_SHIFT), 5U);
	KUNIT_EXPECT_EQ(test, shca_wqe_sges(5, rhdr, SHCA_MAX_SGE), 1U);
	KUNIT_EXPECT_EQ(test, shca_wqe_shift(rhdr, 2, 0, SHCA_RQ_ENTRY_SHIFT), 6U);
	KUNIT_EXPECT_EQ(test, shca_wqe_sges(6, rhdr, SHCA_MAX_SGE), 3U);
	/* the largest receive stride holds 15, the device's maximum is 12 */
	KUNIT_EXPECT_EQ(test, shca_wqe_shift(rhdr, SHCA_MAX_SGE, 0,
					     SHCA_RQ_ENTRY_SHIFT), 8U);
	KUNIT_EXPECT_EQ(test, shca_wqe_sges(8, rhdr, SHCA_MAX_SGE), SHCA_MAX_SGE);
}

/*
 * Every request within the maxima: the grant covers it, and the header
 * with the granted SGEs or inline bytes fits the stride.
 */
static void shca_rq_test_wqe_grant(struct kunit *test)
{
	const u32 hdr = sizeof(struct shca_send_wqe);
	u32 nsge, inl, shift, sges, room;

	for (nsge = 0; nsge <= SHCA_MAX_SGE; nsge++) {
		for (inl = 0; inl <= SHCA_MAX_INLINE; inl++) {
			shift = shca_wqe_shift(hdr, nsge, inl,
					       SHCA_SQ_ENTRY_SHIFT);
			sges = shca_wqe_sges(shift, hdr, SHCA_MAX_SGE);
			room = shca_wqe_inline(shift, hdr);
			KUNIT_ASSERT_LE(test, shift, (u32)SHCA_SQ_ENTRY_SHIFT);
			KUNIT_ASSERT_GE(test, sges, max(nsge, 1U));
			KUNIT_ASSERT_GE(test, room, inl);
			KUNIT_ASSERT_LE(test, hdr + sges * 16U, 1U << shift);
			KUNIT_ASSERT_EQ(test, hdr + room, 1U << shift);
			/* the grant asks for the same stride again */
			KUNIT_ASSERT_EQ(test, shca_wqe_shift(hdr, sges, room,
							     SHCA_SQ_ENTRY_SHIFT),
					shift);
		}
	}
}

static struct kunit_case shca_rq_test_cases[] = {
	KUNIT_CASE(shca_rq_test_num_sge),
	KUNIT_CASE(shca_rq_test_len),
	KUNIT_CASE(shca_rq_test_wqe_shift),
	KUNIT_CASE(shca_rq_test_wqe_grant),
	{}
};

static struct kunit_suite shca_rq_test_suite = {
	.name = "shca_rq",
	.test_cases = shca_rq_test_cases,
};

kunit_test_suites(&shca_rq_test_suite);
