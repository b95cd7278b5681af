/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: what the memory a user's verbs make the kernel hold is charged to.
 *
 *  - Ring memory (dma_alloc_coherent(): QP SQ/RQ, CQ, SRQ, WQ and TM
 *    operation rings) is charged chunk by chunk: to the creating
 *    process's mm (pinned_vm against RLIMIT_MEMLOCK, CAP_IPC_LOCK exempt,
 *    as ib_umem charges registered memory) when a user asked for it,
 *    and always to the device's ring memory, capped by the module
 *    parameter ring_mem_max_mb.  The charge lives as long as the memory:
 *    it moves with a chunk into its mmap entry and is undone once, where
 *    the memory is freed (charge.c).
 *  - The page lists of an ODP MR (ib_core allocates them: 16 bytes per
 *    page of the MR, unswappable) are charged to the registering
 *    process's pinned_vm as ring memory is, but not to the device.
 *  - Kernel-side state a user verb makes the driver allocate goes to the
 *    caller's memory cgroup: shca_gfp() (__GFP_ACCOUNT), and never wakes
 *    the OOM killer (__GFP_RETRY_MAYFAIL): such a verb fails with
 *    -ENOMEM instead.  Kernel consumers (udata NULL) are charged nothing
 *    but the device's ring memory.
 */
#ifndef SHCA_CHARGE_H
#define SHCA_CHARGE_H

#include <linux/gfp.h>
#include <linux/slab.h>
#include <linux/types.h>
#include <linux/vmalloc.h>

#include "charge_logic.h"

struct device;
struct mm_struct;

/* One chunk's charge; all zero when nothing is charged. */
struct shca_charge {
	struct mm_struct *mm;	/* mmgrab()ed; its pinned_vm holds @pages */
	struct device *dev;	/* get_device()ed; holds @pages of ring memory */
	u64 pages;
};

int shca_charge_ring(struct shca_charge *c, struct device *dma_dev,
		     u64 bytes, bool user);
int shca_charge_user(struct shca_charge *c, u64 bytes);
void shca_uncharge_ring(struct shca_charge *c);

/* Hand a charge over with the memory it is for; @from is left empty. */
static inline void shca_charge_move(struct shca_charge *to,
				    struct shca_charge *from)
{
	*to = *from;
	*from = (struct shca_charge){};
}

/* GFP flags for what a verb allocates: the user's ones are accounted. */
static inline gfp_t shca_gfp(bool user)
{
	return user ? GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL : GFP_KERNEL;
}

/* The same for arrays sized by the user (per-WQE state): no warning. */
static inline gfp_t shca_gfp_array(bool user)
{
	return user ? shca_gfp(true) | __GFP_NOWARN : GFP_KERNEL;
}

/**
 * shca_kvzalloc - zeroed per-object state, freed with kvfree()
 * @bytes: its size
 * @gfp: GFP_KERNEL, maybe with __GFP_ACCOUNT/__GFP_NOWARN
 *
 * kvzalloc(), except that a size a power-of-two block of pages would fit
 * badly (shca_alloc_wants_vmalloc()) goes to vmalloc at once.
 * Context: process, may sleep.
 */
static inline void *shca_kvzalloc(size_t bytes, gfp_t gfp)
{
	if (shca_alloc_wants_vmalloc(bytes, KMALLOC_MAX_CACHE_SIZE, PAGE_SHIFT))
		return __vmalloc(bytes, gfp | __GFP_ZERO);
	return kvzalloc(bytes, gfp);
}

atomic64_t *shca_dma_dev_ring_pages(struct device *dma_dev);

#endif /* SHCA_CHARGE_H */
