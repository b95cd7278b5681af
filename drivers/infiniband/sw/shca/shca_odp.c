// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: on-demand paging (ODP) MRs.
 *
 * An MR registered with IB_ACCESS_ON_DEMAND pins nothing: its umem is an
 * ib_umem_odp, an MMU interval notifier over the user's range and a page
 * list (dma_list) that ib_core fills as pages are faulted in.  shca has no
 * DMA device (ib_uses_virt_dma()), so ib_dma_map_page() makes each
 * entry the page's kernel address, with the permission bits in its low
 * bits.
 *
 * Every access to an ODP MR's memory goes through mem.c, which calls
 * here: shca_odp_lock() takes the umem's umem_mutex with every page of
 * the range mapped, faulting the missing ones in first
 * (ib_umem_odp_map_dma_and_lock(), which follows the notifier sequence
 * protocol and returns with umem_mutex held), and the copy runs under
 * that mutex.  An invalidation (shca_odp_invalidate()) takes the same
 * mutex to unmap pages, so a copy in progress finishes on the pages it
 * found before the mm may free them, and the next copy faults them in
 * again: no copy ever sees a page the mm has let go of.
 *
 * An implicit ODP MR (address 0, length SIZE_MAX: the whole address
 * space of the registering process) has no umem, page lists or
 * notifier: each access takes the pages it touches from the process's mm
 * (get_user_pages_remote(), which faults them in), references them only
 * for that copy and lets them go.  Every access thus uses the pages
 * mapped when it runs; a page the mm drops meanwhile stays alive (the
 * reference) until the copy ends, as if the copy had come just before
 * the drop.  Nothing is held between accesses, so nothing is charged
 * but the MR itself, and no invalidation concerns it.
 *
 * Locks: umem_mutex (ib_core's, a mutex) -> shca_atomic_lock (mem.c).
 * umem_mutex is taken with no spinlock held, except by mutex_trylock()
 * from a caller that cannot sleep (may_fault false), which then uses
 * present pages only (an implicit MR: none).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>

#include "shca.h"
#include "mem_logic.h"
#include "odp.h"
#include "odp_logic.h"

/* ib_umem_odp_map_dma_and_lock() calls per fault while it keeps racing */
#define SHCA_ODP_FAULT_TRIES	8

static struct ib_umem_odp *shca_mr_odp(struct shca_mr *mr)
{
	return to_ib_umem_odp(mr->umem);
}

static struct shca_dev *shca_odp_sdev(struct ib_umem_odp *odp)
{
	return to_sdev(odp->umem.ibdev);
}

/**
 * shca_odp_invalidate - the mm is about to change pages of an ODP umem
 * @mni: the umem's interval notifier
 * @range: the range changing
 * @cur_seq: the sequence number to publish
 *
 * Unmaps the umem's pages inside @range under umem_mutex, which waits
 * for a copy using them to finish.  Mapping again is left to the next
 * access (a fault).
 * Context: the mm's notifier chain; may sleep when @range is blockable.
 * Return: false only when the range cannot block (the mm retries).
 */
static bool shca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct shca_dev *sdev = shca_odp_sdev(odp);
	unsigned long start, end;
	int before;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(range->start, ib_umem_start(odp));
	end = min(range->end, ib_umem_end(odp));
	before = odp->npages;
	if (start < end)
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	if (before != odp->npages) {
		shca_stat_inc(sdev, SHCA_STAT_ODP_INVALIDATIONS);
		shca_stat_add(sdev, SHCA_STAT_ODP_INVALIDATED_PAGES,
			      before - odp->npages);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops shca_odp_mni_ops = {
	.invalidate = shca_odp_invalidate,
};

/**
 * shca_odp_query_device - the ODP part of query_device
 * @attr: the attributes being filled
 *
 * Context: any.
 */
void shca_odp_query_device(struct ib_device_attr *attr)
{
	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	shca_odp_fill_caps(&attr->odp_caps);
}

/**
 * shca_odp_umem_get - the ODP umem of a new MR
 * @ibdev: device
 * @start: user address, checked by the caller with the length
 * @length: bytes
 * @access: IB_ACCESS_* with IB_ACCESS_ON_DEMAND
 *
 * Nothing is pinned or mapped: pages are faulted in on use.  The umem's
 * page lists (16 bytes per page) are ib_core's allocation, charged by
 * shca_odp_charge().
 * Context: process (the registering task's mm), may sleep.
 * Return: the umem (umem->is_odp set), or an ERR_PTR.
 */
struct ib_umem *shca_odp_umem_get(struct ib_device *ibdev, u64 start,
				  u64 length, int access)
{
	struct ib_umem_odp *odp;

	odp = ib_umem_odp_get(ibdev, start, length, access, &shca_odp_mni_ops);
	if (IS_ERR(odp)) {
		ibdev_dbg(ibdev, "mr: ib_umem_odp_get failed %ld\n",
			  PTR_ERR(odp));
		return ERR_CAST(odp);
	}
	return &odp->umem;
}

/**
 * shca_odp_charge - charge a new ODP MR's page lists to its user
 * @mr: the MR, its umem set, not yet published
 *
 * ib_core allocated the lists (a pfn per base page, a DMA address per
 * umem page); they are held as long as the MR, so the registering
 * process's locked memory pays for them (charge.h).  mr.c undoes it.
 * Context: process (reg_user_mr), the registering task.
 * Return: 0, or -ENOMEM past the task's RLIMIT_MEMLOCK.
 */
int shca_odp_charge(struct shca_mr *mr)
{
	struct ib_umem_odp *odp = shca_mr_odp(mr);
	u64 npfns = (ib_umem_end(odp) - ib_umem_start(odp)) >> PAGE_SHIFT;
	u64 bytes = npfns * sizeof(*odp->pfn_list) +
		    ib_umem_odp_num_pages(odp) * sizeof(*odp->dma_list);
	int err = shca_charge_user(&mr->charge, bytes);

	if (err)
		ibdev_dbg(odp->umem.ibdev,
			  "mr: ODP page lists (%llu bytes) over the locked memory limit\n",
			  bytes);
	return err;
}

/*
 * Fault [@va, @va + @len) of @odp in with @perm and lock the umem.  ib_core
 * gives up with -EAGAIN (or -EBUSY) when invalidations keep overtaking the
 * fault for a while (a process that keeps dropping the pages, a slow
 * host); that is no fault of the mapping, so it is tried again, a bounded
 * number of times, as a device would retry its page fault.
 * Context: process, may sleep.  Return: 0 with umem_mutex held, or
 * -EFAULT without it (no such mapping, no permission, or still racing).
 */
static int shca_odp_fault(struct ib_umem_odp *odp, u64 va, u32 len, u64 perm)
{
	struct shca_dev *sdev = shca_odp_sdev(odp);
	int tries = SHCA_ODP_FAULT_TRIES;
	int ret;

	do {
		ret = ib_umem_odp_map_dma_and_lock(odp, va, len, perm, true);
		if (ret != -EAGAIN && ret != -EBUSY)
			break;
		cond_resched();
	} while (--tries);
	if (ret < 0) {
		shca_stat_inc(sdev, SHCA_STAT_ODP_FAULT_ERRS);
		ibdev_dbg(&sdev->ibdev, "odp: fault at %#llx len %u: %d\n",
			  va, len, ret);
		return -EFAULT;
	}
	return 0;
}

/**
 * shca_odp_lock - lock an explicit ODP MR's range with its pages mapped
 * @mr: an explicit ODP MR, referenced
 * @addr: first byte, inside the MR (checked by the caller)
 * @len: bytes, inside the MR (checked by the caller), at least one
 * @write: the copy writes into the MR
 * @may_fault: the caller may sleep: wait for umem_mutex and fault
 *	       missing pages in; else only trylock and use present pages
 *
 * Release with shca_odp_unlock().
 * Context: process; may sleep if @may_fault.
 * Return: 0 with umem_mutex held; -EFAULT (a page could not be had) or
 * -EAGAIN (!@may_fault: the umem is busy) without it.
 */
static int shca_odp_lock(struct shca_mr *mr, u64 addr, u32 len, bool write,
			 bool may_fault)
{
	struct ib_umem_odp *odp = shca_mr_odp(mr);
	u64 va = shca_odp_va(mr->iova, odp->umem.address, addr);
	u64 perm = shca_odp_perm(write);
	u64 first, count;

	if (!shca_odp_span(ib_umem_start(odp), odp->page_shift,
			   ib_umem_odp_num_pages(odp), va, len, &first,
			   &count))
		return -EFAULT;
	if (may_fault)
		mutex_lock(&odp->umem_mutex);
	else if (!mutex_trylock(&odp->umem_mutex))
		return -EAGAIN;
	if (shca_odp_mapped(odp->dma_list, first, count, perm))
		return 0;
	mutex_unlock(&odp->umem_mutex);
	if (!may_fault) {
		shca_stat_inc(shca_odp_sdev(odp), SHCA_STAT_ODP_FAULT_ERRS);
		return -EFAULT;
	}
	shca_stat_inc(shca_odp_sdev(odp), SHCA_STAT_ODP_FAULTS);
	return shca_odp_fault(odp, va, len, perm);
}

/* Context: after a successful shca_odp_lock(). */
static void shca_odp_unlock(struct shca_mr *mr)
{
	mutex_unlock(&shca_mr_odp(mr)->umem_mutex);
}

/**
 * shca_odp_copy_locked - copy between @buf and a locked ODP range
 * @mr: the explicit ODP MR
 * @addr: first byte, as locked by shca_odp_lock()
 * @buf: kernel buffer
 * @len: bytes, at most what was locked
 * @to_mr: true to write @buf into the MR, false to read from it
 *
 * Context: umem_mutex held (shca_odp_lock()); does not sleep.
 */
static void shca_odp_copy_locked(struct shca_mr *mr, u64 addr, void *buf,
				 u32 len, bool to_mr)
{
	struct ib_umem_odp *odp = shca_mr_odp(mr);
	u64 va = shca_odp_va(mr->iova, odp->umem.address, addr);
	u64 psize = BIT_ULL(odp->page_shift);

	lockdep_assert_held(&odp->umem_mutex);
	while (len) {
		u64 idx = (va - ib_umem_start(odp)) >> odp->page_shift;
		u64 off = va & (psize - 1);
		u32 n = min_t(u64, len, psize - off);
		void *page = (void *)(uintptr_t)(odp->dma_list[idx] &
						 ODP_DMA_ADDR_MASK);

		if (to_mr)
			memcpy(page + off, buf, n);
		else
			memcpy(buf, page + off, n);
		va += n;
		buf += n;
		len -= n;
	}
}

/* ---- implicit ODP MRs ---- */

static struct shca_dev *shca_mr_sdev(struct shca_mr *mr)
{
	return to_sdev(mr->ibmr.device);
}

/*
 * Take @n pages of @mm from @va (page aligned) on, referenced, faulting
 * them in (for writing if @write).  Context: process, may sleep; @mm
 * mmget()ed.  Return: the number of pages taken, or a negative error.
 */
static long shca_odp_mm_pages(struct mm_struct *mm, u64 va, unsigned long n,
			      bool write, struct page **pages)
{
	long got;

	mmap_read_lock(mm);
	got = shca_gup_remote(mm, va, n, write ? FOLL_WRITE : 0, pages);
	mmap_read_unlock(mm);
	return got;
}

/*
 * The page of an implicit MR's process holding @va, referenced.
 * Context: process, may sleep.  Return: the page, or NULL (no such
 * mapping, no permission, or the process is gone).
 */
static struct page *shca_odp_implicit_page(struct shca_mr *mr, u64 va,
					   bool write)
{
	struct shca_dev *sdev = shca_mr_sdev(mr);
	struct page *page = NULL;

	shca_stat_inc(sdev, SHCA_STAT_ODP_FAULTS);
	if (mmget_not_zero(mr->mm)) {
		if (shca_odp_mm_pages(mr->mm, va & PAGE_MASK, 1, write,
				      &page) != 1)
			page = NULL;
		mmput_async(mr->mm);
	}
	if (!page) {
		shca_stat_inc(sdev, SHCA_STAT_ODP_FAULT_ERRS);
		ibdev_dbg(&sdev->ibdev, "odp: no page at %#llx (implicit)\n",
			  va);
	}
	return page;
}

/* Copy within one page, at @va's offset.  Context: any. */
static void shca_odp_page_copy(struct page *page, u64 va, void *buf, u32 n,
			       bool to_mr)
{
	void *kva = kmap_local_page(page);

	if (to_mr)
		memcpy(kva + offset_in_page(va), buf, n);
	else
		memcpy(buf, kva + offset_in_page(va), n);
	kunmap_local(kva);
}

/* Let a page of an implicit MR go.  Context: process, may sleep. */
static void shca_odp_page_put(struct page *page, bool written)
{
	if (written)
		set_page_dirty_lock(page);
	put_page(page);
}

/*
 * Copy between @buf and an implicit MR, page by page, each page taken
 * for that page's copy only.  Context: process, may sleep.
 * Return: 0 or -EFAULT.
 */
static int shca_odp_implicit_copy(struct shca_mr *mr, u64 va, void *buf,
				  u32 len, bool to_mr)
{
	while (len) {
		u32 n = min_t(u32, len, PAGE_SIZE - offset_in_page(va));
		struct page *page = shca_odp_implicit_page(mr, va, to_mr);

		if (!page)
			return -EFAULT;
		shca_odp_page_copy(page, va, buf, n, to_mr);
		shca_odp_page_put(page, to_mr);
		va += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/**
 * shca_odp_copy - copy between @buf and an ODP MR, faulting as needed
 * @mr: an ODP MR (explicit or implicit), referenced
 * @addr: first byte, inside the MR (checked by the caller)
 * @buf: kernel buffer
 * @len: bytes, inside the MR (checked by the caller)
 * @to_mr: true to write @buf into the MR, false to read from it
 * @may_fault: the caller may sleep; if not, an explicit MR's present
 *	       pages only are used, and an implicit MR cannot be reached
 *
 * Context: process; may sleep if @may_fault.
 * Return: 0, -EFAULT (a page could not be had) or -EAGAIN (!@may_fault:
 * the MR is busy).
 */
int shca_odp_copy(struct shca_mr *mr, u64 addr, void *buf, u32 len,
		  bool to_mr, bool may_fault)
{
	int err;

	if (!len)
		return 0;
	if (mr->type == SHCA_MR_ODP_IMPLICIT) {
		if (!may_fault) {
			shca_stat_inc(shca_mr_sdev(mr),
				      SHCA_STAT_ODP_FAULT_ERRS);
			return -EFAULT;
		}
		return shca_odp_implicit_copy(mr, addr, buf, len, to_mr);
	}
	err = shca_odp_lock(mr, addr, len, to_mr, may_fault);
	if (err)
		return err;
	shca_odp_copy_locked(mr, addr, buf, len, to_mr);
	shca_odp_unlock(mr);
	return 0;
}

/**
 * shca_odp_hold - hold an ODP MR's range for an atomic
 * @mr: an ODP MR, referenced
 * @addr: first byte, inside the MR (checked by the caller)
 * @len: bytes, inside one page (an aligned atomic's 8)
 * @h: filled in; release with shca_odp_release()
 *
 * The range is faulted in for writing and stays where it is until the
 * release: an explicit MR's umem_mutex is held (an invalidation waits),
 * an implicit MR's page referenced.
 * Context: process, may sleep.  Return: 0 or -EFAULT.
 */
int shca_odp_hold(struct shca_mr *mr, u64 addr, u32 len,
		  struct shca_odp_hold *h)
{
	h->mr = mr;
	h->page = NULL;
	if (mr->type != SHCA_MR_ODP_IMPLICIT)
		return shca_odp_lock(mr, addr, len, true, true);
	if (offset_in_page(addr) + len > PAGE_SIZE)
		return -EFAULT;
	h->page = shca_odp_implicit_page(mr, addr, true);
	return h->page ? 0 : -EFAULT;
}

/* Copy inside a held range.  Context: shca_odp_hold() done; no sleep. */
void shca_odp_copy_held(const struct shca_odp_hold *h, u64 addr, void *buf,
			u32 len, bool to_mr)
{
	if (h->page)
		shca_odp_page_copy(h->page, addr, buf, len, to_mr);
	else
		shca_odp_copy_locked(h->mr, addr, buf, len, to_mr);
}

/* Undo shca_odp_hold().  Context: process, may sleep. */
void shca_odp_release(struct shca_odp_hold *h)
{
	if (h->page)
		shca_odp_page_put(h->page, true);
	else
		shca_odp_unlock(h->mr);
}

/*
 * The ODP MR @sge names in @ibpd, referenced, if the range lies inside it
 * and it allows the writes @perm asks for.  Context: process.
 */
static struct shca_mr *shca_odp_advise_mr(struct ib_pd *ibpd,
					  const struct ib_sge *sge, u64 perm)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mr *mr = shca_mr_get(sdev, sge->lkey);
	bool ok;

	if (!mr)
		return NULL;
	spin_lock(&mr->lock);
	ok = shca_mr_is_odp(mr) && mr->ibmr.pd == ibpd &&
	     shca_range_inside(sge->addr, sge->length, mr->iova,
			       mr->length) &&
	     (!(perm & ODP_WRITE_ALLOWED_BIT) ||
	      (mr->access & IB_ACCESS_LOCAL_WRITE));
	spin_unlock(&mr->lock);
	if (ok)
		return mr;
	shca_mr_put(mr);
	return NULL;
}

/* Pages an implicit MR's prefetch takes at a time. */
#define SHCA_ODP_PREFETCH_BATCH	32

/*
 * Fault the pages of [@va, @va + @len) of an implicit MR's process in
 * (for writing if @write), and let them go: its page tables then hold
 * them, so the accesses that follow find them without a fault.
 * Context: process, may sleep.  Return: 0 or -EFAULT.
 */
static int shca_odp_implicit_prefetch(struct shca_mr *mr, u64 va, u32 len,
				      bool write)
{
	struct page *pages[SHCA_ODP_PREFETCH_BATCH];
	u64 end = va + len;
	int err = 0;
	long got, i;

	if (!mmget_not_zero(mr->mm))
		return -EFAULT;
	for (va &= PAGE_MASK; va < end && !err; va += got << PAGE_SHIFT) {
		got = min_t(u64, SHCA_ODP_PREFETCH_BATCH,
			    DIV_ROUND_UP(end - va, PAGE_SIZE));
		got = shca_odp_mm_pages(mr->mm, va, got, write, pages);
		if (got <= 0) {
			err = -EFAULT;
			break;
		}
		for (i = 0; i < got; i++)
			put_page(pages[i]);
	}
	mmput_async(mr->mm);
	return err;
}

/*
 * Map one SGE's pages: fault them in (@fault) or map those present.
 * Context: process, may sleep.  Return: 0 or a negative error.
 */
static int shca_odp_prefetch(struct shca_mr *mr, const struct ib_sge *sge,
			     u64 perm, bool fault)
{
	struct ib_umem_odp *odp;
	u64 va;
	int ret;

	shca_stat_inc(shca_mr_sdev(mr), SHCA_STAT_ODP_PREFETCHES);
	if (mr->type == SHCA_MR_ODP_IMPLICIT) {
		/* no page lists: present pages need no mapping */
		if (!fault)
			return 0;
		return shca_odp_implicit_prefetch(mr, sge->addr, sge->length,
						  perm & ODP_WRITE_ALLOWED_BIT);
	}
	odp = shca_mr_odp(mr);
	va = shca_odp_va(mr->iova, odp->umem.address, sge->addr);
	if (fault) {
		ret = shca_odp_fault(odp, va, sge->length, perm);
		if (ret)
			return ret;
	} else {
		ret = ib_umem_odp_map_dma_and_lock(odp, va, sge->length, perm,
						   false);
		if (ret < 0)
			return ret;
	}
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/**
 * shca_advise_mr - ibv_advise_mr(): map ODP MR pages ahead of their use
 * @ibpd: the PD the SGEs' MRs must belong to
 * @advice: IB_UVERBS_ADVISE_MR_ADVICE_*
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH or 0; shca always completes
 *	   the work before returning, which satisfies both
 * @sg_list: ranges, each inside an ODP MR named by its lkey
 * @num_sge: entries of @sg_list
 * @attrs: uverbs attributes (unused)
 *
 * Context: process (uverbs), may sleep.
 * Return: 0; -EOPNOTSUPP for an unknown advice; -EINVAL for unknown
 * flags or an SGE that names no ODP MR of @ibpd, lies outside it or asks
 * for write on an MR without local write; -EFAULT if pages could not be
 * faulted in.
 */
int shca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs)
{
	struct ib_device *ibdev = ibpd->device;
	bool fault;
	u64 perm;
	u32 i;
	int err;

	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH) {
		ibdev_dbg(ibdev, "advise_mr: unknown flags %#x\n", flags);
		return -EINVAL;
	}
	err = shca_odp_advice(advice, &perm, &fault);
	if (err) {
		ibdev_dbg(ibdev, "advise_mr: unknown advice %d\n", advice);
		return err;
	}
	for (i = 0; i < num_sge && !err; i++) {
		struct shca_mr *mr;

		if (!sg_list[i].length)
			continue;
		mr = shca_odp_advise_mr(ibpd, &sg_list[i], perm);
		if (!mr) {
			ibdev_dbg(ibdev, "advise_mr: bad sge %u (lkey %#x)\n",
				  i, sg_list[i].lkey);
			return -EINVAL;
		}
		err = shca_odp_prefetch(mr, &sg_list[i], perm, fault);
		shca_mr_put(mr);
	}
	return err;
}
