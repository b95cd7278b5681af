// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca KUnit: ring index arithmetic (drivers/infiniband/sw/shca/ring.h)
 * and the receive WQE producer/consumer shared by RQs and SRQs (rwqe.c).
 */
#include <kunit/test.h>
#include <linux/limits.h>

#include "ring.h"
#include "rwqe.h"

static void shca_ring_wrap_test(struct kunit *test)
{
	u32 prod = 2, cons = U32_MAX - 1;	/* 4 used across the wrap */

	KUNIT_EXPECT_EQ(test, shca_ring_count(prod, cons), 4U);
	KUNIT_EXPECT_TRUE(test, shca_ring_idx_valid(prod, cons, 4));
	KUNIT_EXPECT_TRUE(test, shca_ring_idx_full(prod, cons, 4));
	KUNIT_EXPECT_FALSE(test, shca_ring_idx_full(prod, cons, 8));
	KUNIT_EXPECT_EQ(test, shca_ring_slot(U32_MAX, 8), 7U);
	KUNIT_EXPECT_EQ(test, shca_ring_slot(U32_MAX + 1U, 8), 0U);
}

static void shca_ring_empty_full_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, shca_ring_idx_empty(0, 0));
	KUNIT_EXPECT_TRUE(test, shca_ring_idx_empty(U32_MAX, U32_MAX));
	KUNIT_EXPECT_FALSE(test, shca_ring_idx_empty(1, 0));
	KUNIT_EXPECT_TRUE(test, shca_ring_idx_full(16, 0, 16));
	KUNIT_EXPECT_FALSE(test, shca_ring_idx_full(15, 0, 16));
	KUNIT_EXPECT_EQ(test, shca_ring_count(15, 0), 15U);
}

/* Userspace may write anything into the shared indices. */
static void shca_ring_hostile_test(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, shca_ring_idx_valid(17, 0, 16));
	KUNIT_EXPECT_FALSE(test, shca_ring_idx_valid(0, 1, 16));
	KUNIT_EXPECT_FALSE(test, shca_ring_idx_valid(U32_MAX, 0, 16));
	KUNIT_EXPECT_TRUE(test, shca_ring_idx_valid(0, U32_MAX - 15, 16));
	KUNIT_EXPECT_FALSE(test, shca_ring_idx_valid(0, U32_MAX - 16, 16));
	/* any index, masked, stays inside the ring */
	KUNIT_EXPECT_LT(test, shca_ring_slot(0xdeadbeef, 16), 16U);
}

static void shca_ring_layout_test(struct kunit *test)
{
	/* 64-byte CQEs: entries start after the 128-byte control block */
	KUNIT_EXPECT_EQ(test, shca_ring_entries_offset(6), 128U);
	/* 256-byte WQEs: first entry at one stride */
	KUNIT_EXPECT_EQ(test, shca_ring_entries_offset(8), 256U);
	KUNIT_EXPECT_EQ(test, shca_ring_bytes(16, 6), 128ULL + 16 * 64);
	KUNIT_EXPECT_EQ(test, shca_ring_entry_off(17, 16, 128, 6), 128ULL + 64);
}

static void shca_ring_chunk_test(struct kunit *test)
{
	u32 shift = shca_ring_chunk_shift(1ULL << 20, 12);
	u64 off;

	KUNIT_EXPECT_EQ(test, shca_ring_chunk_shift(100, 12), 12U);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_shift(8192, 12), 13U);
	/* 32 KiB of entries and a control page: 32 KiB + 4 KiB, not 64 KiB */
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_shift(36864, 12), 15U);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_shift((1ULL << 16) + 4096, 12),
			16U);
	KUNIT_EXPECT_EQ(test, shift, (u32)SHCA_RING_CHUNK_SHIFT_MAX);

	/*
	 * 4096 WQEs of 256 bytes after a 256-byte control area: slot 254 is
	 * the last of chunk 0 and slot 255 starts chunk 1.
	 */
	off = shca_ring_entry_off(254, 4096, 256, 8);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_of(off, 16), 0U);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_off(off, 16), 65280U);
	off = shca_ring_entry_off(255, 4096, 256, 8);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_of(off, 16), 1U);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_off(off, 16), 0U);
	/* index 4096 + 300 wraps onto slot 300: 256 + 300 * 256 - 65536 */
	off = shca_ring_entry_off(4096 + 300, 4096, 256, 8);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_of(off, 16), 1U);
	KUNIT_EXPECT_EQ(test, shca_ring_chunk_off(off, 16), 45U * 256);
}

/* No entry straddles a chunk: offsets are stride multiples. */
static void shca_ring_no_straddle_test(struct kunit *test)
{
	u32 shift = 6, entries = 4096, i;
	u32 eoff = shca_ring_entries_offset(shift);

	for (i = 0; i < entries; i++) {
		u64 off = shca_ring_entry_off(i, entries, eoff, shift);
		u64 end = off + (1U << shift) - 1;

		KUNIT_ASSERT_EQ(test, shca_ring_chunk_of(off, 12),
				shca_ring_chunk_of(end, 12));
	}
}

