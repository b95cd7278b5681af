// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: shared receive queues, basic and XRC.
 *
 * An SRQ is a ring of receive WQEs in DMA-coherent memory, in the RQ's
 * format, mapped into the process like a QP's RQ (see shca-abi.h).  The
 * receive engines of all the RC and UD QPs attached to it consume from
 * it under srq->lock, which also guards the limit and the ring itself
 * (a resize swaps it).  ib_core counts the QPs attached (srq->usecnt) and
 * refuses destroy_srq while any is left.
 *
 * An XRC SRQ belongs to an XRC domain and has a CQ of its own.  No QP is
 * attached to it: an XRC request names it by number (the XRCETH), and the
 * target QP's receive engine looks it up for that one packet with a
 * reference (shca_xsrq_get()).  Destroy unpublishes the number and waits
 * for those references, so a packet in flight finishes first and later
 * ones find no SRQ.
 *
 * Resize (modify_srq(IB_SRQ_MAX_WR)) builds a new ring, copies the posted
 * WQEs to the same free-running indices and swaps the rings under both
 * locks; see struct shca_modify_srq_req for the user side.
 *
 * Limit event: once armed by modify_srq(IB_SRQ_LIMIT), the consumer that
 * leaves fewer than srq_limit WQEs in the SRQ disarms it and raises
 * IB_EVENT_SRQ_LIMIT_REACHED.  A broken ring (hostile producer index)
 * raises IB_EVENT_SRQ_ERR once and moves each QP that pops from it to the
 * error state.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "rwqe.h"
#include "tm.h"

/*
 * The request of a create: tm_max_ops comes with the TM bit, and only a
 * user TM SRQ has one.  Context: process.
 */
static int shca_srq_req(struct ib_device *ibdev,
			const struct ib_srq_init_attr *init,
			struct ib_udata *udata, struct shca_create_srq_req *req)
{
	bool tm = init->srq_type == IB_SRQT_TM;
	int err;

	err = shca_udata_get_req(ibdev, udata, req, sizeof(*req),
				 udata ? offsetofend(typeof(*req), comp_mask) : 0);
	if (err)
		return err;
	if (!(req->comp_mask & SHCA_CREATE_SRQ_REQ_CMASK_TM))
		return shca_udata_check_cmd(ibdev, "create_srq", req->comp_mask,
					    0, req->tm_max_ops);
	err = shca_udata_check_cmd(ibdev, "create_srq", req->comp_mask,
				   SHCA_CREATE_SRQ_REQ_CMASK_TM, 0);
	if (!err && !tm) {
		ibdev_dbg(ibdev, "srq: TM request for a type %d SRQ\n",
			  init->srq_type);
		err = -EINVAL;
	}
	return err;
}

static int shca_srq_check(struct ib_device *ibdev,
			  const struct ib_srq_init_attr *init,
			  struct ib_udata *udata, struct shca_create_srq_req *req)
{
	int err;

	err = shca_srq_req(ibdev, init, udata, req);
	if (err)
		return err;
	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC &&
	    init->srq_type != IB_SRQT_TM) {
		ibdev_dbg(ibdev, "srq: type %d not supported\n", init->srq_type);
		return -EOPNOTSUPP;
	}
	if (init->srq_type == IB_SRQT_TM &&
	    (!udata || !(req->comp_mask & SHCA_CREATE_SRQ_REQ_CMASK_TM) ||
	     !init->ext.cq)) {
		ibdev_dbg(ibdev, "srq: a TM SRQ is a user SRQ with a CQ and max_ops\n");
		return udata ? -EINVAL : -EOPNOTSUPP;
	}
	if (init->srq_type == IB_SRQT_XRC &&
	    (!init->ext.xrc.xrcd || !init->ext.cq)) {
		ibdev_dbg(ibdev, "srq: XRC SRQ needs an XRCD and a CQ\n");
		return -EINVAL;
	}
	if (!init->attr.max_wr || init->attr.max_wr > SHCA_MAX_SRQ_WR ||
	    init->attr.max_sge > SHCA_MAX_SGE) {
		ibdev_dbg(ibdev, "srq: max_wr %u or max_sge %u out of range\n",
			  init->attr.max_wr, init->attr.max_sge);
		return -EINVAL;
	}
	return 0;
}

