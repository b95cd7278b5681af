// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: fast registration page translation and memory window bind
 * rules (mem_logic.h).
 */
#include <kunit/test.h>

#include "mem_logic.h"

static void shca_mem_test_xlate(struct kunit *test)
{
	u32 idx = 99, off = 99;

	/* iova in the middle of page 0: page 0 starts at its page base */
	KUNIT_EXPECT_TRUE(test, shca_frmr_xlate(0x10200, 12, 3, 0x10200,
						&idx, &off));
	KUNIT_EXPECT_EQ(test, idx, 0U);
	KUNIT_EXPECT_EQ(test, off, 0x200U);
	KUNIT_EXPECT_TRUE(test, shca_frmr_xlate(0x10200, 12, 3, 0x12fff,
						&idx, &off));
	KUNIT_EXPECT_EQ(test, idx, 2U);
	KUNIT_EXPECT_EQ(test, off, 0xfffU);
	/* one past the last page, and below the first */
	KUNIT_EXPECT_FALSE(test, shca_frmr_xlate(0x10200, 12, 3, 0x13000,
						 &idx, &off));
	KUNIT_EXPECT_FALSE(test, shca_frmr_xlate(0x10200, 12, 3, 0xffff,
						 &idx, &off));
	/* 64 KiB pages */
	KUNIT_EXPECT_TRUE(test, shca_frmr_xlate(0x30000, 16, 2, 0x41234,
						&idx, &off));
	KUNIT_EXPECT_EQ(test, idx, 1U);
	KUNIT_EXPECT_EQ(test, off, 0x1234U);
	/* unsupported page sizes and empty lists */
	KUNIT_EXPECT_FALSE(test, shca_frmr_xlate(0, 11, 8, 0, &idx, &off));
	KUNIT_EXPECT_FALSE(test, shca_frmr_xlate(0, 32, 8, 0, &idx, &off));
	KUNIT_EXPECT_FALSE(test, shca_frmr_xlate(0, 12, 0, 0, &idx, &off));
	/* top of the address space */
	KUNIT_EXPECT_TRUE(test, shca_frmr_xlate(~0ULL & ~0xfffULL, 12, 1,
						~0ULL, &idx, &off));
	KUNIT_EXPECT_EQ(test, off, 0xfffU);
}

static void shca_mem_test_range(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, shca_range_inside(0x1000, 0x100, 0x1000,
						  0x100));
	KUNIT_EXPECT_FALSE(test, shca_range_inside(0x1000, 0x101, 0x1000,
						   0x100));
	KUNIT_EXPECT_FALSE(test, shca_range_inside(0xfff, 1, 0x1000, 0x100));
	KUNIT_EXPECT_FALSE(test, shca_range_inside(~0ULL, 2, 0, ~0ULL));
	KUNIT_EXPECT_TRUE(test, shca_range_inside(0x1050, 0, 0x1000, 0x100));
}

/* A valid type 2B bind of 64 bytes at 0x1000 of an MR at 0x1000. */
static struct shca_bind_req good_type2(void)
{
	return (struct shca_bind_req) {
		.type = IB_MW_TYPE_2,
		.cur_rkey = 0x80000105,
		.new_rkey = 0x80000142,
		.pd_ok = true,
		.mr_access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND,
		.mr_iova = 0x1000,
		.mr_length = 0x1000,
		.addr = 0x1000,
		.length = 64,
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE,
	};
}

static void shca_mem_test_bind_type2(struct kunit *test)
{
	struct shca_bind_req b = good_type2();

	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), 0);
	b.bound = true;		/* type 2B must be Free */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EINVAL);
	b = good_type2();
	b.new_rkey = 0x80000242;	/* another index */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EINVAL);
	b = good_type2();
	b.pd_ok = false;
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EACCES);
	b = good_type2();
	b.mr_access = IB_ACCESS_LOCAL_WRITE;	/* no MW_BIND */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EACCES);
	b = good_type2();
	b.mr_access = IB_ACCESS_MW_BIND;	/* remote write needs local write */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EACCES);
	b.access = IB_ACCESS_REMOTE_READ;	/* ... remote read does not */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), 0);
	b = good_type2();
	b.addr = 0x1fc1;		/* one byte past the MR */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -ERANGE);
	b = good_type2();
	b.access |= IB_ZERO_BASED;	/* not supported */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EINVAL);
	b = good_type2();
	b.access |= IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EINVAL);
}

static void shca_mem_test_bind_type1(struct kunit *test)
{
	struct shca_bind_req b = good_type2();

	b.type = IB_MW_TYPE_1;
	b.bound = true;			/* type 1 may be rebound */
	b.wqe_mw_rkey = b.cur_rkey;
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), 0);
	b.wqe_mw_rkey = 0x80000104;	/* stale R_Key */
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EINVAL);
	/* zero length unbinds, whatever the MR */
	b.wqe_mw_rkey = b.cur_rkey;
	b.length = 0;
	b.pd_ok = false;
	b.mr_access = 0;
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), 0);
	b.length = 1;
	KUNIT_EXPECT_EQ(test, shca_mw_bind_check(&b), -EACCES);
}

static struct kunit_case shca_mem_test_cases[] = {
	KUNIT_CASE(shca_mem_test_xlate),
	KUNIT_CASE(shca_mem_test_range),
	KUNIT_CASE(shca_mem_test_bind_type2),
	KUNIT_CASE(shca_mem_test_bind_type1),
	{}
};

static struct kunit_suite shca_mem_test_suite = {
	.name = "shca_mem",
	.test_cases = shca_mem_test_cases,
};

kunit_test_suites(&shca_mem_test_suite);