/* A 4-entry kernel receive ring in one kmalloc'd chunk. */
static struct shca_ring *shca_test_rq_ring(struct kunit *test)
{
	struct shca_ring *ring = kunit_kzalloc(test, sizeof(*ring), GFP_KERNEL);
	struct shca_ring_chunk *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ring);
	KUNIT_ASSERT_NOT_NULL(test, c);
	ring->entries = 4;
	ring->entry_shift = 8;
	ring->entries_offset = shca_ring_entries_offset(8);
	ring->chunk_shift = 12;
	ring->len = shca_ring_bytes(4, 8);
	c->len = 1U << ring->chunk_shift;
	c->va = kunit_kzalloc(test, c->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->va);
	ring->chunks = c;
	ring->nchunks = 1;
	ring->ctl = c->va;
	return ring;
}

static void shca_rwqe_push_pop_test(struct kunit *test)
{
	struct shca_ring *ring = shca_test_rq_ring(test);
	struct ib_sge sge = { .addr = 0x1000, .length = 64, .lkey = 0x105 };
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct shca_rwqe w;
	u32 i, left;

	for (i = 0; i < 4; i++) {
		wr.wr_id = 100 + i;
		KUNIT_ASSERT_EQ(test, shca_rwqe_push(ring, &wr, 1), 0);
	}
	KUNIT_EXPECT_EQ(test, shca_rwqe_push(ring, &wr, 1), -ENOMEM);
	wr.num_sge = 2;
	KUNIT_EXPECT_EQ(test, shca_rwqe_push(ring, &wr, 1), -EINVAL);
	ring->ctl->prod = ring->kprod;
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(test, shca_rwqe_pop(ring, &w, &left, 1), 0);
		KUNIT_EXPECT_EQ(test, w.hdr.wr_id, 100ULL + i);
		KUNIT_EXPECT_EQ(test, w.hdr.num_sge, 1U);
		KUNIT_EXPECT_EQ(test, w.sge[0].lkey, 0x105U);
		KUNIT_EXPECT_EQ(test, left, 3 - i);
		KUNIT_EXPECT_EQ(test, ring->ctl->cons, i + 1);
	}
	KUNIT_EXPECT_EQ(test, shca_rwqe_pop(ring, &w, &left, 1), -ENOENT);
}

/* A producer index from userspace claiming more than the ring holds. */
static void shca_rwqe_hostile_test(struct kunit *test)
{
	struct shca_ring *ring = shca_test_rq_ring(test);
	struct ib_recv_wr wr = {};
	struct shca_recv_wqe *slot;
	struct shca_rwqe w;
	u32 left;

	ring->ctl->prod = 5;
	KUNIT_EXPECT_EQ(test, shca_rwqe_pop(ring, &w, &left, 1), -EIO);
	ring->ctl->prod = U32_MAX;
	KUNIT_EXPECT_EQ(test, shca_rwqe_pop(ring, &w, &left, 1), -EIO);
	KUNIT_EXPECT_EQ(test, ring->kcons, 0U);
	/*
	 * an SGE count past the queue's limit: taken, malformed, no SGEs
	 * left for a consumer to walk
	 */
	slot = shca_ring_entry(ring, 0);
	slot->wr_id = 0x5151;
	slot->num_sge = U32_MAX;
	ring->ctl->prod = 1;
	KUNIT_EXPECT_EQ(test, shca_rwqe_pop(ring, &w, &left, 1), -EBADMSG);
	KUNIT_EXPECT_EQ(test, w.hdr.wr_id, 0x5151ULL);
	KUNIT_EXPECT_EQ(test, w.hdr.num_sge, 0U);
	KUNIT_EXPECT_EQ(test, ring->kcons, 1U);
	KUNIT_EXPECT_EQ(test, ring->ctl->cons, 1U);
	/* a consumer index the producer never gave out */
	ring->ctl->cons = 7;
	KUNIT_EXPECT_EQ(test, shca_rwqe_push(ring, &wr, 1), -EIO);
}

static struct kunit_case shca_ring_cases[] = {
	KUNIT_CASE(shca_ring_wrap_test),
	KUNIT_CASE(shca_ring_empty_full_test),
	KUNIT_CASE(shca_ring_hostile_test),
	KUNIT_CASE(shca_ring_layout_test),
	KUNIT_CASE(shca_ring_chunk_test),
	KUNIT_CASE(shca_ring_no_straddle_test),
	KUNIT_CASE(shca_rwqe_push_pop_test),
	KUNIT_CASE(shca_rwqe_hostile_test),
	{}
};

static struct kunit_suite shca_ring_suite = {
	.name = "shca_ring",
	.test_cases = shca_ring_cases,
};

kunit_test_suites(&shca_ring_suite);