/* Count the SRQ and reserve its number (NULL entry), published later. */
static int shca_srq_alloc_srqn(struct shca_dev *sdev, struct shca_srq *srq)
{
	int err;

	if (atomic_inc_return(&sdev->num_srq) > SHCA_MAX_SRQ) {
		ibdev_dbg(&sdev->ibdev, "srq: limit %u reached\n", SHCA_MAX_SRQ);
		err = -ENOMEM;
		goto err_count;
	}
	err = xa_alloc(&sdev->srqs, &srq->srqn, NULL,
		       XA_LIMIT(1, SHCA_MAX_SRQ), GFP_KERNEL);
	if (!err)
		return 0;
err_count:
	atomic_dec(&sdev->num_srq);
	return err;
}

static void shca_srq_free_srqn(struct shca_dev *sdev, struct shca_srq *srq)
{
	xa_erase(&sdev->srqs, srq->srqn);
	atomic_dec(&sdev->num_srq);
}

static int shca_srq_reply(struct shca_dev *sdev, struct shca_srq *srq,
			  struct ib_udata *udata)
{
	struct shca_create_srq_resp resp = {};

	if (!udata)
		return 0;
	resp.comp_mask = SHCA_CREATE_SRQ_RESP_CMASK_RING;
	resp.srqn = srq->srqn;
	shca_ring_fill_info(&srq->ring, &resp.ring);
	if (srq->tm)
		shca_tm_fill_resp(srq, &resp);
	return shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
}

/* Context: process, may sleep. */
int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct shca_srq *srq = to_ssrq(ibsrq);
	struct shca_create_srq_req req;
	u32 shift;
	int err;

	kref_init(&srq->ref);
	init_completion(&srq->freed);
	mutex_init(&srq->modify_lock);
	err = shca_srq_check(&sdev->ibdev, init, udata, &req);
	if (err)
		goto err_out;
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->prod_lock);
	srq->user = !!udata;
	err = shca_srq_alloc_srqn(sdev, srq);
	if (err)
		goto err_out;
	init->attr.max_wr = roundup_pow_of_two(init->attr.max_wr);
	shift = shca_rwqe_grant(&init->attr.max_sge);
	init->attr.srq_limit = 0;
	srq->max_sge = init->attr.max_sge;
	err = shca_ring_alloc(&srq->ring, sdev->dma_dev, init->attr.max_wr,
			      shift, shca_udata_uctx(udata));
	if (err)
		goto err_free_srqn;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srqn;
	if (init->srq_type == IB_SRQT_TM) {
		err = shca_tm_create(srq, init, req.tm_max_ops, udata);
		if (err)
			goto err_free_ring;
	}
	err = shca_srq_reply(sdev, srq, udata);
	if (err)
		goto err_free_tm;
	srq->uid = atomic64_inc_return(&sdev->srq_uid);
	xa_store(&sdev->srqs, srq->srqn, srq, GFP_KERNEL);
	return 0;

err_free_tm:
	shca_tm_destroy(srq);
err_free_ring:
	shca_ring_free(&srq->ring);
err_free_srqn:
	shca_srq_free_srqn(sdev, srq);
err_out:
	mutex_destroy(&srq->modify_lock);
	shca_stat_inc(sdev, SHCA_STAT_CREATE_SRQ_ERR);
	return err;
}

static void shca_srq_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_srq, ref)->freed);
}

/**
 * shca_xsrq_get - look up an XRC SRQ named by a packet
 * @sdev: device
 * @srqn: XRCETH XRCSRQ
 * @xrcd: the XRC domain of the target QP the packet came to
 *
 * Context: process (an RQ engine); takes the xarray lock.
 * Return: the SRQ, referenced, or NULL if there is no XRC SRQ of that
 * number in @xrcd.
 */
struct shca_srq *shca_xsrq_get(struct shca_dev *sdev, u32 srqn,
			       const struct ib_xrcd *xrcd)
{
	struct shca_srq *srq;

	xa_lock(&sdev->srqs);
	srq = xa_load(&sdev->srqs, srqn);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    srq->ibsrq.ext.xrc.xrcd != xrcd ||
		    !kref_get_unless_zero(&srq->ref)))
		srq = NULL;
	xa_unlock(&sdev->srqs);
	return srq;
}

