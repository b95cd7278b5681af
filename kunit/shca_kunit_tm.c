// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: tag matching's pure part (tm_logic.h) - the TMH/RVH layout,
 * message classification, the tag list (add, del, match with masks, the
 * order of matching, handles) and phase counting (SYNC, SYNC_REQ, the
 * 16-bit wrap).
 */
#include <kunit/test.h>
#include <linux/stddef.h>

#include "tm_logic.h"

#define MAX_RNDV	64	/* the device's max_rndv_hdr_size */
#define NTAGS		8

/* A fresh list of @n entries; the entries are freed with the test. */
static struct shca_tm_list *new_list(struct kunit *test, u32 n)
{
	struct shca_tm_list *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct shca_tm_tag *tags = kunit_kcalloc(test, n, sizeof(*tags),
						 GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, l);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tags);
	/* garbage in the entries: init must not rely on zeroed memory */
	memset(tags, 0xa5, n * sizeof(*tags));
	shca_tm_list_init(l, tags, n);
	return l;
}

/* The handle of a matched entry, or -1 if nothing matched. */
static int match_h(struct shca_tm_list *l, u64 msg_tag)
{
	struct shca_tm_tag *t = shca_tm_match(l, msg_tag);

	return t ? (int)shca_tm_handle(l, t) : -1;
}

/* Copies the LISTED handles in list order into @out; returns how many. */
static u32 listed(struct shca_tm_list *l, u32 *out, u32 max)
{
	struct shca_tm_tag *t;
	u32 n = 0;

	list_for_each_entry(t, &l->listed, node) {
		if (n < max)
			out[n] = shca_tm_handle(l, t);
		n++;
	}
	return n;
}

static void shca_tm_test_headers(struct kunit *test)
{
	/* infiniband/tm_types.h: struct ibv_tmh and struct ibv_rvh */
	KUNIT_EXPECT_EQ(test, sizeof(struct shca_tmh), (size_t)SHCA_TMH_BYTES);
	KUNIT_EXPECT_EQ(test, sizeof(struct shca_rvh), (size_t)SHCA_RVH_BYTES);
	KUNIT_EXPECT_EQ(test, SHCA_TMH_BYTES, 16);
	KUNIT_EXPECT_EQ(test, SHCA_RVH_BYTES, 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct shca_tmh, opcode), (size_t)0);
	KUNIT_EXPECT_EQ(test, offsetof(struct shca_tmh, app_ctx), (size_t)4);
	KUNIT_EXPECT_EQ(test, offsetof(struct shca_tmh, tag), (size_t)8);
	KUNIT_EXPECT_EQ(test, offsetof(struct shca_rvh, va), (size_t)0);
	KUNIT_EXPECT_EQ(test, offsetof(struct shca_rvh, rkey), (size_t)8);
	KUNIT_EXPECT_EQ(test, offsetof(struct shca_rvh, len), (size_t)12);
	/* enum ibv_tmh_op */
	KUNIT_EXPECT_EQ(test, SHCA_TMH_NO_TAG, 0);
	KUNIT_EXPECT_EQ(test, SHCA_TMH_RNDV, 1);
	KUNIT_EXPECT_EQ(test, SHCA_TMH_FIN, 2);
	KUNIT_EXPECT_EQ(test, SHCA_TMH_EAGER, 3);
	KUNIT_EXPECT_EQ(test, SHCA_TM_MAX_SGE, 4);
}

