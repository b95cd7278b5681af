// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: memory regions.
 *
 * Keys are (xarray index << 8) | generation byte; lkey == rkey.  The
 * index is reserved first (NULL entry) and the MR is published with
 * xa_store() once fully built.  Deregistration unpublishes, drops the
 * creation reference and waits for lookups (the datapath) to finish with
 * the MR.
 *
 * Fast registration MRs (FRWR) start in the Free state; IB_WR_REG_MR
 * gives them a key, access flags and the page list ib_map_mr_sg() built,
 * IB_WR_LOCAL_INV or an incoming SEND_WITH_INV frees them again.
 *
 * An MR with memory windows bound to it cannot be deregistered: the call
 * fails with -EBUSY (IBTA lets deregistration fail while windows are
 * bound), the windows hold references to it, and the consumer must
 * unbind, invalidate or deallocate them first.
 *
 * A user MR with IB_ACCESS_ON_DEMAND gets an ODP umem (shca_odp.c; of
 * huge pages with IB_ACCESS_HUGETLB) instead of a pinned one, or, for
 * address 0 and length SIZE_MAX, no umem at all: an implicit ODP MR of
 * the whole address space, which keeps the registering process's mm.
 * Neither can be re-registered.
 */
#include <linux/log2.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "mem_logic.h"
#include "odp.h"
#include "odp_logic.h"

/*
 * The access an MR may carry.  FLUSH_GLOBAL lets FLUSH requests name the
 * MR (where FLUSH exists); FLUSH_PERSISTENT is refused like any bit not
 * here: shca has no persistence domain to flush to (compat.h).
 */
#define SHCA_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | SHCA_MR_ACCESS_FLUSH)

/*
 * @odp: IB_ACCESS_ON_DEMAND is allowed (reg_user_mr, if built in), and
 * with it IB_ACCESS_HUGETLB (the ODP umem's pages are huge pages).
 */
static int shca_mr_check_access(struct ib_device *ibdev, int access, bool odp)
{
	int allowed = SHCA_MR_ACCESS | IB_ACCESS_OPTIONAL;
	int unsupported;

	if (odp && (access & SHCA_ACCESS_ODP))
		allowed |= SHCA_ACCESS_ODP | IB_ACCESS_HUGETLB;
	unsupported = access & ~allowed;

	if (unsupported) {
		ibdev_dbg(ibdev, "mr: unsupported access flags %#x\n",
			  unsupported);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void shca_mr_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_mr, ref)->freed);
}

/* @user: a user's MR, accounted to its memory cgroup (charge.h). */
static struct shca_mr *shca_mr_new(struct shca_dev *sdev, int access,
				   bool user)
{
	struct shca_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), shca_gfp(user));
	if (!mr)
		return ERR_PTR(-ENOMEM);
	kref_init(&mr->ref);
	init_completion(&mr->freed);
	spin_lock_init(&mr->lock);
	mr->access = access;

	if (atomic_inc_return(&sdev->num_mr) > SHCA_MAX_MR) {
		ibdev_dbg(&sdev->ibdev, "mr: limit %u reached\n", SHCA_MAX_MR);
		err = -ENOMEM;
		goto err_count;
	}
	err = xa_alloc(&sdev->mrs, &mr->index, NULL,
		       XA_LIMIT(1, SHCA_MAX_MR), GFP_KERNEL);
	if (err)
		goto err_count;
	mr->ibmr.lkey = (mr->index << 8) |
			(atomic_inc_return(&sdev->mr_key_gen) & 0xff);
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	mr->valid = true;
	return mr;

err_count:
	atomic_dec(&sdev->num_mr);
	kfree(mr);
	return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
}

static int shca_mr_publish(struct shca_dev *sdev, struct shca_mr *mr)
{
	return xa_err(xa_store(&sdev->mrs, mr->index, mr, GFP_KERNEL));
}