/* Context: any. */
void shca_srq_put(struct shca_srq *srq)
{
	kref_put(&srq->ref, shca_srq_release);
}

/*
 * ib_core refuses this while a QP uses the SRQ.  An XRC SRQ may still be
 * in the hands of a target QP's engine for one packet: wait for it.
 * Context: process, may sleep.
 */
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct shca_srq *srq = to_ssrq(ibsrq);

	xa_erase(&sdev->srqs, srq->srqn);
	shca_srq_put(srq);
	wait_for_completion(&srq->freed);
	atomic_dec(&sdev->num_srq);
	shca_tm_destroy(srq);
	shca_ring_free(&srq->ring);
	mutex_destroy(&srq->modify_lock);
	return 0;
}

/*
 * The request of a modify: a user resize must say where the new ring's
 * description goes.  Context: process, may sleep.
 */
static int shca_srq_modify_req(struct shca_srq *srq, int mask,
			       struct ib_udata *udata,
			       struct shca_modify_srq_req *req)
{
	struct ib_device *ibdev = srq->ibsrq.device;
	int err;

	err = shca_udata_get_req(ibdev, udata, req, sizeof(*req), 0);
	if (!err)
		err = shca_udata_check_cmd(ibdev, "modify_srq", req->comp_mask,
					   SHCA_MODIFY_SRQ_REQ_CMASK_RING_INFO,
					   0);
	if (err || !srq->user || !(mask & IB_SRQ_MAX_WR))
		return err;
	if (!(req->comp_mask & SHCA_MODIFY_SRQ_REQ_CMASK_RING_INFO) ||
	    req->ring_info_len < sizeof(struct shca_ring_info)) {
		ibdev_dbg(ibdev, "srq %u: resize without room for the ring\n",
			  srq->srqn);
		return -EINVAL;
	}
	return 0;
}

/*
 * Check every attribute before anything changes (ibv_modify_srq(3)).
 * @entries is set to the ring size the SRQ will have.
 */
static int shca_srq_modify_check(struct shca_srq *srq,
				 const struct ib_srq_attr *attr, int mask,
				 u32 *entries)
{
	struct ib_device *ibdev = srq->ibsrq.device;

	lockdep_assert_held(&srq->modify_lock);
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)) {
		ibdev_dbg(ibdev, "srq %u: bad attr mask %#x\n", srq->srqn, mask);
		return -EINVAL;
	}
	*entries = srq->ring.entries;
	if (mask & IB_SRQ_MAX_WR) {
		if (!attr->max_wr || attr->max_wr > SHCA_MAX_SRQ_WR) {
			ibdev_dbg(ibdev, "srq %u: max_wr %u out of range\n",
				  srq->srqn, attr->max_wr);
			return -EINVAL;
		}
		*entries = roundup_pow_of_two(attr->max_wr);
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > *entries) {
		ibdev_dbg(ibdev, "srq %u: limit %u above max_wr %u\n",
			  srq->srqn, attr->srq_limit, *entries);
		return -EINVAL;
	}
	return 0;
}

/* Copy the posted WQEs [@cons, @prod) to the same indices of @to. */
static void shca_srq_move_wqes(const struct shca_ring *from,
			       struct shca_ring *to, u32 cons, u32 prod)
{
	u32 stride = 1U << from->entry_shift;

	for (; cons != prod; cons++)
		memcpy(shca_ring_entry(to, cons), shca_ring_entry(from, cons),
		       stride);
}

/*
 * Swap in @nr if the WQEs posted fit; the old ring is left in @nr.
 * Context: srq->prod_lock and srq->lock held.
 */