/* classify a message whose first byte is @op (the rest is zeroes) */
static enum shca_tm_class cls(struct kunit *test, u8 op, u32 len, bool only,
			      u32 max_rndv)
{
	u8 *p = kunit_kzalloc(test, 256, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	KUNIT_ASSERT_LE(test, len, 256U);
	p[0] = op;
	return shca_tm_classify(p, len, only, max_rndv);
}

static void shca_tm_test_classify_empty(struct kunit *test)
{
	u8 op;

	/* an empty message is never a TM message, whatever lies in memory */
	for (op = 0; op < 5; op++) {
		KUNIT_EXPECT_EQ(test, cls(test, op, 0, true, MAX_RNDV),
				SHCA_TMC_PLAIN);
		KUNIT_EXPECT_EQ(test, cls(test, op, 0, false, MAX_RNDV),
				SHCA_TMC_PLAIN);
	}
}

static void shca_tm_test_classify_no_tag(struct kunit *test)
{
	static const u32 lens[] = { 1, 15, 16, 31, 32, 64, 65, 256 };
	unsigned int i;

	/* NO_TAG and FIN: no length rule, never matched, one packet or many */
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_NO_TAG, lens[i], true,
					  MAX_RNDV), SHCA_TMC_NO_TAG);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_NO_TAG, lens[i], false,
					  MAX_RNDV), SHCA_TMC_NO_TAG);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_FIN, lens[i], true,
					  MAX_RNDV), SHCA_TMC_NO_TAG);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_FIN, lens[i], false,
					  MAX_RNDV), SHCA_TMC_NO_TAG);
	}
}

static void shca_tm_test_classify_eager(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		bool only = i;

		/* the first packet must hold a whole TMH */
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, 1, only,
					  MAX_RNDV), SHCA_TMC_PLAIN);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, 15, only,
					  MAX_RNDV), SHCA_TMC_PLAIN);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, 16, only,
					  MAX_RNDV), SHCA_TMC_EAGER);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, 31, only,
					  MAX_RNDV), SHCA_TMC_EAGER);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, 32, only,
					  MAX_RNDV), SHCA_TMC_EAGER);
		/* no upper bound: max_rndv is the rendezvous' rule only */
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, MAX_RNDV, only,
					  MAX_RNDV), SHCA_TMC_EAGER);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, MAX_RNDV + 1,
					  only, MAX_RNDV), SHCA_TMC_EAGER);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, 256, only,
					  MAX_RNDV), SHCA_TMC_EAGER);
		KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_EAGER, 16, only, 0),
				SHCA_TMC_EAGER);
	}
}

static void shca_tm_test_classify_rndv(struct kunit *test)
{
	/* one packet with TMH + RVH, at most max_rndv bytes */
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 1, true, MAX_RNDV),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 15, true, MAX_RNDV),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 16, true, MAX_RNDV),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 31, true, MAX_RNDV),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 32, true, MAX_RNDV),
			SHCA_TMC_RNDV);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 33, true, MAX_RNDV),
			SHCA_TMC_RNDV);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, MAX_RNDV, true,
				  MAX_RNDV), SHCA_TMC_RNDV);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, MAX_RNDV + 1, true,
				  MAX_RNDV), SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 256, true, MAX_RNDV),
			SHCA_TMC_PLAIN);
	/* not the whole message in one packet: malformed at any length */
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 16, false, MAX_RNDV),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 32, false, MAX_RNDV),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, MAX_RNDV, false,
				  MAX_RNDV), SHCA_TMC_PLAIN);
	/* the device's limit decides, whatever it is */
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 32, true, 32),
			SHCA_TMC_RNDV);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 33, true, 32),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 128, true, 128),
			SHCA_TMC_RNDV);
	/* a limit below TMH + RVH admits no rendezvous at all */
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 32, true, 16),
			SHCA_TMC_PLAIN);
	KUNIT_EXPECT_EQ(test, cls(test, SHCA_TMH_RNDV, 16, true, 16),
			SHCA_TMC_PLAIN);
}