/* Unpublish, drop the creation reference, wait for users, free. */
static void shca_mr_destroy(struct shca_dev *sdev, struct shca_mr *mr)
{
	xa_erase(&sdev->mrs, mr->index);
	kref_put(&mr->ref, shca_mr_release);
	wait_for_completion(&mr->freed);
	ib_umem_release(mr->umem);
	shca_uncharge_ring(&mr->charge);
	if (mr->mm)
		mmdrop(mr->mm);
	kfree(mr->frmr.map);
	kfree(mr->frmr.pages);
	atomic_dec(&sdev->num_mr);
	kfree(mr);
}

/* Count a failed registration and turn @err into the verb's return. */
static struct ib_mr *shca_mr_fail(struct shca_dev *sdev, int err)
{
	shca_stat_inc(sdev, SHCA_STAT_REG_MR_ERR);
	return ERR_PTR(err);
}

/*
 * Publish @mr, fully built, unless building it failed with @err; on any
 * failure destroy it.  Context: process, may sleep.
 */
static struct ib_mr *shca_mr_finish(struct shca_dev *sdev, struct shca_mr *mr,
				    int err)
{
	if (!err)
		err = shca_mr_publish(sdev, mr);
	if (err) {
		shca_mr_destroy(sdev, mr);
		return shca_mr_fail(sdev, err);
	}
	return &mr->ibmr;
}

struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mr *mr;
	int err;

	err = shca_mr_check_access(&sdev->ibdev, access, false);
	if (err)
		return shca_mr_fail(sdev, err);
	mr = shca_mr_new(sdev, access, false);
	if (IS_ERR(mr))
		return shca_mr_fail(sdev, PTR_ERR(mr));
	mr->type = SHCA_MR_DMA;
	mr->length = U64_MAX;
	return shca_mr_finish(sdev, mr, 0);
}

static int shca_mr_check_range(struct ib_device *ibdev, u64 start,
			       u64 length, u64 iova)
{
	u64 end;

	if (!length || length > SHCA_MAX_MR_SIZE ||
	    check_add_overflow(start, length, &end) ||
	    check_add_overflow(iova, length, &end)) {
		ibdev_dbg(ibdev, "mr: bad range start %#llx len %#llx iova %#llx\n",
			  start, length, iova);
		return -EINVAL;
	}
	return 0;
}

static struct ib_umem *shca_umem_get(struct ib_device *ibdev, u64 start,
				     u64 length, u64 iova, int access)
{
	struct ib_umem *umem;
	int err;

	err = shca_mr_check_range(ibdev, start, length, iova);
	if (err)
		return ERR_PTR(err);
	if (access & IB_ACCESS_ON_DEMAND)
		return shca_odp_umem_get(ibdev, start, length, access);
	umem = ib_umem_get(ibdev, start, length, access);
	if (IS_ERR(umem))
		ibdev_dbg(ibdev, "mr: ib_umem_get failed %ld\n", PTR_ERR(umem));
	return umem;
}

/*
 * An implicit ODP MR: the whole address space of the calling process,
 * its pages taken on each access (shca_odp.c).  Its iova is 0.
 * Context: process (reg_user_mr), the registering task.
 */
static struct ib_mr *shca_reg_odp_implicit(struct shca_dev *sdev, u64 iova,
					   int access)
{
	struct shca_mr *mr;

	if (iova) {
		ibdev_dbg(&sdev->ibdev, "mr: implicit ODP at iova %#llx\n",
			  iova);
		return shca_mr_fail(sdev, -EINVAL);
	}
	mr = shca_mr_new(sdev, access, true);
	if (IS_ERR(mr))
		return shca_mr_fail(sdev, PTR_ERR(mr));
	mr->type = SHCA_MR_ODP_IMPLICIT;
	mr->length = U64_MAX;
	mr->ibmr.length = U64_MAX;
	/* its counters need the device before ib_core sets it too */
	mr->ibmr.device = &sdev->ibdev;
	mmgrab(current->mm);
	mr->mm = current->mm;
	return shca_mr_finish(sdev, mr, 0);
}

struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct ib_umem *umem;
	struct shca_mr *mr;
	int err;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (!err)
		err = shca_mr_check_access(&sdev->ibdev, access, true);
	if (err)
		return shca_mr_fail(sdev, err);
	if ((access & IB_ACCESS_ON_DEMAND) && shca_odp_implicit(start, length))
		return shca_reg_odp_implicit(sdev, iova, access);
	umem = shca_umem_get(&sdev->ibdev, start, length, iova, access);
	if (IS_ERR(umem))
		return shca_mr_fail(sdev, PTR_ERR(umem));
	mr = shca_mr_new(sdev, access, true);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return shca_mr_fail(sdev, PTR_ERR(mr));
	}
	mr->type = umem->is_odp ? SHCA_MR_ODP : SHCA_MR_USER;
	mr->umem = umem;
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	if (umem->is_odp)
		err = shca_odp_charge(mr);
	return shca_mr_finish(sdev, mr, err);
}

/* Swap the translation; the old umem is returned for release. */
static struct ib_umem *shca_mr_set_trans(struct shca_mr *mr,
					 struct ib_umem *umem, u64 iova,
					 u64 length)
{
	struct ib_umem *old;

	spin_lock(&mr->lock);
	old = mr->umem;
	mr->umem = umem;
	mr->sg_hint = NULL;	/* it pointed into the old umem */
	mr->iova = iova;
	mr->length = length;
	spin_unlock(&mr->lock);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return old;
}

static int shca_rereg_check(struct ib_device *ibdev, struct shca_mr *mr,
			    int flags, int access, struct ib_udata *udata)
{
	int err = shca_udata_no_req(ibdev, udata);

	if (err)
		return err;
	if (flags & ~IB_MR_REREG_SUPPORTED) {
		ibdev_dbg(ibdev, "mr: unknown rereg flags %#x\n", flags);
		return -EOPNOTSUPP;
	}
	if (shca_mr_is_odp(mr)) {
		ibdev_dbg(ibdev, "mr: rereg of an ODP MR is not supported\n");
		return -EOPNOTSUPP;
	}
	if (mr->type != SHCA_MR_USER) {
		ibdev_dbg(ibdev, "mr: rereg of a non-user MR\n");
		return -EINVAL;
	}
	if (READ_ONCE(mr->num_mw)) {
		ibdev_dbg(ibdev, "mr: rereg with memory windows bound\n");
		return -EBUSY;
	}
	if (flags & IB_MR_REREG_ACCESS)
		return shca_mr_check_access(ibdev, access, false);
	return 0;
}

static bool shca_mr_needs_repin(struct shca_mr *mr, int access)
{
	return ib_access_writable(access) && !mr->umem->writable;
}

/* Modifies the MR in place and returns NULL, or an ERR_PTR. */
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct ib_device *ibdev = ibmr->device;
	struct shca_mr *mr = to_smr(ibmr);
	struct ib_umem *umem = NULL;
	int new_access;
	int err;

	err = shca_rereg_check(ibdev, mr, flags, access, udata);
	if (err)
		return ERR_PTR(err);
	new_access = flags & IB_MR_REREG_ACCESS ? access : mr->access;
	if (!(flags & IB_MR_REREG_TRANS) && shca_mr_needs_repin(mr, new_access)) {
		/* same range, pinned again for writing */
		flags |= IB_MR_REREG_TRANS;
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	if (flags & IB_MR_REREG_TRANS) {
		umem = shca_umem_get(ibdev, start, length, iova, new_access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
		umem = shca_mr_set_trans(mr, umem, iova, length);
	}
	spin_lock(&mr->lock);
	mr->access = new_access;
	spin_unlock(&mr->lock);
	/* ib_core updates ibmr->pd for IB_MR_REREG_PD itself */
	ib_umem_release(umem);
	return NULL;
}

/* Context: process.  Return: 0, or -EBUSY while windows are bound. */
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct shca_mr *mr = to_smr(ibmr);
	u32 busy;

	spin_lock(&mr->lock);
	busy = mr->num_mw;
	if (!busy)
		mr->dead = true;	/* no window binds to it from now on */
	spin_unlock(&mr->lock);
	if (busy) {
		ibdev_dbg(ibmr->device, "mr %#x: %u memory windows bound\n",
			  ibmr->lkey, busy);
		return -EBUSY;
	}
	shca_mr_destroy(to_sdev(ibmr->device), mr);
	return 0;
}