static int shca_srq_swap_ring(struct shca_srq *srq, struct shca_ring *nr)
{
	struct shca_ring *ring = &srq->ring;
	struct shca_ring old;
	u32 prod;

	lockdep_assert_held(&srq->prod_lock);
	lockdep_assert_held(&srq->lock);
	/* a user SRQ's producer index is hostile */
	prod = srq->user ? READ_ONCE(ring->ctl->prod) : ring->kprod;
	if (!shca_ring_idx_valid(prod, ring->kcons, ring->entries) ||
	    shca_ring_count(prod, ring->kcons) > nr->entries ||
	    srq->limit > nr->entries)
		return -EINVAL;
	shca_srq_move_wqes(ring, nr, ring->kcons, prod);
	nr->ctl->prod = prod;
	nr->ctl->cons = ring->kcons;
	nr->kprod = ring->kprod;
	nr->kcons = ring->kcons;
	old = *ring;
	*ring = *nr;
	*nr = old;
	return 0;
}

/*
 * Move the SRQ to a ring of @entries.  A user SRQ's new ring is described
 * to the provider before the swap, so a failed copy changes nothing.
 * Context: process, may sleep; srq->modify_lock held.
 */
static int shca_srq_resize(struct shca_srq *srq, u32 entries,
			   const struct shca_modify_srq_req *req,
			   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(srq->ibsrq.device);
	struct shca_ring nr = {};
	struct shca_ring_info info;
	unsigned long flags;
	int err;

	lockdep_assert_held(&srq->modify_lock);
	/* the same stride: the posted WQEs move over as they are */
	err = shca_ring_alloc(&nr, sdev->dma_dev, entries,
			      srq->ring.entry_shift, shca_udata_uctx(udata));
	if (err)
		return err;
	if (srq->user) {
		shca_ring_fill_info(&nr, &info);
		if (copy_to_user(u64_to_user_ptr(req->ring_info_va), &info,
				 sizeof(info))) {
			err = -EFAULT;
			goto out;
		}
	}
	spin_lock_irqsave(&srq->prod_lock, flags);
	spin_lock(&srq->lock);
	err = shca_srq_swap_ring(srq, &nr);
	spin_unlock(&srq->lock);
	spin_unlock_irqrestore(&srq->prod_lock, flags);
	if (err)
		ibdev_dbg(&sdev->ibdev, "srq %u: the posted WQEs do not fit %u\n",
			  srq->srqn, entries);
out:
	shca_ring_free(&nr);	/* the old ring, or the unused new one */
	return err;
}

/* Context: process, may sleep. */
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	struct shca_modify_srq_req req;
	u32 entries;
	int err;

	err = shca_srq_modify_req(srq, mask, udata, &req);
	if (err)
		return err;
	mutex_lock(&srq->modify_lock);
	err = shca_srq_modify_check(srq, attr, mask, &entries);
	if (!err && (mask & IB_SRQ_MAX_WR))
		err = shca_srq_resize(srq, entries, &req, udata);
	if (!err && (mask & IB_SRQ_LIMIT)) {
		spin_lock_irq(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock_irq(&srq->lock);
	}
	mutex_unlock(&srq->modify_lock);
	return err;
}

/* Context: process, may sleep. */
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);

	attr->max_sge = srq->max_sge;
	spin_lock_irq(&srq->lock);
	attr->max_wr = srq->ring.entries;
	attr->srq_limit = srq->limit;
	spin_unlock_irq(&srq->lock);
	return 0;
}

/*
 * Post receives on a kernel SRQ.  User SRQs are posted to through their
 * mapped ring instead; for a TM SRQ, the command without work requests is
 * the doorbell of its list operations.
 * Context: any, does not sleep; a TM doorbell: process, may sleep.
 */
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->tm && !wr) {
		err = shca_tm_doorbell(srq);
		goto out;
	}
	if (srq->user) {
		*bad_wr = wr;
		err = -EINVAL;
		goto out;
	}
	spin_lock_irqsave(&srq->prod_lock, flags);
	for (; wr; wr = wr->next) {
		err = shca_rwqe_push(&srq->ring, wr, srq->max_sge);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	/* WQEs are written before the consumers can see the new prod */
	smp_store_release(&srq->ring.ctl->prod, srq->ring.kprod);
	spin_unlock_irqrestore(&srq->prod_lock, flags);
out:
	if (err) {
		ibdev_dbg(ibsrq->device, "srq %u: post_srq_recv failed %d\n",
			  srq->srqn, err);
		shca_stat_inc(to_sdev(ibsrq->device), SHCA_STAT_POST_RECV_ERR);
	}
	return err;
}