static void shca_tm_test_classify_unknown(struct kunit *test)
{
	static const u8 ops[] = { 4, 5, 0x10, 0x80, 0x83, 0xff };
	static const u32 lens[] = { 1, 15, 16, 32, MAX_RNDV, 256 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		for (j = 0; j < ARRAY_SIZE(lens); j++) {
			KUNIT_EXPECT_EQ(test, cls(test, ops[i], lens[j], true,
						  MAX_RNDV), SHCA_TMC_PLAIN);
			KUNIT_EXPECT_EQ(test, cls(test, ops[i], lens[j], false,
						  MAX_RNDV), SHCA_TMC_PLAIN);
		}
}

static void shca_tm_test_classify_reads_opcode_only(struct kunit *test)
{
	u8 *p = kunit_kzalloc(test, 64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	/* reserved bytes, app_ctx and tag do not change the class */
	memset(p, 0xff, 64);
	p[0] = SHCA_TMH_EAGER;
	KUNIT_EXPECT_EQ(test, shca_tm_classify(p, 16, true, MAX_RNDV),
			SHCA_TMC_EAGER);
	p[0] = SHCA_TMH_RNDV;
	KUNIT_EXPECT_EQ(test, shca_tm_classify(p, 32, true, MAX_RNDV),
			SHCA_TMC_RNDV);
	p[0] = SHCA_TMH_NO_TAG;
	KUNIT_EXPECT_EQ(test, shca_tm_classify(p, 64, false, MAX_RNDV),
			SHCA_TMC_NO_TAG);
}

static void shca_tm_test_init(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	u32 i;

	KUNIT_EXPECT_EQ(test, l->max_tags, (u32)NTAGS);
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);
	KUNIT_EXPECT_TRUE(test, list_empty(&l->listed));
	for (i = 0; i < NTAGS; i++)
		KUNIT_EXPECT_EQ(test, l->tags[i].state, (u8)SHCA_TM_TAG_FREE);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	/* an empty list matches nothing */
	KUNIT_EXPECT_EQ(test, match_h(l, 0), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, ~0ULL), -1);
	/* handles name entries 0 .. max_tags - 1, and nothing else */
	KUNIT_EXPECT_PTR_EQ(test, shca_tm_at(l, 0), &l->tags[0]);
	KUNIT_EXPECT_PTR_EQ(test, shca_tm_at(l, NTAGS - 1), &l->tags[NTAGS - 1]);
	KUNIT_EXPECT_NULL(test, shca_tm_at(l, NTAGS));
	KUNIT_EXPECT_NULL(test, shca_tm_at(l, U32_MAX));
	for (i = 0; i < NTAGS; i++)
		KUNIT_EXPECT_EQ(test, shca_tm_handle(l, shca_tm_at(l, i)), i);
}

static void shca_tm_test_match_full_mask(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	const u64 tag = 0x8000000000001234ULL;
	struct shca_tm_tag *t;

	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 3, tag, ~0ULL, 0xabcd));
	KUNIT_EXPECT_EQ(test, l->nlisted, 1U);
	KUNIT_EXPECT_EQ(test, l->tags[3].state, (u8)SHCA_TM_TAG_LISTED);
	KUNIT_EXPECT_TRUE(test, l->tags[3].armed);
	/* every bit counts, the high one too */
	KUNIT_EXPECT_EQ(test, match_h(l, tag ^ 1), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, tag ^ (1ULL << 63)), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x1234), -1);
	KUNIT_EXPECT_EQ(test, l->tags[3].state, (u8)SHCA_TM_TAG_LISTED);
	t = shca_tm_match(l, tag);
	KUNIT_ASSERT_PTR_EQ(test, t, &l->tags[3]);
	KUNIT_EXPECT_EQ(test, t->tag, tag);
	KUNIT_EXPECT_EQ(test, t->mask, ~0ULL);
	KUNIT_EXPECT_EQ(test, t->wr_id, 0xabcdULL);
	KUNIT_EXPECT_EQ(test, t->state, (u8)SHCA_TM_TAG_BUSY);
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);
	KUNIT_EXPECT_TRUE(test, list_empty(&l->listed));
}