static int shca_frmr_init(struct shca_mr *mr, u32 max_num_sg)
{
	mr->frmr.map = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	mr->frmr.pages = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->frmr.map || !mr->frmr.pages)
		return -ENOMEM;
	mr->frmr.max_pages = max_num_sg;
	mr->type = SHCA_MR_FRMR;
	mr->valid = false;	/* Free until IB_WR_REG_MR */
	return 0;
}

/**
 * shca_alloc_mr - a fast registration MR (kernel ULPs, FRWR)
 * @ibpd: protection domain
 * @mr_type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: page list entries, at most SHCA_MAX_FRMR_PAGES
 *
 * Context: process, may sleep.
 */
struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type mr_type,
			    u32 max_num_sg)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mr *mr;

	if (mr_type != IB_MR_TYPE_MEM_REG) {
		ibdev_dbg(&sdev->ibdev, "mr: type %d not supported\n", mr_type);
		return shca_mr_fail(sdev, -EOPNOTSUPP);
	}
	if (!max_num_sg || max_num_sg > SHCA_MAX_FRMR_PAGES) {
		ibdev_dbg(&sdev->ibdev, "mr: %u pages\n", max_num_sg);
		return shca_mr_fail(sdev, -EINVAL);
	}
	mr = shca_mr_new(sdev, 0, false);
	if (IS_ERR(mr))
		return shca_mr_fail(sdev, PTR_ERR(mr));
	return shca_mr_finish(sdev, mr, shca_frmr_init(mr, max_num_sg));
}

static int shca_frmr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct shca_mr *mr = to_smr(ibmr);

	if (mr->frmr.map_n >= mr->frmr.max_pages)
		return -ENOMEM;
	mr->frmr.map[mr->frmr.map_n++] = addr;
	return 0;
}

/**
 * shca_map_mr_sg - build the page list of a fast registration MR
 * @ibmr: MR from shca_alloc_mr(), owned by the caller (not in use)
 * @sg: DMA-mapped scatterlist (kernel addresses)
 * @sg_nents: entries of @sg
 * @sg_offset: offset into the first entry, updated by ib_sg_to_pages()
 *
 * ib_map_mr_sg() has set ibmr->page_size.  Context: any, does not sleep.
 * Return: the number of entries mapped, or a negative error.
 */
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct shca_mr *mr = to_smr(ibmr);

	if (mr->type != SHCA_MR_FRMR || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SZ_4K || ibmr->page_size > SZ_2G) {
		ibdev_dbg(ibmr->device, "mr %#x: cannot map, page size %u\n",
			  ibmr->lkey, ibmr->page_size);
		return -EINVAL;
	}
	mr->frmr.map_n = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      shca_frmr_set_page);
}

/* May @reg apply to @mr?  mr->lock held. */
static bool shca_frmr_reg_ok(struct shca_qp *qp, struct shca_mr *mr,
			     const struct shca_wqe_reg_mr *reg)
{
	u32 idx, off;

	lockdep_assert_held(&mr->lock);
	if (mr->type != SHCA_MR_FRMR || mr->valid || mr->dead ||
	    mr->ibmr.pd != qp->ibqp.pd || (reg->key >> 8) != mr->index ||
	    !reg->length || reg->length > SHCA_MAX_MR_SIZE ||
	    (reg->access & ~SHCA_MR_ACCESS))
		return false;
	/* the page list must cover the whole registration */
	return shca_frmr_xlate(reg->iova, reg->page_shift, mr->frmr.map_n,
			       reg->iova + reg->length - 1, &idx, &off);
}

