// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: allocation and user mapping of rings in DMA-coherent memory.
 *
 * A user ring's chunks are each exposed as one rdma_user_mmap_entry, with
 * page offsets that follow each other, so userspace addresses chunk i at
 * mmap_key + (i << chunk_shift).  Once a chunk is inserted its memory is
 * owned by the entry and freed by shca_mmap_free() after the last VMA
 * is gone; a destroyed queue therefore never frees memory still mapped.
 * Each chunk is charged (charge.h) before it is allocated; the charge
 * moves with the memory into the entry and is undone where it is freed.
 */
#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "shca.h"

/* Attempts to find a contiguous range of mmap offsets. */
#define SHCA_RING_MMAP_TRIES	4

void *shca_ring_entry(const struct shca_ring *ring, u32 idx)
{
	u64 off = shca_ring_entry_off(idx, ring->entries, ring->entries_offset,
				      ring->entry_shift);
	u32 chunk = shca_ring_chunk_of(off, ring->chunk_shift);

	return ring->chunks[chunk].va + shca_ring_chunk_off(off, ring->chunk_shift);
}

static void shca_ring_free_chunk(struct shca_ring *ring, u32 i)
{
	struct shca_ring_chunk *c = &ring->chunks[i];

	if (c->va)
		dma_free_coherent(ring->dma_dev, c->len, c->va, c->dma);
	c->va = NULL;
	shca_uncharge_ring(&c->charge);
}

static int shca_ring_alloc_chunks(struct shca_ring *ring)
{
	u64 chunk = 1ULL << ring->chunk_shift;
	u32 i;

	ring->nchunks = DIV_ROUND_UP_ULL(ring->len, chunk);
	ring->chunks = kcalloc(ring->nchunks, sizeof(*ring->chunks),
			       shca_gfp(ring->user));
	if (!ring->chunks)
		return -ENOMEM;

	for (i = 0; i < ring->nchunks; i++) {
		struct shca_ring_chunk *c = &ring->chunks[i];
		int err;

		c->len = min_t(u64, chunk, ring->len - ((u64)i << ring->chunk_shift));
		err = shca_charge_ring(&c->charge, ring->dma_dev, c->len,
				       ring->user);
		if (err)
			return err;
		c->va = dma_alloc_coherent(ring->dma_dev, c->len, &c->dma,
					   GFP_KERNEL);
		if (!c->va)
			return -ENOMEM;
	}
	ring->ctl = ring->chunks[0].va;
	return 0;
}

/* Remove the mmap entries; their memory goes when the last VMA does. */
static void shca_ring_remove_mmap(struct shca_ring *ring)
{
	u32 i;

	if (!ring->mmap)
		return;
	for (i = 0; i < ring->nchunks; i++) {
		if (!ring->mmap[i])
			continue;
		ring->chunks[i].va = NULL;	/* owned by the entry */
		shca_charge_move(&ring->mmap[i]->charge,
				 &ring->chunks[i].charge);
		rdma_user_mmap_entry_remove(&ring->mmap[i]->rdma);
		ring->mmap[i] = NULL;
	}
	kfree(ring->mmap);
	ring->mmap = NULL;
}

static int shca_ring_insert_chunk(struct shca_ring *ring,
				  struct ib_ucontext *uctx, u32 i)
{
	struct shca_ring_chunk *c = &ring->chunks[i];
	struct shca_mmap_entry *e;
	u32 pgoff;
	int err;

	e = kzalloc(sizeof(*e), shca_gfp(true));
	if (!e)
		return -ENOMEM;
	e->va = c->va;
	e->dma = c->dma;
	e->len = c->len;
	e->dma_dev = get_device(ring->dma_dev);

	if (!i) {
		err = rdma_user_mmap_entry_insert(uctx, &e->rdma, c->len);
	} else {
		pgoff = ring->mmap[0]->rdma.start_pgoff +
			(i << (ring->chunk_shift - PAGE_SHIFT));
		err = rdma_user_mmap_entry_insert_exact(uctx, &e->rdma,
							c->len, pgoff);
	}
	if (err) {
		put_device(e->dma_dev);
		kfree(e);
		/* Offset taken by a concurrent insert: start over. */
		return i ? -EAGAIN : err;
	}
	ring->mmap[i] = e;
	return 0;
}

static int shca_ring_insert_mmap(struct shca_ring *ring,
				 struct ib_ucontext *uctx)
{
	u32 i;
	int err;

	ring->mmap = kcalloc(ring->nchunks, sizeof(*ring->mmap),
			     shca_gfp(true));
	if (!ring->mmap)
		return -ENOMEM;
	for (i = 0; i < ring->nchunks; i++) {
		err = shca_ring_insert_chunk(ring, uctx, i);
		if (err)
			return err;
	}
	return 0;
}

/* Free whatever the ring still owns; safe on a partly built ring. */
void shca_ring_free(struct shca_ring *ring)
{
	u32 i;

	if (!ring->chunks)
		return;
	shca_ring_remove_mmap(ring);
	for (i = 0; i < ring->nchunks; i++)
		shca_ring_free_chunk(ring, i);
	kfree(ring->chunks);
	ring->chunks = NULL;
	ring->ctl = NULL;
}

static int shca_ring_try_alloc(struct shca_ring *ring,
			       struct ib_ucontext *uctx)
{
	int err;

	err = shca_ring_alloc_chunks(ring);
	if (!err && uctx)
		err = shca_ring_insert_mmap(ring, uctx);
	if (err)
		shca_ring_free(ring);
	return err;
}

/**
 * shca_ring_alloc - allocate a ring, mapped to @uctx if not NULL
 * @ring: zeroed ring to set up
 * @dma_dev: device for dma_alloc_coherent()
 * @entries: power of two
 * @entry_shift: log2 of the entry stride
 * @uctx: user context to expose the ring to, or NULL for a kernel ring
 *
 * A user ring (@uctx) is charged to the calling process (charge.h).
 * Context: process, may sleep; for a user ring, the process asking.
 * Return: 0 or a negative errno (-ENOMEM past a memory limit).
 */
int shca_ring_alloc(struct shca_ring *ring, struct device *dma_dev,
		    u32 entries, u32 entry_shift, struct ib_ucontext *uctx)
{
	int tries = SHCA_RING_MMAP_TRIES;
	int err;

	if (!is_power_of_2(entries))
		return -EINVAL;
	ring->dma_dev = dma_dev;
	ring->user = !!uctx;
	ring->entries = entries;
	ring->entry_shift = entry_shift;
	ring->entries_offset = shca_ring_entries_offset(entry_shift);
	ring->len = PAGE_ALIGN(shca_ring_bytes(entries, entry_shift));
	ring->chunk_shift = shca_ring_chunk_shift(ring->len, PAGE_SHIFT);

	do {
		err = shca_ring_try_alloc(ring, uctx);
	} while (err == -EAGAIN && --tries);
	return err == -EAGAIN ? -ENOMEM : err;
}

void shca_ring_fill_info(const struct shca_ring *ring,
			 struct shca_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	info->mmap_key = rdma_user_mmap_get_offset(&ring->mmap[0]->rdma);
	info->mmap_len = ring->len;
	info->ctl_offset = 0;
	info->entries_offset = ring->entries_offset;
	info->entries = ring->entries;
	info->entry_shift = ring->entry_shift;
	info->chunk_shift = ring->chunk_shift;
}