static void shca_tm_test_match_partial_mask(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);

	/* tag 0x12??: the low byte is a wildcard */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 0x1200, 0xff00, 1));
	KUNIT_EXPECT_EQ(test, match_h(l, 0x1300), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x0200), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x11ff), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x12ab), 0);
	/* bits above the mask are ignored in the message's tag */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 0x1200, 0xff00, 2));
	KUNIT_EXPECT_EQ(test, match_h(l, 0xffffffffffff12ffULL), 1);
	/* a mask of scattered bits */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, 0x8000000000000001ULL,
					    0x8000000000000001ULL, 3));
	KUNIT_EXPECT_EQ(test, match_h(l, 0x7ffffffffffffff1ULL), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x8000000000000000ULL), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x8000000012345671ULL), 2);
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);
}

static void shca_tm_test_match_zero_mask(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);

	/* mask 0, tag 0: any message */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 0, 0, 10));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 0, 0, 11));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, 0, 0, 12));
	KUNIT_EXPECT_EQ(test, match_h(l, 0xdeadbeefcafef00dULL), 0);
	KUNIT_EXPECT_EQ(test, match_h(l, 0), 1);
	KUNIT_EXPECT_EQ(test, match_h(l, ~0ULL), 2);
	KUNIT_EXPECT_EQ(test, match_h(l, 0), -1);
}

static void shca_tm_test_match_bits_outside_mask(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	static const u64 msgs[] = { 0, 1, 0xff, 0x100, 0x1ff, 0x1fe, ~0ULL,
				    0xffffffffffffff00ULL };
	unsigned int i;

	/* (msg & mask) can never equal a tag with bits the mask clears */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 0x1ff, 0xff, 1));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 1, 0, 2));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, ~0ULL, 0x7fffffffffffffffULL,
					    3));
	for (i = 0; i < ARRAY_SIZE(msgs); i++)
		KUNIT_EXPECT_EQ(test, match_h(l, msgs[i]), -1);
	KUNIT_EXPECT_EQ(test, l->nlisted, 3U);
	/* they stay listed, and deletable */
	KUNIT_EXPECT_TRUE(test, shca_tm_del(l, 0));
	KUNIT_EXPECT_TRUE(test, shca_tm_del(l, 1));
	KUNIT_EXPECT_TRUE(test, shca_tm_del(l, 2));
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);
}

static void shca_tm_test_order(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	u32 h[NTAGS];

	/* handles are not the order: the order of adding is */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 5, 0xa, ~0ULL, 50));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 0xb, ~0ULL, 10));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 7, 0xa, ~0ULL, 70));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 0x0, 0xf0, 0));	/* 0x0? */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, 0xa, ~0ULL, 20));
	KUNIT_ASSERT_EQ(test, listed(l, h, NTAGS), 5U);
	KUNIT_EXPECT_EQ(test, h[0], 5U);
	KUNIT_EXPECT_EQ(test, h[1], 1U);
	KUNIT_EXPECT_EQ(test, h[2], 7U);
	KUNIT_EXPECT_EQ(test, h[3], 0U);
	KUNIT_EXPECT_EQ(test, h[4], 2U);

	/* the oldest matching entry wins; the others keep their places */
	KUNIT_EXPECT_EQ(test, match_h(l, 0xa), 5);
	KUNIT_ASSERT_EQ(test, listed(l, h, NTAGS), 4U);
	KUNIT_EXPECT_EQ(test, h[0], 1U);
	KUNIT_EXPECT_EQ(test, h[1], 7U);
	KUNIT_EXPECT_EQ(test, h[2], 0U);
	KUNIT_EXPECT_EQ(test, h[3], 2U);
	KUNIT_EXPECT_EQ(test, l->tags[1].state, (u8)SHCA_TM_TAG_LISTED);
	KUNIT_EXPECT_EQ(test, l->tags[1].tag, 0xbULL);
	KUNIT_EXPECT_EQ(test, l->tags[1].wr_id, 10ULL);

	/* the wildcard entry 0 (0x0?) is older than entry 2: it takes 0xa */
	KUNIT_EXPECT_EQ(test, match_h(l, 0xa), 7);
	KUNIT_EXPECT_EQ(test, match_h(l, 0xa), 0);
	KUNIT_EXPECT_EQ(test, match_h(l, 0xa), 2);
	KUNIT_EXPECT_EQ(test, match_h(l, 0xa), -1);
	KUNIT_ASSERT_EQ(test, listed(l, h, NTAGS), 1U);
	KUNIT_EXPECT_EQ(test, h[0], 1U);
	KUNIT_EXPECT_EQ(test, match_h(l, 0xb), 1);
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);

	/* an entry added after one was consumed goes last */
	shca_tm_release(&l->tags[5]);
	shca_tm_release(&l->tags[7]);
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 3, 0, 0, 30));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 7, 0xc, ~0ULL, 71));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 5, 0, 0, 51));
	KUNIT_EXPECT_EQ(test, match_h(l, 0xc), 3);
	KUNIT_EXPECT_EQ(test, match_h(l, 0xc), 7);
	KUNIT_EXPECT_EQ(test, match_h(l, 0xc), 5);
}

