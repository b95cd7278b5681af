// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: memory windows and the local memory operations of the SQ.
 *
 * Windows live in their own xarray; their key indices have bit 23 set
 * (SHCA_MW_INDEX_BASE), so an R_Key names either an MR or a window and
 * the top key bit says which.  A window is allocated Free; BIND_MW work
 * requests (type 1 through ibv_bind_mw, type 2B through post_send) bind
 * it to a range of an MR that allows IB_ACCESS_MW_BIND.  A bound window
 * holds a reference to its MR and is counted in mr->num_mw, which keeps
 * the MR from being deregistered.
 *
 * Invalidation: a type 1 window is unbound by a zero-length bind; a
 * type 2B window by LOCAL_INV, by a SEND_WITH_INV arriving on the QP it
 * is bound to, or by deallocation.  Invalidation frees the binding at
 * once; an access that already looked the window up keeps its MR
 * reference until it is done.
 *
 * The local operations (BIND_MW, LOCAL_INV, REG_MR) are executed by the
 * requester (rc_req.c) once every WQE before them has completed, so they
 * are ordered with the rest of the SQ as if fenced.
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "mem_logic.h"

static void shca_mw_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_mw, ref)->freed);
}

static void shca_mw_put(struct shca_mw *mw)
{
	kref_put(&mw->ref, shca_mw_release);
}

/* A window by the index part of @key, referenced.  Context: process. */
static struct shca_mw *shca_mw_get_index(struct shca_dev *sdev, u32 key)
{
	struct shca_mw *mw;

	xa_lock(&sdev->mws);
	mw = xa_load(&sdev->mws, key >> 8);
	if (mw && !kref_get_unless_zero(&mw->ref))
		mw = NULL;
	xa_unlock(&sdev->mws);
	return mw;
}

/**
 * shca_alloc_mw - allocate a Free memory window (ib_core owns @ibmw)
 * @ibmw: ib_core set type and pd
 * @udata: no driver data either way
 *
 * Context: process, may sleep.
 */
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibmw->device);
	struct shca_mw *mw = to_smw(ibmw);
	int err;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (err)
		return err;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2) {
		ibdev_dbg(&sdev->ibdev, "mw: type %d\n", ibmw->type);
		return -EINVAL;
	}
	if (atomic_inc_return(&sdev->num_mw) > SHCA_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	kref_init(&mw->ref);
	init_completion(&mw->freed);
	spin_lock_init(&mw->lock);
	err = xa_alloc(&sdev->mws, &mw->index, NULL,
		       XA_LIMIT(SHCA_MW_INDEX_BASE,
				SHCA_MW_INDEX_BASE + SHCA_MAX_MW - 1),
		       GFP_KERNEL);
	if (err)
		goto err_count;
	mw->rkey = (mw->index << 8) |
		   (atomic_inc_return(&sdev->mr_key_gen) & 0xff);
	ibmw->rkey = mw->rkey;
	err = xa_err(xa_store(&sdev->mws, mw->index, mw, GFP_KERNEL));
	if (err) {
		xa_erase(&sdev->mws, mw->index);
		goto err_count;
	}
	return 0;

err_count:
	atomic_dec(&sdev->num_mw);
	return err == -EBUSY ? -ENOMEM : err;
}

/* Drop the binding of @mw.  mw->lock held. */
static void shca_mw_unbind(struct shca_mw *mw)
{
	struct shca_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	mw->valid = false;
	if (!mr)
		return;
	spin_lock(&mr->lock);
	mr->num_mw--;
	spin_unlock(&mr->lock);
	mw->mr = NULL;
	shca_mr_put(mr);
}

/* Unpublish, wait for lookups, unbind.  Context: process, may sleep. */
int shca_dealloc_mw(struct ib_mw *ibmw)
{
	struct shca_dev *sdev = to_sdev(ibmw->device);
	struct shca_mw *mw = to_smw(ibmw);

	xa_erase(&sdev->mws, mw->index);
	shca_mw_put(mw);
	wait_for_completion(&mw->freed);
	spin_lock(&mw->lock);
	shca_mw_unbind(mw);
	spin_unlock(&mw->lock);
	atomic_dec(&sdev->num_mw);
	return 0;
}

