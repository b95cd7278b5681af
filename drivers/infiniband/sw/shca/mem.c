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
 */
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <rdma/ib_umem.h>

#include "shca.h"

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

/* Copy through the umem pages, @off bytes into the pinned range. */
static int shca_umem_copy(struct ib_umem *umem, u64 off, void *buf, u32 len,
			  bool to_mr)
{
	struct sg_table *sgt = &umem->sgt_append.sgt;
	struct sg_page_iter piter;
	u32 pgoff = off & ~PAGE_MASK;

	for_each_sg_page(sgt->sgl, &piter, sgt->orig_nents, off >> PAGE_SHIFT) {
		u32 n = min_t(u32, len, PAGE_SIZE - pgoff);
		void *va = kmap_local_page(sg_page_iter_page(&piter));

		shca_copy_dir(va + pgoff, buf, n, to_mr);
		kunmap_local(va);
		buf += n;
		len -= n;
		pgoff = 0;
		if (!len)
			break;
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

/* One checked copy inside one MR.  Context: process, does not sleep. */
static int shca_mr_copy(struct shca_sge_cursor *cur, u32 lkey, u64 addr,
			void *buf, u32 len, bool to_mr)
{
	struct shca_mr *mr = shca_mr_get(cur->sdev, lkey);
	int err = 0;

	if (!mr)
		return -ENOENT;
	spin_lock(&mr->lock);
	if (READ_ONCE(mr->ibmr.pd) != cur->pd ||
	    (to_mr && !(mr->access & IB_ACCESS_LOCAL_WRITE)))
		err = -EACCES;
	else if (!shca_mr_covers(mr, addr, len))
		err = -EFAULT;
	else if (mr->type == SHCA_MR_DMA)
		shca_copy_dir((void *)(uintptr_t)addr, buf, len, to_mr);
	else
		err = shca_umem_copy(mr->umem, addr - mr->iova +
				     ib_umem_offset(mr->umem), buf, len, to_mr);
	spin_unlock(&mr->lock);
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
 * Context: process (an engine work item); does not sleep.
 * Return: 0, -ENOSPC if the SGEs are too short, or an access error
 * (-ENOENT bad key, -EACCES PD/access mismatch, -EFAULT out of range).
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