/**
 * shca_mr_get_index - look up an MR by the index part of @key only
 * @sdev: device
 * @key: key from a WQE or packet (untrusted); the key byte is ignored
 *
 * For operations that change the key or the state (REG_MR, LOCAL_INV):
 * the caller checks what it needs under mr->lock.
 * Context: process (the engines).
 * Return: the MR with a reference held, or NULL.
 */
static struct shca_mr *shca_mr_get_index(struct shca_dev *sdev, u32 key)
{
	struct shca_mr *mr;

	xa_lock(&sdev->mrs);
	mr = xa_load(&sdev->mrs, key >> 8);
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	xa_unlock(&sdev->mrs);
	return mr;
}

/**
 * shca_frmr_reg - execute IB_WR_REG_MR
 * @qp: the kernel QP it was posted on
 * @reg: the WQE fields
 *
 * The MR must be a Free fast registration MR of the QP's PD.
 * Context: SQ engine.
 * Return: 0 or a negative error.
 */
int shca_frmr_reg(struct shca_qp *qp, const struct shca_wqe_reg_mr *reg)
{
	struct shca_mr *mr;
	int err = -EINVAL;

	mr = shca_mr_get_index(to_sdev(qp->ibqp.device), reg->mr_key);
	if (!mr)
		return -ENOENT;
	spin_lock(&mr->lock);
	if (shca_frmr_reg_ok(qp, mr, reg)) {
		memcpy(mr->frmr.pages, mr->frmr.map,
		       mr->frmr.map_n * sizeof(u64));
		mr->frmr.npages = mr->frmr.map_n;
		mr->frmr.page_shift = reg->page_shift;
		mr->iova = reg->iova;
		mr->length = reg->length;
		mr->access = reg->access;
		WRITE_ONCE(mr->key, reg->key);
		WRITE_ONCE(mr->valid, true);
		err = 0;
	}
	spin_unlock(&mr->lock);
	if (err)
		ibdev_dbg(qp->ibqp.device, "qp %u: bad REG_MR of %#x\n",
			  qp->ibqp.qp_num, reg->mr_key);
	shca_mr_put(mr);
	return err;
}

/**
 * shca_mr_invalidate - LOCAL_INV or SEND_WITH_INV of an MR key
 * @qp: QP the invalidation came from (local) or arrived on (remote)
 * @key: the key to invalidate
 *
 * Only fast registration MRs of the QP's PD without bound windows can be
 * invalidated; invalidating a Free one with its last key is a no-op.
 * Context: SQ engine or RQ engine.
 * Return: 0 or a negative error.
 */
int shca_mr_invalidate(struct shca_qp *qp, u32 key)
{
	struct shca_mr *mr;
	int err = -EINVAL;

	mr = shca_mr_get_index(to_sdev(qp->ibqp.device), key);
	if (!mr)
		return -ENOENT;
	spin_lock(&mr->lock);
	if (mr->type == SHCA_MR_FRMR && mr->key == key && !mr->num_mw &&
	    mr->ibmr.pd == shca_qp_rpd(qp)) {
		WRITE_ONCE(mr->valid, false);
		err = 0;
	}
	spin_unlock(&mr->lock);
	shca_mr_put(mr);
	return err;
}

/**
 * shca_mr_get - look up an MR by lkey/rkey for the datapath
 * @sdev: device
 * @key: key from a WQE or packet (untrusted)
 *
 * Context: process (the engines); the MR xarray's lock is not irq-safe.
 * Return: the MR with a reference held, or NULL.
 */
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key)
{
	struct shca_mr *mr;

	xa_lock(&sdev->mrs);
	mr = xa_load(&sdev->mrs, key >> 8);
	if (mr && (READ_ONCE(mr->key) != key || !READ_ONCE(mr->valid) ||
		   !kref_get_unless_zero(&mr->ref)))
		mr = NULL;
	xa_unlock(&sdev->mrs);
	return mr;
}

void shca_mr_put(struct shca_mr *mr)
{
	kref_put(&mr->ref, shca_mr_release);
}