/* Bind @mw to @mr (referenced; kept on success) per @b.  mw->lock held. */
static int shca_mw_bind_to(struct shca_mw *mw, struct shca_mr *mr,
			   const struct shca_wqe_bind_mw *b, u32 qpn)
{
	lockdep_assert_held(&mw->lock);
	spin_lock(&mr->lock);
	if (mr->dead || mr->type == SHCA_MR_DMA) {
		spin_unlock(&mr->lock);
		return -EINVAL;	/* the caller drops @mr */
	}
	mr->num_mw++;
	spin_unlock(&mr->lock);
	shca_mw_unbind(mw);
	mw->mr = mr;
	mw->addr = b->addr;
	mw->length = b->length;
	mw->access = b->access & ~IB_ACCESS_LOCAL_WRITE;
	mw->qpn = qpn;
	mw->valid = true;
	return 0;
}

/* Fill the MR part of a bind check from @mr (referenced). */
static void shca_bind_req_mr(struct shca_bind_req *r, struct shca_mr *mr,
			     struct ib_pd *pd)
{
	spin_lock(&mr->lock);
	r->pd_ok = r->pd_ok && mr->ibmr.pd == pd;
	r->mr_access = mr->access;
	r->mr_iova = mr->iova;
	r->mr_length = mr->length;
	if (mr->type == SHCA_MR_DMA)
		r->mr_access = 0;	/* never bindable */
	spin_unlock(&mr->lock);
}

/* Validate and apply a bind on a referenced window.  Context: SQ engine. */
static int shca_mw_bind_locked(struct shca_qp *qp, struct shca_mw *mw,
			       const struct shca_wqe_bind_mw *b,
			       struct shca_mr *mr)
{
	struct shca_bind_req r = {
		.type = mw->ibmw.type,
		.bound = mw->valid,
		.cur_rkey = mw->rkey,
		.wqe_mw_rkey = b->mw_rkey,
		.new_rkey = b->rkey,
		.pd_ok = mw->ibmw.pd == qp->ibqp.pd,
		.addr = b->addr,
		.length = b->length,
		.access = b->access,
	};
	int err;

	lockdep_assert_held(&mw->lock);
	if (mr)
		shca_bind_req_mr(&r, mr, qp->ibqp.pd);
	else if (r.type != IB_MW_TYPE_1 || b->length)
		r.pd_ok = false;	/* no MR to bind to */
	err = shca_mw_bind_check(&r);
	if (err)
		return err;
	mw->rkey = b->rkey;
	mw->ibmw.rkey = b->rkey;
	if (r.type == IB_MW_TYPE_1 && !b->length) {
		shca_mw_unbind(mw);
		return 1;	/* @mr was not used */
	}
	return shca_mw_bind_to(mw, mr, b, qp->ibqp.qp_num);
}

/**
 * shca_mw_bind - execute a BIND_MW work request
 * @qp: the QP it was posted on
 * @b: the WQE fields (untrusted)
 *
 * Context: SQ engine.
 * Return: 0 or a negative error (the WQE completes with MW_BIND_ERR).
 */
static int shca_mw_bind(struct shca_qp *qp, const struct shca_wqe_bind_mw *b)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_mr *mr;
	struct shca_mw *mw;
	int err;

	if (!SHCA_KEY_IS_MW(b->rkey))
		return -EINVAL;
	mw = shca_mw_get_index(sdev, b->rkey);
	if (!mw)
		return -ENOENT;
	mr = shca_mr_get(sdev, b->mr_lkey);
	spin_lock(&mw->lock);
	err = shca_mw_bind_locked(qp, mw, b, mr);
	spin_unlock(&mw->lock);
	/* on success the window keeps the MR reference */
	if (err && mr)
		shca_mr_put(mr);
	shca_mw_put(mw);
	if (err < 0)
		ibdev_dbg(qp->ibqp.device, "qp %u: bind of %#x failed %d\n",
			  qp->ibqp.qp_num, b->rkey, err);
	return err < 0 ? err : 0;
}

/*
 * Invalidate a type 2B window.  @remote: SEND_WITH_INV, which must
 * arrive on the QP the window is bound to.  Context: the engines.
 */
static int shca_mw_invalidate(struct shca_qp *qp, u32 rkey, bool remote)
{
	struct shca_mw *mw;
	int err = -EINVAL;

	mw = shca_mw_get_index(to_sdev(qp->ibqp.device), rkey);
	if (!mw)
		return -ENOENT;
	spin_lock(&mw->lock);
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->valid && mw->rkey == rkey &&
	    mw->ibmw.pd == shca_qp_rpd(qp) &&
	    (!remote || mw->qpn == qp->ibqp.qp_num)) {
		shca_mw_unbind(mw);
		err = 0;
	}
	spin_unlock(&mw->lock);
	shca_mw_put(mw);
	return err;
}