static void shca_tm_test_match_once(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	struct shca_tm_tag *t;

	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 4, 0x77, ~0ULL, 7));
	t = shca_tm_match(l, 0x77);
	KUNIT_ASSERT_PTR_EQ(test, t, &l->tags[4]);
	/* consumed: no second message gets it */
	KUNIT_EXPECT_EQ(test, match_h(l, 0x77), -1);
	/* BUSY (its data may still arrive): neither deletable nor reusable */
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, 4));
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, 4, 0x77, ~0ULL, 8));
	KUNIT_EXPECT_EQ(test, t->state, (u8)SHCA_TM_TAG_BUSY);
	KUNIT_EXPECT_EQ(test, t->wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);
	/* released: FREE, still not deletable, addable again */
	shca_tm_release(t);
	KUNIT_EXPECT_EQ(test, t->state, (u8)SHCA_TM_TAG_FREE);
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, 4));
	KUNIT_EXPECT_EQ(test, match_h(l, 0x77), -1);
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 4, 0x77, ~0ULL, 9));
	t = shca_tm_match(l, 0x77);
	KUNIT_ASSERT_PTR_EQ(test, t, &l->tags[4]);
	KUNIT_EXPECT_EQ(test, t->wr_id, 9ULL);
}

static void shca_tm_test_del(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	u32 h[NTAGS];

	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 1, ~0ULL, 0));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 1, ~0ULL, 1));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, 1, ~0ULL, 2));
	/* never added, out of range */
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, 3));
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, NTAGS));
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, U32_MAX));
	KUNIT_EXPECT_EQ(test, l->nlisted, 3U);
	/* from the middle: the others keep their order */
	KUNIT_EXPECT_TRUE(test, shca_tm_del(l, 1));
	KUNIT_EXPECT_EQ(test, l->tags[1].state, (u8)SHCA_TM_TAG_FREE);
	KUNIT_EXPECT_EQ(test, l->nlisted, 2U);
	KUNIT_ASSERT_EQ(test, listed(l, h, NTAGS), 2U);
	KUNIT_EXPECT_EQ(test, h[0], 0U);
	KUNIT_EXPECT_EQ(test, h[1], 2U);
	/* deleted twice */
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, 1));
	KUNIT_EXPECT_EQ(test, l->nlisted, 2U);
	/* a deleted entry never matches */
	KUNIT_EXPECT_EQ(test, match_h(l, 1), 0);
	KUNIT_EXPECT_EQ(test, match_h(l, 1), 2);
	KUNIT_EXPECT_EQ(test, match_h(l, 1), -1);
	/* the consumed ones: DEL fails (the TM_ERR of ibv_post_srq_ops(3)) */
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, 0));
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, 2));
	shca_tm_release(&l->tags[0]);
	KUNIT_EXPECT_FALSE(test, shca_tm_del(l, 0));
	/* the deleted handle is FREE for a new ADD */
	KUNIT_EXPECT_TRUE(test, shca_tm_add(l, 1, 5, ~0ULL, 11));
	KUNIT_EXPECT_EQ(test, match_h(l, 5), 1);
	KUNIT_EXPECT_EQ(test, l->tags[1].wr_id, 11ULL);
}

