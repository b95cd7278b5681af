// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: user contexts, mmap of ring chunks, protection and XRC domains.
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "shca.h"

int shca_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata)
{
	struct ib_device *ibdev = ibuctx->device;
	struct shca_alloc_ucontext_resp resp = {};
	struct shca_alloc_ucontext_req req;
	int err;

	err = shca_udata_get_req(ibdev, udata, &req, sizeof(req),
				 offsetofend(typeof(req), comp_mask));
	if (!err)
		err = shca_udata_check_cmd(ibdev, "ucontext", req.comp_mask, 0,
					   req.reserved_32);
	if (err)
		goto err_out;

	resp.comp_mask = SHCA_UCONTEXT_RESP_CMASK_RINGS;
	if (SHCA_FLUSH_SUPPORTED)
		resp.comp_mask |= SHCA_UCONTEXT_RESP_CMASK_FLUSH;
	resp.abi_version = SHCA_UVERBS_ABI_VERSION;
	resp.max_sq_wr = SHCA_MAX_QP_WR;
	resp.max_rq_wr = SHCA_MAX_QP_WR;
	resp.max_sge = SHCA_MAX_SGE;
	resp.max_inline_data = SHCA_MAX_INLINE;
	resp.max_cqe = SHCA_MAX_CQE;
	resp.sq_entry_shift = SHCA_SQ_ENTRY_SHIFT;
	resp.rq_entry_shift = SHCA_RQ_ENTRY_SHIFT;
	resp.cqe_shift = SHCA_CQE_SHIFT;
	resp.ctl_size = sizeof(struct shca_ring_ctl);
	err = shca_udata_put_resp(ibdev, udata, &resp, sizeof(resp));
	if (err)
		goto err_out;
	return 0;

err_out:
	shca_stat_inc(to_sdev(ibdev), SHCA_STAT_ALLOC_UCONTEXT_ERR);
	return err;
}

void shca_dealloc_ucontext(struct ib_ucontext *ibuctx)
{
}

/*
 * The device is going away while a process still holds it open.  ib_core
 * has already zapped every mapping of our rings, and it destroys the
 * context's objects through the normal destroy verbs, so nothing of ours
 * is left to detach here.  Having this op lets unregistration (rdma link
 * delete, netdev removal, rmmod) proceed instead of waiting for the
 * process to close the device.
 */
void shca_disassociate_ucontext(struct ib_ucontext *ibuctx)
{
}

/*
 * Map one ring chunk.  rdma_user_mmap_io() ties the entry's lifetime to
 * the VMA, so the chunk stays allocated until it is unmapped.
 * Context: process (mmap_lock held).
 */
int shca_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma)
{
	struct ib_device *ibdev = ibuctx->device;
	struct rdma_user_mmap_entry *entry;
	struct shca_mmap_entry *e;
	int err = -EINVAL;

	/* ring memory is data: no executable mappings (as efa) */
	if (vma->vm_flags & VM_EXEC) {
		ibdev_dbg(ibdev, "mmap: executable mapping refused\n");
		err = -EPERM;
		goto out;
	}
	/* ... and none later through mprotect(PROT_EXEC) */
	shca_vma_clear_flags(vma, VM_MAYEXEC);
	entry = rdma_user_mmap_entry_get(ibuctx, vma);
	if (!entry) {
		ibdev_dbg(ibdev, "mmap: no entry at pgoff %#lx len %#lx\n",
			  vma->vm_pgoff, vma->vm_end - vma->vm_start);
		goto out;
	}
	e = to_smmap(entry);
	if (is_vmalloc_addr(e->va)) {
		ibdev_err_ratelimited(ibdev, "mmap: ring not in linear map\n");
		goto out_put;
	}
	err = rdma_user_mmap_io(ibuctx, vma, page_to_pfn(virt_to_page(e->va)),
				PAGE_ALIGN(e->len), vma->vm_page_prot, entry);
	if (err)
		ibdev_dbg(ibdev, "mmap: remap failed %d\n", err);
out_put:
	rdma_user_mmap_entry_put(entry);
out:
	if (err)
		shca_stat_inc(to_sdev(ibdev), SHCA_STAT_MMAP_ERR);
	return err;
}

/* Last reference to an entry: no VMA maps the chunk any more. */
void shca_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct shca_mmap_entry *e = to_smmap(entry);

	dma_free_coherent(e->dma_dev, e->len, e->va, e->dma);
	shca_uncharge_ring(&e->charge);
	put_device(e->dma_dev);
	kfree(e);
}

int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_pd *pd = to_spd(ibpd);
	struct shca_alloc_pd_resp resp = {};
	int id, err;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (err)
		goto err_out;
	id = ida_alloc_max(&sdev->pd_ida, SHCA_MAX_PD - 1, GFP_KERNEL);
	if (id < 0) {
		ibdev_dbg(&sdev->ibdev, "pd: no pdn left (%d)\n", id);
		err = id;
		goto err_out;
	}
	pd->pdn = id;
	resp.pdn = pd->pdn;
	err = shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
	if (err)
		goto err_free_pdn;
	return 0;

err_free_pdn:
	ida_free(&sdev->pd_ida, pd->pdn);
err_out:
	shca_stat_inc(sdev, SHCA_STAT_ALLOC_PD_ERR);
	return err;
}

int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);

	ida_free(&sdev->pd_ida, to_spd(ibpd)->pdn);
	return 0;
}

/*
 * An XRC domain.  ib_core keeps the users (XRC SRQs and target QPs) and
 * the inode sharing across processes; the driver only numbers it.
 * Context: process, may sleep.
 */
int shca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibxrcd->device);
	int id, err;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (err)
		return err;
	id = ida_alloc_max(&sdev->xrcd_ida, SHCA_MAX_XRCD - 1, GFP_KERNEL);
	if (id < 0) {
		ibdev_dbg(&sdev->ibdev, "xrcd: none left (%d)\n", id);
		return id;
	}
	to_sxrcd(ibxrcd)->xrcdn = id;
	return 0;
}

/* ib_core refuses this while an SRQ or QP uses the domain. */
int shca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibxrcd->device);

	ida_free(&sdev->xrcd_ida, to_sxrcd(ibxrcd)->xrcdn);
	return 0;
}
