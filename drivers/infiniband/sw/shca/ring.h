/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: shared rings (SQ, RQ, CQ) in DMA-coherent memory.
 *
 * Layout and ownership are defined in include/uapi/rdma/shca-abi.h.
 * Summary of the rules the kernel follows:
 *  - indices are free-running u32; slot = idx & (entries - 1);
 *  - every index read from the ring (it may be user memory) is treated
 *    as hostile: prod - cons > entries means the ring is broken and the
 *    kernel refuses to touch it;
 *  - the index the kernel owns is kept privately in struct shca_ring
 *    (kprod or kcons) and only published with smp_store_release();
 *  - the other side's index is read with smp_load_acquire() before the
 *    entries it covers are read.
 *
 * Memory is one or more chunks of 1 << chunk_shift bytes.  The control
 * block is at offset 0 of chunk 0; entries start at entries_offset, which
 * is a multiple of the entry stride, and chunks are a multiple of the
 * stride, so an entry never straddles two chunks.
 */
#ifndef SHCA_RING_H
#define SHCA_RING_H

#include <linux/types.h>
#include <linux/log2.h>
#include <rdma/shca-abi.h>

#include "charge.h"

/* Largest chunk of one ring: order-4 allocations on 4 KiB pages. */
#define SHCA_RING_CHUNK_SHIFT_MAX	16

static inline u32 shca_ring_slot(u32 idx, u32 entries)
{
	return idx & (entries - 1);
}

static inline u32 shca_ring_count(u32 prod, u32 cons)
{
	return prod - cons;
}

/* A ring whose indices claim more than @entries used slots is broken. */
static inline bool shca_ring_idx_valid(u32 prod, u32 cons, u32 entries)
{
	return shca_ring_count(prod, cons) <= entries;
}

static inline bool shca_ring_idx_empty(u32 prod, u32 cons)
{
	return prod == cons;
}

static inline bool shca_ring_idx_full(u32 prod, u32 cons, u32 entries)
{
	return shca_ring_count(prod, cons) == entries;
}

/* Offset of the first entry: after the control block, stride aligned. */
static inline u32 shca_ring_entries_offset(u32 entry_shift)
{
	u32 stride = 1U << entry_shift;

	return max_t(u32, stride, sizeof(struct shca_ring_ctl));
}

/* Byte offset of index @idx inside the ring's virtual range. */
static inline u64 shca_ring_entry_off(u32 idx, u32 entries, u32 entries_off,
				      u32 entry_shift)
{
	return entries_off + ((u64)shca_ring_slot(idx, entries) << entry_shift);
}

/* Total bytes of a ring before page alignment. */
static inline u64 shca_ring_bytes(u32 entries, u32 entry_shift)
{
	return shca_ring_entries_offset(entry_shift) + ((u64)entries << entry_shift);
}

/*
 * Chunk size for a ring of @bytes (page aligned): the largest power of two
 * that fits in it, one page at least, capped.  A ring is a power-of-two
 * entry array plus the control block's page, and dma_alloc_coherent()
 * takes a power-of-two number of pages for each allocation: as one chunk,
 * 2^n + 1 pages would take 2^(n+1); cut at 2^n they take what they use.
 */
static inline u32 shca_ring_chunk_shift(u64 bytes, u32 page_shift)
{
	u32 shift = bytes > 1 ? ilog2(bytes) : 0;

	return clamp_t(u32, shift, page_shift, SHCA_RING_CHUNK_SHIFT_MAX);
}

static inline u32 shca_ring_chunk_of(u64 off, u32 chunk_shift)
{
	return off >> chunk_shift;
}

static inline u32 shca_ring_chunk_off(u64 off, u32 chunk_shift)
{
	return off & ((1ULL << chunk_shift) - 1);
}

struct device;
struct ib_ucontext;
struct shca_mmap_entry;

struct shca_ring_chunk {
	void *va;
	dma_addr_t dma;
	size_t len;
	struct shca_charge charge;	/* for va's memory, while we own it */
};

/*
 * Kernel view of one ring.  For user rings, chunk memory is owned by the
 * mmap entries (freed from mmap_free once the last VMA is gone); for
 * kernel rings, by the ring itself.
 */
struct shca_ring {
	struct shca_ring_ctl *ctl;
	struct shca_ring_chunk *chunks;
	struct shca_mmap_entry **mmap;	/* user rings only */
	struct device *dma_dev;
	u64 len;			/* page aligned total */
	u32 nchunks;
	u32 entries;
	u32 entry_shift;
	u32 entries_offset;
	u32 chunk_shift;
	u32 kprod;			/* private: kernel-produced rings */
	u32 kcons;			/* private: kernel-consumed rings */
	bool user;			/* a user's: charged to its mm too */
};

int shca_ring_alloc(struct shca_ring *ring, struct device *dma_dev,
		    u32 entries, u32 entry_shift, struct ib_ucontext *uctx);
void shca_ring_free(struct shca_ring *ring);
void shca_ring_fill_info(const struct shca_ring *ring,
			 struct shca_ring_info *info);
void *shca_ring_entry(const struct shca_ring *ring, u32 idx);

#endif /* SHCA_RING_H */