static void shca_tm_test_add_refused(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	struct shca_tm_tag *t;

	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, 0x20, ~0ULL, 20));
	/* a LISTED handle: refused and left as it was */
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, 2, 0x99, 0, 99));
	t = &l->tags[2];
	KUNIT_EXPECT_EQ(test, t->tag, 0x20ULL);
	KUNIT_EXPECT_EQ(test, t->mask, ~0ULL);
	KUNIT_EXPECT_EQ(test, t->wr_id, 20ULL);
	KUNIT_EXPECT_EQ(test, t->state, (u8)SHCA_TM_TAG_LISTED);
	KUNIT_EXPECT_EQ(test, l->nlisted, 1U);
	/* listed once, not twice */
	KUNIT_EXPECT_EQ(test, match_h(l, 0x99), -1);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x20), 2);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x20), -1);
	/* a BUSY handle */
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, 2, 0x20, ~0ULL, 21));
	KUNIT_EXPECT_EQ(test, t->wr_id, 20ULL);
	/* out of range */
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, NTAGS, 0, 0, 0));
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, NTAGS + 1, 0, 0, 0));
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, U32_MAX, 0, 0, 0));
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);
	KUNIT_EXPECT_EQ(test, match_h(l, 0), -1);
}

static void shca_tm_test_full(struct kunit *test)
{
	const u32 n = 1024;	/* the device's max_num_tags */
	struct shca_tm_list *l = new_list(test, n);
	u32 i;

	for (i = 0; i < n; i++)
		KUNIT_ASSERT_TRUE(test, shca_tm_add(l, i, i, ~0ULL, 1000 + i));
	KUNIT_EXPECT_EQ(test, l->nlisted, n);
	/* every handle in use: no ADD gets through */
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_FALSE(test, shca_tm_add(l, i, 0, 0, 0));
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, n, 0, 0, 0));
	KUNIT_EXPECT_EQ(test, l->nlisted, n);
	/* one deleted, one consumed: exactly those two come free */
	KUNIT_EXPECT_TRUE(test, shca_tm_del(l, 100));
	KUNIT_EXPECT_EQ(test, match_h(l, 700), 700);
	KUNIT_EXPECT_EQ(test, l->nlisted, n - 2);
	KUNIT_EXPECT_TRUE(test, shca_tm_add(l, 100, 5000, ~0ULL, 0));
	KUNIT_EXPECT_FALSE(test, shca_tm_add(l, 700, 5001, ~0ULL, 0));
	shca_tm_release(&l->tags[700]);
	KUNIT_EXPECT_TRUE(test, shca_tm_add(l, 700, 5001, ~0ULL, 0));
	KUNIT_EXPECT_EQ(test, l->nlisted, n);
	/* the last one listed is the last one found */
	KUNIT_EXPECT_EQ(test, match_h(l, 5001), 700);
	KUNIT_EXPECT_EQ(test, match_h(l, 5000), 100);
	KUNIT_EXPECT_EQ(test, match_h(l, n - 1), (int)(n - 1));
	KUNIT_EXPECT_EQ(test, match_h(l, 0), 0);
	KUNIT_EXPECT_EQ(test, l->nlisted, n - 4);
}