/* LOCAL_INV or SEND_WITH_INV of an MR or window key. */
static int shca_invalidate(struct shca_qp *qp, u32 key, bool remote)
{
	int err;

	if (SHCA_KEY_IS_MW(key))
		err = shca_mw_invalidate(qp, key, remote);
	else
		err = shca_mr_invalidate(qp, key);
	if (err)
		ibdev_dbg(qp->ibqp.device, "qp %u: invalidate %#x failed %d\n",
			  qp->ibqp.qp_num, key, err);
	return err;
}

/**
 * shca_invalidate_remote - the IETH R_Key of an incoming SEND_WITH_INV
 * @qp: the RC QP the SEND arrived on
 * @rkey: from the packet (untrusted)
 *
 * Context: RQ engine.
 * Return: 0 or a negative error.
 */
int shca_invalidate_remote(struct shca_qp *qp, u32 rkey)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	int err = shca_invalidate(qp, rkey, true);

	shca_stat_inc(sdev, err ? SHCA_STAT_MEM_OP_ERRS :
				  SHCA_STAT_REMOTE_INVS);
	return err;
}

/* Context: SQ engine. */
static enum ib_wc_status shca_local_exec(struct shca_qp *qp,
					 const struct shca_send_wqe *hdr)
{
	switch (hdr->opcode) {
	case SHCA_OP_BIND_MW:
		return shca_mw_bind(qp, &hdr->bind) ? IB_WC_MW_BIND_ERR :
						      IB_WC_SUCCESS;
	case SHCA_OP_LOCAL_INV:
		return shca_invalidate(qp, hdr->ex, false) ?
		       IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	case SHCA_OP_REG_MR:
		if (qp->user)
			return IB_WC_LOC_QP_OP_ERR;
		return shca_frmr_reg(qp, &hdr->reg) ? IB_WC_LOC_PROT_ERR :
						     IB_WC_SUCCESS;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

static enum shca_stat shca_local_stat(u8 opcode)
{
	switch (opcode) {
	case SHCA_OP_BIND_MW:
		return SHCA_STAT_MW_BINDS;
	case SHCA_OP_LOCAL_INV:
		return SHCA_STAT_LOCAL_INVS;
	default:
		return SHCA_STAT_FAST_REGS;
	}
}

/**
 * shca_local_op - execute BIND_MW, LOCAL_INV or REG_MR
 * @qp: RC/UC QP; every WQE before this one has completed
 * @hdr: private copy of the WQE (untrusted)
 *
 * Context: SQ engine.
 * Return: the completion status.
 */
enum ib_wc_status shca_local_op(struct shca_qp *qp,
				const struct shca_send_wqe *hdr)
{
	enum ib_wc_status st = shca_local_exec(qp, hdr);

	shca_qp_stat_inc(qp, st == IB_WC_SUCCESS ?
			 shca_local_stat(hdr->opcode) : SHCA_STAT_MEM_OP_ERRS);
	return st;
}

/**
 * shca_mw_rget - a remote access through a memory window
 * @qp: the QP the request arrived on
 * @rkey: the window's R_Key (untrusted)
 * @va: first byte, in the MR's address space (no zero-based windows)
 * @len: bytes
 * @access: IB_ACCESS_REMOTE_* needed
 * @mrp: the window's MR, referenced, on success
 *
 * The window must be bound with @rkey, belong to the QP's PD, be bound
 * to this QP if it is of type 2B, grant @access and cover the range.
 * Context: RQ engine.
 * Return: 0, -ENOENT, -EACCES or -EFAULT.
 */
int shca_mw_rget(struct shca_qp *qp, u32 rkey, u64 va, u32 len, int access,
		 struct shca_mr **mrp)
{
	struct shca_mw *mw;
	int err = 0;

	mw = shca_mw_get_index(to_sdev(qp->ibqp.device), rkey);
	if (!mw)
		return -ENOENT;
	spin_lock(&mw->lock);
	if (!mw->valid || mw->rkey != rkey)
		err = -ENOENT;
	else if (mw->ibmw.pd != shca_qp_rpd(qp) ||
		 (mw->ibmw.type == IB_MW_TYPE_2 &&
		  mw->qpn != qp->ibqp.qp_num) ||
		 (mw->access & access) != access)
		err = -EACCES;
	else if (!shca_range_inside(va, len, mw->addr, mw->length))
		err = -EFAULT;
	else
		kref_get(&mw->mr->ref);	/* the window holds one */
	if (!err)
		*mrp = mw->mr;
	spin_unlock(&mw->lock);
	shca_mw_put(mw);
	return err;
}
