// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: data movement between packets and memory regions.
 *
 * Every SGE names an MR by lkey.  The MR is looked up and referenced for
 * the duration of one copy, its PD must be the QP's, and the range must
 * lie inside [iova, iova + length).  User MRs are reached page by page
 * through the pinned umem with kmap_local_page(); DMA MRs hold kernel
 * virtual addresses, since ib_core's virtual DMA ops (no DMA device)
 * hand out kernel addresses as DMA addresses.
 *
 * Fast registration MRs are reached through their page list, whose
 * entries are kernel addresses as well.
 *
 * Remote accesses (the RC/UC responder) name an MR or a memory window by
 * R_Key instead: shca_rmr_get() checks PD, access and range and returns
 * the MR (a window's MR) referenced for as long as the access lasts.
 *
 * On-demand paging MRs (shca_odp.c) are reached through their page list,
 * which a copy faults in and holds locked (the umem's umem_mutex) while
 * it runs, or (implicit ODP MRs) through the pages the process maps, each
 * taken for one copy; that may sleep, so such a copy runs without
 * mr->lock: their translation never changes (no rereg), and the
 * reference the copy holds keeps the umem.  This file is the only way the driver reads or writes
 * MR memory, so every consumer (the requester, the responder, the
 * same-host direct path and its inline runs, tag matching's rendezvous
 * READ, UD and raw packet receives) gets the faults.
 */
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <rdma/ib_umem.h>

#include "shca.h"
#include "mem_logic.h"
#include "odp.h"

/* Sum of the SGE lengths; -EINVAL if it does not fit 32 bits. */
int shca_sge_total(const struct shca_sge *sge, u32 num_sge, u64 *total)
{
	u32 i;

	*total = 0;
	for (i = 0; i < num_sge; i++)
		*total += sge[i].length;
	return *total > U32_MAX ? -EINVAL : 0;
}

static void shca_copy_dir(void *mem, void *buf, size_t len, bool to_mr)
{
	if (to_mr)
		memcpy(mem, buf, len);
	else
		memcpy(buf, mem, len);
}

/*
 * The umem scatterlist entry holding page @pg of @mr, and in @first the
 * index of its first page.  The walk starts at the entry the last copy
 * used when that lies before @pg, so a message copied packet after packet
 * never walks the list from its start again.  mr->lock held.
 */
static struct scatterlist *shca_umem_seek(struct shca_mr *mr, u64 pg,
					  u64 *first)
{
	struct scatterlist *sg = mr->umem->sgt_append.sgt.sgl;
	u64 start = 0;

	lockdep_assert_held(&mr->lock);
	if (mr->sg_hint && mr->sg_hint_pg <= pg) {
		sg = mr->sg_hint;
		start = mr->sg_hint_pg;
	}
	for (; sg; sg = sg_next(sg)) {
		u64 npg = PAGE_ALIGN(sg->offset + sg->length) >> PAGE_SHIFT;

		if (pg < start + npg)
			break;
		start += npg;
	}
	if (sg) {
		mr->sg_hint = sg;
		mr->sg_hint_pg = start;
	}
	*first = start;
	return sg;
}

/* Copy through the umem pages, @off bytes into the pinned range. */
static int shca_umem_copy(struct shca_mr *mr, u64 off, void *buf, u32 len,
			  bool to_mr)
{
	u64 pg = off >> PAGE_SHIFT, first;
	u32 pgoff = off & ~PAGE_MASK;
	struct scatterlist *sg;

	sg = shca_umem_seek(mr, pg, &first);
	for (; sg && len; sg = sg_next(sg)) {
		u64 npg = PAGE_ALIGN(sg->offset + sg->length) >> PAGE_SHIFT;

		for (; pg < first + npg && len; pg++) {
			u32 n = min_t(u32, len, PAGE_SIZE - pgoff);
			void *va = kmap_local_page(nth_page(sg_page(sg),
							    pg - first));

			shca_copy_dir(va + pgoff, buf, n, to_mr);
			kunmap_local(va);
			buf += n;
			len -= n;
			pgoff = 0;
		}
		first += npg;
	}
	return len ? -EFAULT : 0;
}

static bool shca_mr_covers(const struct shca_mr *mr, u64 addr, u32 len)
{
	u64 end;

	if (check_add_overflow(addr, (u64)len, &end))
		return false;
	if (mr->type == SHCA_MR_DMA)
		return true;
	return addr >= mr->iova && end <= mr->iova + mr->length;
}

/* Copy through a fast registration page list; mr->lock held. */
static int shca_frmr_copy(struct shca_mr *mr, u64 addr, void *buf, u32 len,
			  bool to_mr)
{
	const struct shca_frmr *f = &mr->frmr;
	u32 idx, off, n;

	while (len) {
		if (!shca_frmr_xlate(mr->iova, f->page_shift, f->npages, addr,
				     &idx, &off))
			return -EFAULT;
		n = min_t(u64, len, (1ULL << f->page_shift) - off);
		shca_copy_dir((void *)(uintptr_t)(f->pages[idx] + off), buf, n,
			      to_mr);
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Copy @len bytes at @addr of a referenced MR; mr->lock held. */
static int shca_mr_copy_locked(struct shca_mr *mr, u64 addr, void *buf,
			       u32 len, bool to_mr)
{
	lockdep_assert_held(&mr->lock);
	if (!shca_mr_covers(mr, addr, len))
		return -EFAULT;
	if (mr->type == SHCA_MR_DMA) {
		shca_copy_dir((void *)(uintptr_t)addr, buf, len, to_mr);
		return 0;
	}
	if (mr->type == SHCA_MR_FRMR)
		return shca_frmr_copy(mr, addr, buf, len, to_mr);
	if (WARN_ON_ONCE(mr->type != SHCA_MR_USER))
		return -EFAULT;	/* ODP MRs copy through shca_odp_copy() */
	return shca_umem_copy(mr, addr - mr->iova + ib_umem_offset(mr->umem),
			      buf, len, to_mr);
}

/*
 * May @cur copy @len bytes at @addr of @mr?  mr->lock held.
 * Return: 0, -ENOENT, -EACCES or -EFAULT (shca_cursor_copy()).
 */
static int shca_mr_check_lkey(const struct shca_sge_cursor *cur,
			      struct shca_mr *mr, u32 lkey, u64 addr, u32 len,
			      bool to_mr)
{
	lockdep_assert_held(&mr->lock);
	if (mr->key != lkey || !mr->valid)
		return -ENOENT;
	if (READ_ONCE(mr->ibmr.pd) != cur->pd ||
	    (to_mr && !(mr->access & IB_ACCESS_LOCAL_WRITE)))
		return -EACCES;
	if (!shca_mr_covers(mr, addr, len))
		return -EFAULT;
	return 0;
}

/*
 * One checked copy inside one MR.  Context: process; sleeps only to
 * fault in the pages of an ODP MR, and only if @cur allows it.
 */
static int shca_mr_copy(struct shca_sge_cursor *cur, u32 lkey, u64 addr,
			void *buf, u32 len, bool to_mr)
{
	struct shca_mr *mr = shca_mr_get(cur->sdev, lkey);
	bool odp;
	int err;

	if (!mr)
		return -ENOENT;
	spin_lock(&mr->lock);
	err = shca_mr_check_lkey(cur, mr, lkey, addr, len, to_mr);
	odp = shca_mr_is_odp(mr);
	if (!err && !odp)
		err = shca_mr_copy_locked(mr, addr, buf, len, to_mr);
	spin_unlock(&mr->lock);
	if (!err && odp)
		err = shca_odp_copy(mr, addr, buf, len, to_mr, !cur->nofault);
	shca_mr_put(mr);
	return err;
}

/**
 * shca_cursor_copy - move @len bytes between @buf and the SGE list
 * @cur: position in the SGE list; advanced past the bytes copied
 * @buf: kernel buffer
 * @len: bytes to copy
 * @to_mr: true to scatter @buf into the SGEs, false to gather from them
 *
 * Context: process (an engine work item); sleeps only to fault in the
 * pages of an ODP MR, never if @cur->nofault.
 * Return: 0, -ENOSPC if the SGEs are too short, or an access error
 * (-ENOENT bad key, -EACCES PD/access mismatch, -EFAULT out of range or
 * an ODP page that could not be had, -EAGAIN an ODP MR busy while
 * @cur->nofault).
 */
int shca_cursor_copy(struct shca_sge_cursor *cur, void *buf, u32 len,
		     bool to_mr)
{
	while (len) {
		const struct shca_sge *sge;
		u32 n;
		int err;

		if (cur->idx >= cur->num_sge)
			return -ENOSPC;
		sge = &cur->sge[cur->idx];
		if (cur->off >= sge->length) {
			cur->idx++;
			cur->off = 0;
			continue;
		}
		n = min(len, sge->length - cur->off);
		err = shca_mr_copy(cur, sge->lkey, sge->addr + cur->off, buf,
				   n, to_mr);
		if (err)
			return err;
		cur->off += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Serialises every shca atomic, so they are atomic with each other. */
static DEFINE_SPINLOCK(shca_atomic_lock);

/*
 * May @mr, found by @rkey, serve a request of @qp that needs @access?  It
 * must still carry @rkey and be valid, belong to the QP's PD and allow
 * @access.  Return: 0, -ENOENT or -EACCES.
 * Context: any; the caller holds mr->lock.
 */
static int shca_rmr_admit(struct shca_qp *qp, struct shca_mr *mr, u32 rkey,
			  int access)
{
	lockdep_assert_held(&mr->lock);
	if (mr->key != rkey || !mr->valid)
		return -ENOENT;
	if (READ_ONCE(mr->ibmr.pd) != shca_qp_rpd(qp) ||
	    (mr->access & access) != access)
		return -EACCES;
	return 0;
}

/**
 * shca_rmr_get - look up an R_Key for a remote access
 * @qp: the QP the request arrived on
 * @rkey: R_Key from the packet (untrusted); an MR's or a window's
 * @va: first byte of the access (untrusted)
 * @len: bytes accessed (untrusted)
 * @access: IB_ACCESS_REMOTE_{READ,WRITE,ATOMIC} needed
 * @mrp: the MR, referenced, on success; release with shca_mr_put()
 *
 * The MR must belong to the QP's PD, allow @access and cover
 * [@va, @va + @len) without overflow.  A DMA MR is reachable only if it
 * was created with the remote access flag.  Windows: shca_mw_rget().
 *
 * Context: process (the RX engine); does not sleep.
 * Return: 0, -ENOENT for an unknown key, -EACCES for a PD or access
 * mismatch, -EFAULT for an out-of-range access.
 */
int shca_rmr_get(struct shca_qp *qp, u32 rkey, u64 va, u32 len, int access,
		 struct shca_mr **mrp)
{
	struct shca_mr *mr;
	int err;

	if (SHCA_KEY_IS_MW(rkey))
		return shca_mw_rget(qp, rkey, va, len, access, mrp);
	mr = shca_mr_get(to_sdev(qp->ibqp.device), rkey);
	if (!mr)
		return -ENOENT;
	spin_lock(&mr->lock);
	err = shca_rmr_admit(qp, mr, rkey, access);
	if (!err && !shca_mr_covers(mr, va, len))
		err = -EFAULT;
	spin_unlock(&mr->lock);
	if (err) {
		shca_mr_put(mr);
		return err;
	}
	*mrp = mr;
	return 0;
}

/**
 * shca_rmr_check_region - may a request act on the whole region of an R_Key?
 * @qp: the QP the request arrived on
 * @rkey: R_Key from the packet (untrusted)
 * @access: the IB_ACCESS_* bits needed (a FLUSH's)
 *
 * For requests that name a region by its R_Key alone (a FLUSH of the
 * whole MR): the MR must be valid, belong to the QP's PD and allow
 * @access; no range is involved.  A window never grants a FLUSH
 * permission (its bind access has none), so a window's R_Key fails.
 *
 * Context: process (the RX engine); does not sleep.
 * Return: 0, -ENOENT for an unknown key, -EACCES for a window, a PD or
 * an access mismatch.
 */
int shca_rmr_check_region(struct shca_qp *qp, u32 rkey, int access)
{
	struct shca_mr *mr;
	int err;

	if (SHCA_KEY_IS_MW(rkey))
		return -EACCES;
	mr = shca_mr_get(to_sdev(qp->ibqp.device), rkey);
	if (!mr)
		return -ENOENT;
	spin_lock(&mr->lock);
	err = shca_rmr_admit(qp, mr, rkey, access);
	spin_unlock(&mr->lock);
	shca_mr_put(mr);
	return err;
}

/**
 * shca_rmr_copy - move bytes between a buffer and a referenced MR
 * @mr: from shca_rmr_get(), still referenced
 * @va: address inside @mr
 * @buf: kernel buffer
 * @len: bytes
 * @to_mr: true to write @buf into the MR, false to read from it
 *
 * The range is checked again: the MR may have been re-registered.
 * Context: process (the RX engine); sleeps only to fault in the pages of
 * an ODP MR.
 * Return: 0 or -EFAULT.
 */
int shca_rmr_copy(struct shca_mr *mr, u64 va, void *buf, u32 len, bool to_mr)
{
	int err;

	if (shca_mr_is_odp(mr)) {
		if (!shca_mr_covers(mr, va, len))
			return -EFAULT;
		return shca_odp_copy(mr, va, buf, len, to_mr, true);
	}
	spin_lock(&mr->lock);
	err = shca_mr_copy_locked(mr, va, buf, len, to_mr);
	spin_unlock(&mr->lock);
	return err;
}

/*
 * Make the 8 bytes at @va of @mr ready for an atomic: an ODP MR's page
 * is faulted in for writing and held (shca_odp_hold()) until
 * shca_rmr_unhold(); nothing to do for the others.
 * Context: process, may sleep.  Return: 0 or -EFAULT.
 */
static int shca_rmr_hold(struct shca_mr *mr, u64 va, struct shca_odp_hold *h)
{
	h->mr = NULL;
	if (!shca_mr_is_odp(mr))
		return 0;
	if (!shca_mr_covers(mr, va, sizeof(u64)))
		return -EFAULT;
	return shca_odp_hold(mr, va, sizeof(u64), h);
}

/* Context: process, may sleep. */
static void shca_rmr_unhold(struct shca_odp_hold *h)
{
	if (h->mr)
		shca_odp_release(h);
}

/* shca_rmr_copy() under shca_rmr_hold().  Context: does not sleep. */
static int shca_rmr_copy_held(struct shca_mr *mr, const struct shca_odp_hold *h,
			      u64 va, void *buf, u32 len, bool to_mr)
{
	if (!h->mr)
		return shca_rmr_copy(mr, va, buf, len, to_mr);
	shca_odp_copy_held(h, va, buf, len, to_mr);
	return 0;
}

/**
 * shca_rmr_atomic - 64-bit compare-and-swap or fetch-and-add on an MR
 * @mr: from shca_rmr_get() with IB_ACCESS_REMOTE_ATOMIC, referenced
 * @va: 8-byte aligned address inside @mr
 * @cmp_swap: true for compare-and-swap, false for fetch-and-add
 * @swap_add: swap value or addend
 * @compare: compare value (compare-and-swap only)
 * @orig: the value found at @va before the operation
 *
 * All shca atomics are serialised by one lock (IB_ATOMIC_HCA).
 * Context: process (the RX engine); sleeps only to fault in the page of
 * an ODP MR, before taking the atomics' lock.
 * Return: 0 or -EFAULT.
 */
int shca_rmr_atomic(struct shca_mr *mr, u64 va, bool cmp_swap, u64 swap_add,
		    u64 compare, u64 *orig)
{
	struct shca_odp_hold h;
	u64 val;
	int err;

	err = shca_rmr_hold(mr, va, &h);
	if (err)
		return err;
	spin_lock(&shca_atomic_lock);
	err = shca_rmr_copy_held(mr, &h, va, &val, sizeof(val), false);
	if (!err) {
		*orig = val;
		if (cmp_swap)
			val = val == compare ? swap_add : val;
		else
			val += swap_add;
		err = shca_rmr_copy_held(mr, &h, va, &val, sizeof(val), true);
	}
	spin_unlock(&shca_atomic_lock);
	shca_rmr_unhold(&h);
	return err;
}

/**
 * shca_rmr_atomic_write - 64-bit ATOMIC WRITE into an MR
 * @mr: from shca_rmr_get() with IB_ACCESS_REMOTE_WRITE, referenced
 * @va: 8-byte aligned address inside @mr
 * @val: the 8 bytes of the request, in wire order
 *
 * Serialised with the other atomics (shca_rmr_atomic()), so none of them
 * sees half of it.
 * Context: process (the RX engine); sleeps only to fault in the page of
 * an ODP MR, before taking the atomics' lock.
 * Return: 0 or -EFAULT.
 */
int shca_rmr_atomic_write(struct shca_mr *mr, u64 va, u64 val)
{
	struct shca_odp_hold h;
	int err;

	err = shca_rmr_hold(mr, va, &h);
	if (err)
		return err;
	spin_lock(&shca_atomic_lock);
	err = shca_rmr_copy_held(mr, &h, va, &val, sizeof(val), true);
	spin_unlock(&shca_atomic_lock);
	shca_rmr_unhold(&h);
	return err;
}