static void shca_tm_test_phase(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);

	/* in phase: armed */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 0x10, ~0ULL, 0));
	KUNIT_EXPECT_TRUE(test, l->tags[0].armed);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	/* an unexpected message: out of phase */
	shca_tm_unexpected(l);
	KUNIT_EXPECT_EQ(test, l->hw_cnt, 1U);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	/* a tag added now is not armed and never matches ... */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 0x20, ~0ULL, 1));
	KUNIT_EXPECT_FALSE(test, l->tags[1].armed);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x20), -1);
	KUNIT_EXPECT_EQ(test, l->tags[1].state, (u8)SHCA_TM_TAG_LISTED);
	/* ... while the one added in phase still does */
	KUNIT_EXPECT_EQ(test, match_h(l, 0x10), 0);
	/* an operation without the SYNC flag changes nothing */
	shca_tm_sync(l, false, 1);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, 0x20, ~0ULL, 2));
	KUNIT_EXPECT_FALSE(test, l->tags[2].armed);
	/* a stale count does not sync either */
	shca_tm_sync(l, true, 0);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	/* the right count does: later adds are armed */
	shca_tm_sync(l, true, 1);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 3, 0x20, ~0ULL, 3));
	KUNIT_EXPECT_TRUE(test, l->tags[3].armed);
	/* the disarmed entries stay disarmed though older: 3 matches */
	KUNIT_EXPECT_FALSE(test, l->tags[1].armed);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x20), 3);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x20), -1);
	/* software deletes them */
	KUNIT_EXPECT_TRUE(test, shca_tm_del(l, 1));
	KUNIT_EXPECT_TRUE(test, shca_tm_del(l, 2));
	KUNIT_EXPECT_EQ(test, l->nlisted, 0U);
	/* a disarmed handle re-added in phase is armed again */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 0x30, ~0ULL, 4));
	KUNIT_EXPECT_TRUE(test, l->tags[1].armed);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x30), 1);
	/* a match is not unexpected: the counts do not move */
	KUNIT_EXPECT_EQ(test, l->hw_cnt, 1U);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
}

static void shca_tm_test_phase_unexpected_later(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);

	/* armed entries stay matchable through later unexpected messages */
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 0x1, ~0ULL, 0));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 0x2, ~0ULL, 1));
	shca_tm_unexpected(l);
	shca_tm_unexpected(l);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x2), 1);
	shca_tm_unexpected(l);
	KUNIT_EXPECT_EQ(test, match_h(l, 0x1), 0);
	/* software that handled 2 of the 3 is still out of phase */
	shca_tm_sync(l, true, 2);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 2, 0x3, ~0ULL, 2));
	KUNIT_EXPECT_EQ(test, match_h(l, 0x3), -1);
	shca_tm_sync(l, true, 3);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 3, 0x3, ~0ULL, 3));
	KUNIT_EXPECT_EQ(test, match_h(l, 0x3), 3);
}

static void shca_tm_test_sync_wrap(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	u32 i;

	/* counts compare modulo 2^16 */
	l->hw_cnt = 0xfffe;
	shca_tm_sync(l, true, 0xfffe);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	shca_tm_unexpected(l);
	shca_tm_unexpected(l);
	KUNIT_EXPECT_EQ(test, l->hw_cnt, 0x10000U);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	shca_tm_sync(l, true, 0xffff);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	/* software's 16-bit count that wrapped to 0 is in phase */
	shca_tm_sync(l, true, 0);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 0, 9, ~0ULL, 0));
	KUNIT_EXPECT_TRUE(test, l->tags[0].armed);
	/* and so is a 32-bit count differing above bit 15 */
	shca_tm_sync(l, true, 0x30000);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	shca_tm_sync(l, true, 0x10001);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	KUNIT_ASSERT_TRUE(test, shca_tm_add(l, 1, 9, ~0ULL, 1));
	KUNIT_EXPECT_FALSE(test, l->tags[1].armed);
	/* 2^16 unexpected messages behind is in phase again (mod 2^16) */
	l->hw_cnt = 5;
	shca_tm_sync(l, true, 5);
	for (i = 0; i < 0x10000; i++)
		shca_tm_unexpected(l);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
	/* phase_eq itself */
	KUNIT_EXPECT_TRUE(test, shca_tm_phase_eq(0x12345, 0x2345));
	KUNIT_EXPECT_TRUE(test, shca_tm_phase_eq(0xffff0000, 0));
	KUNIT_EXPECT_FALSE(test, shca_tm_phase_eq(0x1, 0x10000));
	KUNIT_EXPECT_FALSE(test, shca_tm_phase_eq(0xffff, 0));
}

