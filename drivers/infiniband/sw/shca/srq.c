// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: shared receive queues (basic SRQs).
 *
 * An SRQ is a ring of receive WQEs in DMA-coherent memory, in the RQ's
 * format, mapped into the process like a QP's RQ (see shca-abi.h).  The
 * receive engines of all the RC and UD QPs attached to it consume from
 * it under srq->lock, which also guards the limit.  ib_core counts the
 * QPs attached (srq->usecnt) and refuses destroy_srq while any is left,
 * so no engine can run on an SRQ being destroyed.
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
#include "rq.h"

static void shca_srq_event(struct shca_srq *srq, enum ib_event_type type)
{
	struct ib_srq *ibsrq = &srq->ibsrq;
	struct ib_event ev = {
		.device = ibsrq->device,
		.element.srq = ibsrq,
		.event = type,
	};

	if (ibsrq->event_handler)
		ibsrq->event_handler(&ev, ibsrq->srq_context);
}

/*
 * Which event this pop raises, if any; disarms what it reports.
 * Context: srq->lock held.
 */
static int shca_srq_pop_event(struct shca_srq *srq, int err, u32 left)
{
	lockdep_assert_held(&srq->lock);
	if (err == -EIO) {
		if (srq->broken)
			return -1;
		srq->broken = true;
		return IB_EVENT_SRQ_ERR;
	}
	if (err || !srq->limit || left >= srq->limit)
		return -1;
	srq->limit = 0;
	return IB_EVENT_SRQ_LIMIT_REACHED;
}

/**
 * shca_srq_pop - take the next receive WQE of an SRQ
 * @srq: the SRQ of the calling QP
 * @w: filled with a private copy of the WQE
 *
 * Context: RQ engine of an attached QP, process context; takes srq->lock.
 * Return: 0, -ENOENT if the SRQ is empty, -EIO if its ring is broken.
 */
int shca_srq_pop(struct shca_srq *srq, struct shca_rwqe *w)
{
	unsigned long flags;
	u32 left = 0;
	int err, ev;

	spin_lock_irqsave(&srq->lock, flags);
	err = shca_rwqe_pop(&srq->ring, w, &left);
	ev = shca_srq_pop_event(srq, err, left);
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ev >= 0)
		shca_srq_event(srq, ev);
	return err;
}

static int shca_srq_check(struct ib_device *ibdev,
			  const struct ib_srq_init_attr *init,
			  struct ib_udata *udata)
{
	struct shca_create_srq_req req;
	int err;

	err = shca_udata_get_req(ibdev, udata, &req, sizeof(req),
				 udata ? offsetofend(typeof(req), comp_mask) : 0);
	if (!err)
		err = shca_udata_check_cmd(ibdev, "create_srq", req.comp_mask, 0,
					   req.reserved_32);
	if (err)
		return err;
	if (init->srq_type != IB_SRQT_BASIC) {
		ibdev_dbg(ibdev, "srq: type %d not supported\n", init->srq_type);
		return -EOPNOTSUPP;
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
	return shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
}

/* Context: process, may sleep. */
int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct shca_srq *srq = to_ssrq(ibsrq);
	int err;

	err = shca_srq_check(&sdev->ibdev, init, udata);
	if (err)
		goto err_out;
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->prod_lock);
	srq->user = !!udata;
	err = shca_srq_alloc_srqn(sdev, srq);
	if (err)
		goto err_out;
	init->attr.max_wr = roundup_pow_of_two(init->attr.max_wr);
	init->attr.max_sge = SHCA_MAX_SGE;
	init->attr.srq_limit = 0;
	srq->max_sge = SHCA_MAX_SGE;
	err = shca_ring_alloc(&srq->ring, sdev->dma_dev, init->attr.max_wr,
			      SHCA_RQ_ENTRY_SHIFT, shca_udata_uctx(udata));
	if (err)
		goto err_free_srqn;
	err = shca_srq_reply(sdev, srq, udata);
	if (err)
		goto err_free_ring;
	xa_store(&sdev->srqs, srq->srqn, srq, GFP_KERNEL);
	return 0;

err_free_ring:
	shca_ring_free(&srq->ring);
err_free_srqn:
	shca_srq_free_srqn(sdev, srq);
err_out:
	shca_stat_inc(sdev, SHCA_STAT_CREATE_SRQ_ERR);
	return err;
}

/*
 * ib_core refuses this while a QP uses the SRQ, so no receive engine can
 * be popping from it.  Context: process, may sleep.
 */
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct shca_srq *srq = to_ssrq(ibsrq);

	shca_srq_free_srqn(sdev, srq);
	shca_ring_free(&srq->ring);
	return 0;
}

/* Context: process, may sleep. */
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	struct ib_device *ibdev = ibsrq->device;
	int err;

	err = shca_udata_no_req(ibdev, udata);
	if (err)
		return err;
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)) {
		ibdev_dbg(ibdev, "srq %u: bad attr mask %#x\n", srq->srqn, mask);
		return -EINVAL;
	}
	if (mask & IB_SRQ_MAX_WR) {
		ibdev_dbg(ibdev, "srq %u: resize not supported\n", srq->srqn);
		return -EOPNOTSUPP;
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > srq->ring.entries) {
		ibdev_dbg(ibdev, "srq %u: limit %u above max_wr %u\n",
			  srq->srqn, attr->srq_limit, srq->ring.entries);
		return -EINVAL;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irq(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock_irq(&srq->lock);
	}
	return 0;
}

/* Context: process, may sleep. */
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->ring.entries;
	attr->max_sge = srq->max_sge;
	spin_lock_irq(&srq->lock);
	attr->srq_limit = srq->limit;
	spin_unlock_irq(&srq->lock);
	return 0;
}

/*
 * Post receives on a kernel SRQ.  User SRQs are posted to through their
 * mapped ring instead.
 * Context: any, does not sleep.
 */
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

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
