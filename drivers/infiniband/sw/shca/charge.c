// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: charging ring memory to its user and to the device (charge.h).
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

#include "charge.h"
#include "charge_logic.h"

/*
 * Ceiling on the ring memory of one device, in MiB; 0 (the default)
 * means a quarter of the RAM.  Read at every charge, so a change applies
 * to the next allocation; memory already held stays.
 */
static unsigned int shca_ring_mem_max_mb;
module_param_named(ring_mem_max_mb, shca_ring_mem_max_mb, uint, 0644);
MODULE_PARM_DESC(ring_mem_max_mb,
		 "Ceiling on one device's ring memory in MiB (0: a quarter of RAM)");

/*
 * Add @pages to the device's ring memory unless that passes the
 * ceiling; the count never goes above it, even for a moment.
 * Context: any.
 */
static int shca_charge_dev(atomic64_t *count, u64 pages)
{
	u64 limit = shca_charge_ceiling(READ_ONCE(shca_ring_mem_max_mb),
					totalram_pages(), PAGE_SHIFT);
	s64 old = atomic64_read(count);

	do {
		if (!shca_charge_within((u64)old + pages, pages, limit))
			return -ENOMEM;
	} while (!atomic64_try_cmpxchg(count, &old, old + pages));
	return 0;
}

/*
 * Add @pages to @mm's pinned_vm unless that passes RLIMIT_MEMLOCK and
 * the caller lacks CAP_IPC_LOCK (the rule of ib_umem_get()).
 * Context: process, the caller's own mm.
 */
static int shca_charge_mm(struct mm_struct *mm, u64 pages)
{
	u64 limit = shca_charge_rlimit_pages(rlimit(RLIMIT_MEMLOCK),
					     PAGE_SHIFT);
	u64 total = atomic64_add_return(pages, &mm->pinned_vm);

	if (!shca_charge_within(total, pages, limit) &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(pages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/**
 * shca_charge_ring - charge one chunk of ring memory before it is allocated
 * @c: empty charge to fill
 * @dma_dev: the device's DMA device (it holds the ring memory count)
 * @bytes: the chunk's size
 * @user: a user verb asked for it: charge the calling process's mm too
 *
 * Context: process, may sleep.
 * Return: 0, or -ENOMEM when the user's locked-memory limit or the
 * device's ceiling would be passed (nothing is charged then).
 */
int shca_charge_ring(struct shca_charge *c, struct device *dma_dev,
		     u64 bytes, bool user)
{
	struct mm_struct *mm = user ? current->mm : NULL;
	u64 pages = shca_charge_pages(bytes, PAGE_SHIFT);
	int err;

	err = shca_charge_dev(shca_dma_dev_ring_pages(dma_dev), pages);
	if (err)
		return err;
	if (mm) {
		err = shca_charge_mm(mm, pages);
		if (err) {
			atomic64_sub(pages, shca_dma_dev_ring_pages(dma_dev));
			return err;
		}
		mmgrab(mm);
	}
	c->mm = mm;
	c->dev = get_device(dma_dev);
	c->pages = pages;
	return 0;
}

/**
 * shca_charge_user - charge kernel memory held for a user to its mm
 * @c: empty charge to fill
 * @bytes: the memory's size
 *
 * For what a user's verb makes the kernel hold that is neither ring
 * memory nor allocated by shca (an ODP umem's page lists, which ib_core
 * allocates): the calling process's pinned_vm, against RLIMIT_MEMLOCK
 * unless it has CAP_IPC_LOCK.  Undone by shca_uncharge_ring().
 * Context: process, the user's own.
 * Return: 0, or -ENOMEM when the limit would be passed (nothing is
 * charged then).
 */
int shca_charge_user(struct shca_charge *c, u64 bytes)
{
	u64 pages = shca_charge_pages(bytes, PAGE_SHIFT);
	int err;

	err = shca_charge_mm(current->mm, pages);
	if (err)
		return err;
	mmgrab(current->mm);
	c->mm = current->mm;
	c->pages = pages;
	return 0;
}

/*
 * Undo shca_charge_ring() or shca_charge_user() once the memory is
 * freed; @c is left empty, so a second call does nothing.  The mm may
 * have exited: mmgrab() keeps its struct, and pinned_vm is all we touch.
 * Context: any that may drop a device reference (process, or the last
 * munmap()).
 */
void shca_uncharge_ring(struct shca_charge *c)
{
	if (!c->pages)
		return;
	if (c->mm) {
		atomic64_sub(c->pages, &c->mm->pinned_vm);
		mmdrop(c->mm);
	}
	if (c->dev) {
		atomic64_sub(c->pages, shca_dma_dev_ring_pages(c->dev));
		put_device(c->dev);
	}
	*c = (struct shca_charge){};
}