static void shca_tm_test_unexp_sync_req(struct kunit *test)
{
	struct shca_tm_list *l = new_list(test, NTAGS);
	u32 i;

	/*
	 * An unexpected message's completion asks for a SYNC only when
	 * software lags more than SHCA_TM_MAX_SYNC_DIFF behind.
	 */
	KUNIT_EXPECT_EQ(test, SHCA_TM_MAX_SYNC_DIFF, 0x3fff);
	shca_tm_unexpected(l);
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	for (i = 1; i < SHCA_TM_MAX_SYNC_DIFF; i++)
		shca_tm_unexpected(l);
	KUNIT_EXPECT_EQ(test, l->hw_cnt, (u32)SHCA_TM_MAX_SYNC_DIFF);
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	shca_tm_unexpected(l);
	KUNIT_EXPECT_TRUE(test, shca_tm_unexp_sync_req(l));
	/* software catching up clears it */
	shca_tm_sync(l, true, 1);
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	shca_tm_sync(l, true, l->hw_cnt);
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));

	/* across the 16-bit wrap of both counts */
	l->hw_cnt = 0xfff0;
	shca_tm_sync(l, true, 0xfff0);
	for (i = 0; i < SHCA_TM_MAX_SYNC_DIFF; i++)
		shca_tm_unexpected(l);
	KUNIT_EXPECT_EQ(test, l->hw_cnt, 0xfff0U + SHCA_TM_MAX_SYNC_DIFF);
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	shca_tm_unexpected(l);
	KUNIT_EXPECT_TRUE(test, shca_tm_unexp_sync_req(l));
	/* software reports its count in 16 bits */
	shca_tm_sync(l, true, (u16)(l->hw_cnt - 2));
	KUNIT_EXPECT_FALSE(test, shca_tm_unexp_sync_req(l));
	KUNIT_EXPECT_TRUE(test, shca_tm_sync_req(l));
	shca_tm_sync(l, true, (u16)l->hw_cnt);
	KUNIT_EXPECT_FALSE(test, shca_tm_sync_req(l));
}

static struct kunit_case shca_tm_test_cases[] = {
	KUNIT_CASE(shca_tm_test_headers),
	KUNIT_CASE(shca_tm_test_classify_empty),
	KUNIT_CASE(shca_tm_test_classify_no_tag),
	KUNIT_CASE(shca_tm_test_classify_eager),
	KUNIT_CASE(shca_tm_test_classify_rndv),
	KUNIT_CASE(shca_tm_test_classify_unknown),
	KUNIT_CASE(shca_tm_test_classify_reads_opcode_only),
	KUNIT_CASE(shca_tm_test_init),
	KUNIT_CASE(shca_tm_test_match_full_mask),
	KUNIT_CASE(shca_tm_test_match_partial_mask),
	KUNIT_CASE(shca_tm_test_match_zero_mask),
	KUNIT_CASE(shca_tm_test_match_bits_outside_mask),
	KUNIT_CASE(shca_tm_test_order),
	KUNIT_CASE(shca_tm_test_match_once),
	KUNIT_CASE(shca_tm_test_del),
	KUNIT_CASE(shca_tm_test_add_refused),
	KUNIT_CASE(shca_tm_test_full),
	KUNIT_CASE(shca_tm_test_phase),
	KUNIT_CASE(shca_tm_test_phase_unexpected_later),
	KUNIT_CASE(shca_tm_test_sync_wrap),
	KUNIT_CASE(shca_tm_test_unexp_sync_req),
	{}
};

static struct kunit_suite shca_tm_test_suite = {
	.name = "shca_tm",
	.test_cases = shca_tm_test_cases,
};

kunit_test_suites(&shca_tm_test_suite);
