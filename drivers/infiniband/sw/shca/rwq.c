// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: receive work queues (ibv_create_wq), RSS indirection tables and
 * RSS QPs.
 *
 * A WQ (IB_WQT_RQ only, user only) is a ring of receive WQEs in the RQ
 * format, mapped into the process like an SRQ (see shca-abi.h).  It has
 * no consumer of its own: the RSS QPs whose indirection tables name it
 * take one WQE per frame they hash to it, under rwq->lock, and complete
 * it on the WQ's CQ with qp_num = wq_num.
 *
 * States (ibv_modify_wq): RESET -> RDY arms the WQ; RDY -> RDY changes
 * nothing; any state may go to RESET (the WQEs still posted are
 * discarded, no completion) or to ERR (every posted WQE completes with
 * IB_WC_WR_FLUSH_ERR).  ERR -> RDY is refused.  Receives posted while the
 * WQ is in ERR need a kernel call to be flushed: they are flushed when a
 * frame is next steered to the WQ and by every modify_wq, so the provider
 * follows such a post with an ERR -> ERR modify (its doorbell).
 *
 * Create flags: CVLAN_STRIPPING is taken at create_wq and may be turned
 * on and off by modify_wq (IB_WQ_FLAGS, flags_mask); it is advertised as
 * IB_RAW_PACKET_CAP_CVLAN_STRIPPING.  A frame delivered to such a WQ
 * whose 802.1Q tag follows the MACs (flow.c puts a tag the NIC took out
 * back into the copy) is written without those 4 bytes, and its CQE
 * carries SHCA_CQE_F_CVLAN with the TCI in vlan_id; other frames are
 * written whole.  The RSS hash is taken on the frame as received.
 *
 * DELAY_DROP (create_wq or modify_wq, like CVLAN_STRIPPING; advertised
 * as IB_RAW_PACKET_CAP_DELAY_DROP): a frame that finds the RDY WQ's ring
 * empty is not dropped at once but cloned onto the WQ's pending queue
 * with a deadline SHCA_RWQ_DELAY_MS away (counted in rwq_delayed; at
 * most SHCA_RWQ_DELAY_MAX frames wait; beyond, or without memory, the
 * frame is dropped and counted in rwq_no_wqe).  While frames wait, later
 * ones for the WQ queue behind them, so the order is kept.  Posting to a
 * WQ rings no doorbell, so the WQ's delay_work (on shca_wq) looks at the
 * ring every SHCA_RWQ_DELAY_POLL_MS while frames wait, delivers them as
 * WQEs appear and drops those past their deadline (rwq_delay_dropped);
 * the next frame steered to the WQ does the same first.  A modify to RESET or ERR, and
 * destroy_wq, drop what waits (rwq_delay_dropped).  Clearing the flag
 * leaves the frames already waiting to their fate.  Without the flag a
 * frame with no WQE is dropped at once and counted (rwq_no_wqe).
 * SCATTER_FCS and PCI_WRITE_END_PADDING are refused with -EOPNOTSUPP and
 * not advertised: a software device never sees the FCS, and there is no
 * PCI.
 *
 * Lifetimes: ib_core counts the tables using a WQ and the QPs using a
 * table (usecnt) and refuses to destroy either while it is in use, so an
 * RSS QP's receive work may use its table and WQs without references.
 * A WQ's delay_work holds no reference either: destroy_wq, which only
 * runs once no table names the WQ (so nothing can queue it again),
 * cancels it with cancel_delayed_work_sync() before freeing the WQ.
 *
 * Locking: rwq->modify_lock (mutex) -> rwq->lock (spinlock, irqsave) ->
 * cq->lock (inside shca_cq_post()).
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "shca_trace.h"
#include "raw.h"
#include "rwqe.h"
#include "rss_logic.h"
#include "rwq.h"

#define SHCA_WQ_FLAGS_KNOWN	(IB_WQ_FLAGS_CVLAN_STRIPPING | \
				 IB_WQ_FLAGS_SCATTER_FCS | \
				 IB_WQ_FLAGS_DELAY_DROP | \
				 IB_WQ_FLAGS_PCI_WRITE_END_PADDING)
#define SHCA_WQ_FLAGS_SUPPORTED	(IB_WQ_FLAGS_CVLAN_STRIPPING | \
				 IB_WQ_FLAGS_DELAY_DROP)

/* A frame waiting on a DELAY_DROP WQ: its deadline, in its clone's cb. */
struct shca_rwq_cb {
	unsigned long deadline;		/* jiffies */
};

static struct shca_rwq_cb *shca_rwq_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct shca_rwq_cb) > sizeof(skb->cb));
	return (struct shca_rwq_cb *)skb->cb;
}

static void shca_rwq_delay_work(struct work_struct *work);

/* ------------------------------------------------------------------ */
/* Work queues                                                        */
/* ------------------------------------------------------------------ */

static void shca_rwq_event(struct shca_rwq *rwq, enum ib_event_type type)
{
	struct ib_wq *ibwq = &rwq->ibwq;
	struct ib_event ev = {
		.device = ibwq->device,
		.element.wq = ibwq,
		.event = type,
	};

	trace_shca_async(&ev, ibwq->wq_num);
	if (ibwq->event_handler)
		ibwq->event_handler(&ev, ibwq->wq_context);
}

/* Complete one WQE of @rwq.  Context: rwq->lock held. */
static void shca_rwq_complete(struct shca_rwq *rwq, struct shca_cqe *cqe)
{
	lockdep_assert_held(&rwq->lock);
	cqe->opcode = IB_WC_RECV;
	cqe->qp_num = rwq->ibwq.wq_num;
	cqe->port_num = 1;
	shca_cq_post(to_scq(rwq->ibwq.cq), cqe, false);
}

/*
 * Flush every posted WQE.  At most one ring's worth per call, so a
 * process that keeps posting cannot hold us here.
 * Context: rwq->lock held.
 */
static void shca_rwq_flush_locked(struct shca_rwq *rwq)
{
	struct shca_rwqe w;
	u32 n, left;

	lockdep_assert_held(&rwq->lock);
	for (n = 0; n < rwq->ring.entries; n++) {
		struct shca_cqe cqe = { .status = IB_WC_WR_FLUSH_ERR };
		int err = shca_rwqe_pop(&rwq->ring, &w, &left, rwq->max_sge);

		/* a malformed WQE is flushed as any other */
		if (err && err != -EBADMSG)
			break;
		cqe.wr_id = w.hdr.wr_id;
		shca_rwq_complete(rwq, &cqe);
	}
}

/*
 * Drop every frame waiting on @rwq (DELAY_DROP), counted; they are moved
 * to @done, which the caller frees once the lock is released.
 * Context: rwq->lock held.
 */
static void shca_rwq_drop_pending_locked(struct shca_rwq *rwq,
					 struct sk_buff_head *done)
{
	struct shca_dev *sdev = to_sdev(rwq->ibwq.device);
	struct sk_buff *skb;

	lockdep_assert_held(&rwq->lock);
	while ((skb = __skb_dequeue(&rwq->pending))) {
		shca_stat_inc(sdev, SHCA_STAT_RWQ_DELAY_DROPPED);
		__skb_queue_tail(done, skb);
	}
}

/*
 * Discard what is posted (a move to RESET): the ring becomes empty at
 * the producer's index, which also repairs a broken one.
 * Context: rwq->lock held.
 */
static void shca_rwq_discard_locked(struct shca_rwq *rwq)
{
	lockdep_assert_held(&rwq->lock);
	rwq->ring.kcons = READ_ONCE(rwq->ring.ctl->prod);
	/* pairs with the provider's acquire of cons: the slots are free */
	smp_store_release(&rwq->ring.ctl->cons, rwq->ring.kcons);
}

static int shca_rwq_check(struct ib_device *ibdev,
			  const struct ib_wq_init_attr *init,
			  struct ib_udata *udata)
{
	struct shca_create_wq_req req;
	int err;

	if (!udata) {
		ibdev_dbg(ibdev, "wq: no kernel work queues\n");
		return -EOPNOTSUPP;
	}
	err = shca_udata_get_req(ibdev, udata, &req, sizeof(req), 0);
	if (!err)
		err = shca_udata_check_cmd(ibdev, "create_wq", req.comp_mask, 0,
					   req.reserved_32);
	if (err)
		return err;
	if (init->wq_type != IB_WQT_RQ) {
		ibdev_dbg(ibdev, "wq: type %d not supported\n", init->wq_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags & ~SHCA_WQ_FLAGS_KNOWN) {
		ibdev_dbg(ibdev, "wq: unknown create flags %#x\n",
			  init->create_flags);
		return -EINVAL;
	}
	if (init->create_flags & ~SHCA_WQ_FLAGS_SUPPORTED) {
		ibdev_dbg(ibdev, "wq: create flags %#x not supported\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	if (!init->cq || !init->max_wr || init->max_wr > SHCA_MAX_QP_WR ||
	    init->max_sge > SHCA_MAX_SGE) {
		ibdev_dbg(ibdev, "wq: max_wr %u / max_sge %u out of range\n",
			  init->max_wr, init->max_sge);
		return -EINVAL;
	}
	return 0;
}

static int shca_rwq_reply(struct shca_dev *sdev, struct shca_rwq *rwq,
			  struct ib_udata *udata)
{
	struct shca_create_wq_resp resp = {};

	resp.comp_mask = SHCA_CREATE_WQ_RESP_CMASK_RING;
	resp.wqn = rwq->ibwq.wq_num;
	shca_ring_fill_info(&rwq->ring, &resp.ring);
	return shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
}

/* Context: process, may sleep. */
static int shca_rwq_init(struct shca_dev *sdev, struct shca_rwq *rwq,
			 struct ib_wq_init_attr *init, struct ib_udata *udata)
{
	u32 wqn, shift;
	int err;

	err = xa_alloc(&sdev->rwqs, &wqn, NULL, XA_LIMIT(1, SHCA_MAX_RWQ),
		       GFP_KERNEL);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "wq: limit %u reached\n", SHCA_MAX_RWQ);
		return err == -EBUSY ? -ENOMEM : err;
	}
	rwq->ibwq.wq_num = wqn;
	init->max_wr = roundup_pow_of_two(init->max_wr);
	shift = shca_rwqe_grant(&init->max_sge);
	rwq->max_sge = init->max_sge;
	err = shca_ring_alloc(&rwq->ring, sdev->dma_dev, init->max_wr,
			      shift, shca_udata_uctx(udata));
	if (err)
		goto err_free_wqn;
	err = shca_rwq_reply(sdev, rwq, udata);
	if (err)
		goto err_free_ring;
	return 0;

err_free_ring:
	shca_ring_free(&rwq->ring);
err_free_wqn:
	xa_erase(&sdev->rwqs, wqn);
	return err;
}

/**
 * shca_create_wq - ib_device_ops.create_wq
 * @pd: protection domain of the WQ's buffers
 * @init: attributes; max_wr and max_sge are written back
 * @udata: the user request (struct shca_create_wq_req/resp)
 *
 * Context: process, may sleep.
 * Return: the WQ (ib_core fills in pd, cq, device, type) or an ERR_PTR.
 */
struct ib_wq *shca_create_wq(struct ib_pd *pd, struct ib_wq_init_attr *init,
			     struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(pd->device);
	struct shca_rwq *rwq;
	int err;

	err = shca_rwq_check(&sdev->ibdev, init, udata);
	if (err)
		goto err_out;
	rwq = kzalloc(sizeof(*rwq), shca_gfp(!!udata));
	if (!rwq) {
		err = -ENOMEM;
		goto err_out;
	}
	mutex_init(&rwq->modify_lock);
	spin_lock_init(&rwq->lock);
	rwq->state = IB_WQS_RESET;
	rwq->ibwq.state = IB_WQS_RESET;
	rwq->flags = init->create_flags;
	rwq->ibwq.event_handler = init->event_handler;
	rwq->ibwq.wq_context = init->wq_context;
	__skb_queue_head_init(&rwq->pending);
	INIT_DELAYED_WORK(&rwq->delay_work, shca_rwq_delay_work);
	err = shca_rwq_init(sdev, rwq, init, udata);
	if (err) {
		mutex_destroy(&rwq->modify_lock);
		kfree(rwq);
		goto err_out;
	}
	xa_store(&sdev->rwqs, rwq->ibwq.wq_num, rwq, GFP_KERNEL);
	return &rwq->ibwq;

err_out:
	shca_stat_inc(sdev, SHCA_STAT_CREATE_WQ_ERR);
	return ERR_PTR(err);
}

/*
 * ib_core refuses this while an indirection table names the WQ, so no
 * RSS QP can be delivering to it, nor queue its delay_work again: the
 * work is cancelled and what still waits dropped before the WQ is freed.
 * Context: process, may sleep.
 */
int shca_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibwq->device);
	struct shca_rwq *rwq = to_srwq(ibwq);
	struct sk_buff_head done;
	unsigned long flags;

	cancel_delayed_work_sync(&rwq->delay_work);
	__skb_queue_head_init(&done);
	spin_lock_irqsave(&rwq->lock, flags);
	shca_rwq_drop_pending_locked(rwq, &done);
	spin_unlock_irqrestore(&rwq->lock, flags);
	__skb_queue_purge(&done);
	xa_erase(&sdev->rwqs, ibwq->wq_num);
	shca_ring_free(&rwq->ring);
	mutex_destroy(&rwq->modify_lock);
	kfree(rwq);
	return 0;
}

/* Check a modify against the WQ's state.  Context: modify_lock held. */
static int shca_rwq_modify_check(struct shca_rwq *rwq,
				 const struct ib_wq_attr *attr, u32 mask,
				 enum ib_wq_state *next)
{
	struct ib_device *ibdev = rwq->ibwq.device;
	enum ib_wq_state cur = rwq->state;

	lockdep_assert_held(&rwq->modify_lock);
	if ((mask & IB_WQ_CUR_STATE) && attr->curr_wq_state != cur) {
		ibdev_dbg(ibdev, "wq %u: current state %d, not %d\n",
			  rwq->ibwq.wq_num, cur, attr->curr_wq_state);
		return -EINVAL;
	}
	*next = (mask & IB_WQ_STATE) ? attr->wq_state : cur;
	if (!shca_wq_transition_ok(cur, *next)) {
		ibdev_dbg(ibdev, "wq %u: no transition %d -> %d\n",
			  rwq->ibwq.wq_num, cur, *next);
		return -EINVAL;
	}
	return 0;
}

static int shca_rwq_modify_attrs(struct ib_device *ibdev,
				 const struct ib_wq_attr *attr, u32 mask,
				 struct ib_udata *udata)
{
	int err = shca_udata_no_req(ibdev, udata);

	if (err)
		return err;
	if (mask & ~(IB_WQ_STATE | IB_WQ_CUR_STATE | IB_WQ_FLAGS)) {
		ibdev_dbg(ibdev, "wq: bad attr mask %#x\n", mask);
		return -EINVAL;
	}
	if (!(mask & IB_WQ_FLAGS) || !attr->flags_mask)
		return 0;
	if (attr->flags_mask & ~SHCA_WQ_FLAGS_KNOWN) {
		ibdev_dbg(ibdev, "wq: unknown flags %#x\n", attr->flags_mask);
		return -EINVAL;
	}
	if (attr->flags_mask & ~SHCA_WQ_FLAGS_SUPPORTED) {
		ibdev_dbg(ibdev, "wq: flags %#x not supported\n",
			  attr->flags_mask);
		return -EOPNOTSUPP;
	}
	return 0;
}

/**
 * shca_modify_wq - ib_device_ops.modify_wq
 * @ibwq: the WQ
 * @attr: the new state (ib_core fills curr_wq_state without the mask)
 * @mask: IB_WQ_STATE, IB_WQ_CUR_STATE, IB_WQ_FLAGS
 * @udata: no request expected
 *
 * Every call flushes the receives posted in ERR, whatever it changes.
 * A move to RESET or ERR drops the frames waiting (DELAY_DROP).
 * Context: process, may sleep.
 */
int shca_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask,
		   struct ib_udata *udata)
{
	struct shca_rwq *rwq = to_srwq(ibwq);
	struct sk_buff_head done;
	enum ib_wq_state next;
	unsigned long flags;
	int err;

	__skb_queue_head_init(&done);
	err = shca_rwq_modify_attrs(ibwq->device, attr, mask, udata);
	if (err)
		return err;
	mutex_lock(&rwq->modify_lock);
	err = shca_rwq_modify_check(rwq, attr, mask, &next);
	if (err)
		goto out;
	spin_lock_irqsave(&rwq->lock, flags);
	if (next == IB_WQS_RESET && rwq->state != IB_WQS_RESET)
		shca_rwq_discard_locked(rwq);
	if (next != IB_WQS_RDY)
		shca_rwq_drop_pending_locked(rwq, &done);
	rwq->state = next;
	ibwq->state = next;
	if (mask & IB_WQ_FLAGS)
		rwq->flags = (rwq->flags & ~attr->flags_mask) |
			     (attr->flags & attr->flags_mask);
	if (next == IB_WQS_ERR)
		shca_rwq_flush_locked(rwq);
	spin_unlock_irqrestore(&rwq->lock, flags);
out:
	mutex_unlock(&rwq->modify_lock);
	__skb_queue_purge(&done);
	return err;
}

/* ------------------------------------------------------------------ */
/* Indirection tables                                                 */
/* ------------------------------------------------------------------ */

/*
 * ib_core looked every handle up in the caller's context; the WQs must
 * also share one PD (their buffers' and the RSS QP's).
 */
static int shca_ind_tbl_check(struct ib_device *ibdev,
			      const struct ib_rwq_ind_table_init_attr *init)
{
	u32 i, size;

	if (init->log_ind_tbl_size > SHCA_RSS_MAX_LOG_TBL) {
		ibdev_dbg(ibdev, "ind_tbl: log size %u above %u\n",
			  init->log_ind_tbl_size, SHCA_RSS_MAX_LOG_TBL);
		return -EINVAL;
	}
	size = 1U << init->log_ind_tbl_size;
	for (i = 0; i < size; i++) {
		const struct ib_wq *wq = init->ind_tbl[i];

		if (!wq || wq->device != ibdev || wq->wq_type != IB_WQT_RQ ||
		    wq->pd != init->ind_tbl[0]->pd) {
			ibdev_dbg(ibdev, "ind_tbl: entry %u is not a WQ of this PD\n",
				  i);
			return -EINVAL;
		}
	}
	return 0;
}

/* Context: process, may sleep. */
int shca_create_rwq_ind_table(struct ib_rwq_ind_table *ibtbl,
			      struct ib_rwq_ind_table_init_attr *init,
			      struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibtbl->device);
	struct shca_ind_tbl *tbl = to_sind_tbl(ibtbl);
	int err, num;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (!err)
		err = shca_ind_tbl_check(&sdev->ibdev, init);
	if (err)
		return err;
	num = ida_alloc_range(&sdev->ind_tbl_ida, 1, SHCA_MAX_RWQ_IND_TBL,
			      GFP_KERNEL);
	if (num < 0) {
		ibdev_dbg(&sdev->ibdev, "ind_tbl: limit %u reached\n",
			  SHCA_MAX_RWQ_IND_TBL);
		return num == -ENOSPC ? -ENOMEM : num;
	}
	ibtbl->ind_tbl_num = num;
	tbl->size = 1U << init->log_ind_tbl_size;
	return 0;
}

/* ib_core refuses this while an RSS QP uses the table.  Context: process. */
int shca_destroy_rwq_ind_table(struct ib_rwq_ind_table *ibtbl)
{
	struct shca_dev *sdev = to_sdev(ibtbl->device);

	ida_free(&sdev->ind_tbl_ida, ibtbl->ind_tbl_num);
	return 0;
}

/* ------------------------------------------------------------------ */
/* RSS QPs                                                            */
/* ------------------------------------------------------------------ */

/* Context: any. */
bool shca_qp_is_rss(const struct shca_qp *qp)
{
	return !!qp->rss;
}

/*
 * An RSS QP only receives: no SQ, no RQ, no CQ, no SRQ, and (ib_core)
 * no receive caps.  Context: process.
 */
static int shca_rss_check_init(struct ib_device *ibdev,
			       const struct ib_qp_init_attr *init,
			       const struct ib_pd *pd)
{
	const struct ib_qp_cap *cap = &init->cap;
	const struct ib_rwq_ind_table *t = init->rwq_ind_tbl;

	if (init->qp_type != IB_QPT_RAW_PACKET) {
		ibdev_dbg(ibdev, "rss: qp type %d cannot use a table\n",
			  init->qp_type);
		return -EINVAL;
	}
	if (init->create_flags) {
		ibdev_dbg(ibdev, "rss: create flags %#x not supported\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	if (init->send_cq || init->recv_cq || init->srq || init->xrcd ||
	    cap->max_send_wr || cap->max_send_sge || cap->max_inline_data ||
	    cap->max_recv_wr || cap->max_recv_sge) {
		ibdev_dbg(ibdev, "rss: an RSS QP has no queues or CQs\n");
		return -EINVAL;
	}
	if (t->ind_tbl[0]->pd != pd) {
		ibdev_dbg(ibdev, "rss: the table's WQs are of another PD\n");
		return -EINVAL;
	}
	return 0;
}

/* The hash configuration of the request.  Context: process. */
static int shca_rss_check_req(struct ib_device *ibdev,
			      const struct ib_qp_init_attr *init,
			      struct ib_udata *udata,
			      struct shca_create_qp_req *req)
{
	int err;

	err = shca_udata_get_req(ibdev, udata, req, sizeof(*req),
				 offsetofend(typeof(*req), comp_mask));
	if (!err)
		err = shca_udata_check_cmd(ibdev, "create_qp", req->comp_mask,
					   SHCA_CREATE_QP_REQ_CMASK_RX_HASH,
					   req->reserved_32 ||
					   memchr_inv(req->reserved_144, 0,
						      sizeof(req->reserved_144)));
	if (err)
		return err;
	if (!(req->comp_mask & SHCA_CREATE_QP_REQ_CMASK_RX_HASH)) {
		ibdev_dbg(ibdev, "rss: no RX hash configuration\n");
		return -EINVAL;
	}
	err = shca_rss_check_conf(req->rx_hash_function, req->rx_hash_key_len,
				  req->rx_hash_fields_mask,
				  init->rwq_ind_tbl->log_ind_tbl_size);
	if (err)
		ibdev_dbg(ibdev, "rss: bad hash config: function %u, key %u bytes, fields %#llx\n",
			  req->rx_hash_function, req->rx_hash_key_len,
			  req->rx_hash_fields_mask);
	return err;
}

static int shca_rss_reply(struct shca_dev *sdev, struct shca_qp *qp,
			  struct ib_udata *udata)
{
	struct shca_create_qp_resp resp = {};

	resp.qpn = qp->ibqp.qp_num;	/* comp_mask 0: no ring */
	return shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
}

/**
 * shca_rss_create_qp - create_qp for a QP with an indirection table
 * @qp: the QP (ib_core-allocated, ibqp.pd set)
 * @init: attributes; init->rwq_ind_tbl is set
 * @udata: the request with SHCA_CREATE_QP_REQ_CMASK_RX_HASH
 *
 * Context: process, may sleep.
 * Return: 0 or a negative errno.
 */
int shca_rss_create_qp(struct shca_qp *qp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_create_qp_req req;
	struct shca_rss *rss;
	int err;

	if (!udata) {
		ibdev_dbg(&sdev->ibdev, "rss: no kernel RSS QPs\n");
		err = -EOPNOTSUPP;
		goto err_out;
	}
	err = shca_raw_may_create(sdev, udata, "qp: RSS");
	if (!err)
		err = shca_rss_check_req(&sdev->ibdev, init, udata, &req);
	if (!err)
		err = shca_rss_check_init(&sdev->ibdev, init, qp->ibqp.pd);
	if (err)
		goto err_out;
	rss = kzalloc(sizeof(*rss), shca_gfp(true));
	if (!rss) {
		err = -ENOMEM;
		goto err_out;
	}
	rss->fields = req.rx_hash_fields_mask;
	memcpy(rss->key, req.rx_hash_key, sizeof(rss->key));
	rss->tbl = to_sind_tbl(init->rwq_ind_tbl);
	shca_qp_init(sdev, qp, init, udata);
	err = shca_qp_alloc_qpn(sdev, qp);
	if (err)
		goto err_free_rss;
	memset(&init->cap, 0, sizeof(init->cap));
	qp->rss = rss;
	err = shca_rss_reply(sdev, qp, udata);
	if (err)
		goto err_free_qpn;
	xa_store_irq(&sdev->qps, qp->ibqp.qp_num, qp, GFP_KERNEL);
	return 0;

err_free_qpn:
	qp->rss = NULL;
	shca_qp_free_qpn(sdev, qp);
err_free_rss:
	kfree(rss);
err_out:
	shca_stat_inc(sdev, SHCA_STAT_CREATE_QP_ERR);
	return err;
}

/* The RSS part of destroy_qp, after the QP's last reference. */
void shca_rss_destroy_qp(struct shca_qp *qp)
{
	kfree(qp->rss);
	qp->rss = NULL;
}

/* The WQE's outcome decides the WQ's fate.  Context: rwq->lock held. */
static void shca_rwq_after(struct shca_rwq *rwq, enum ib_wc_status status)
{
	lockdep_assert_held(&rwq->lock);
	if (status == IB_WC_SUCCESS || status == IB_WC_LOC_LEN_ERR)
		return;
	/* a bad SGE: the WQ goes to the error state, as a QP's RQ would */
	rwq->state = IB_WQS_ERR;
	rwq->ibwq.state = IB_WQS_ERR;
	shca_rwq_flush_locked(rwq);
}

/*
 * Take one WQE of @rwq for @skb.  *@bad tells a malformed WQE, taken all
 * the same, which completes with IB_WC_LOC_QP_OP_ERR (shca_rwqe_pop()).
 * Return: 0, or the counter to bump.
 * Context: rwq->lock held.
 */
static int shca_rwq_take(struct shca_rwq *rwq, struct shca_rwqe *w,
			 bool *bad, bool *fatal)
{
	u32 left;
	int err;

	lockdep_assert_held(&rwq->lock);
	if (rwq->state != IB_WQS_RDY) {
		if (rwq->state == IB_WQS_ERR)
			shca_rwq_flush_locked(rwq);	/* posted in ERR */
		return SHCA_STAT_RWQ_DROPPED;
	}
	err = shca_rwqe_pop(&rwq->ring, w, &left, rwq->max_sge);
	*bad = err == -EBADMSG;
	if (!err || *bad)
		return 0;
	if (err == -ENOENT)
		return SHCA_STAT_RWQ_NO_WQE;
	/* a producer index no ring can have */
	rwq->state = IB_WQS_ERR;
	rwq->ibwq.state = IB_WQS_ERR;
	*fatal = true;
	return SHCA_STAT_RWQ_DROPPED;
}

/*
 * Scatter @skb into @w without its C-VLAN tag, which shca_wq_cvlan_tci()
 * found at SHCA_CVLAN_OFF in the linear frame: the MACs, then the rest.
 * The statuses are shca_frame_scatter()'s.  Context: rwq->lock held.
 */
static enum ib_wc_status shca_rwq_scatter_stripped(struct shca_dev *sdev,
						   struct shca_rwq *rwq,
						   const struct shca_rwqe *w,
						   const struct sk_buff *skb,
						   u32 *byte_len)
{
	struct shca_sge_cursor cur = {
		.sdev = sdev,
		.pd = rwq->ibwq.pd,
		.sge = w->sge,
		.num_sge = w->hdr.num_sge,
		.nofault = true,	/* under rwq->lock */
	};
	u32 len = skb->len - SHCA_CVLAN_LEN;
	u64 total;

	lockdep_assert_held(&rwq->lock);
	/* shca_rwqe_pop() checked the count and the lengths */
	shca_sge_total(w->sge, w->hdr.num_sge, &total);
	if (total < len)
		return IB_WC_LOC_LEN_ERR;
	if (shca_cursor_copy(&cur, skb->data, SHCA_CVLAN_OFF, true) ||
	    shca_cursor_copy(&cur, skb->data + SHCA_CVLAN_OFF + SHCA_CVLAN_LEN,
			     len - SHCA_CVLAN_OFF, true))
		return IB_WC_LOC_PROT_ERR;
	*byte_len = len;
	return IB_WC_SUCCESS;
}

/*
 * Write @skb into @w, stripping its C-VLAN tag if the WQ asks for it
 * (only a linear frame is looked at; flow.c hands linear copies).
 * Context: rwq->lock held.
 */
static enum ib_wc_status shca_rwq_scatter(struct shca_dev *sdev,
					  struct shca_rwq *rwq,
					  const struct shca_rwqe *w,
					  const struct sk_buff *skb,
					  struct shca_cqe *cqe)
{
	enum ib_wc_status status;
	u32 byte_len = 0;
	u16 tci;

	lockdep_assert_held(&rwq->lock);
	if ((rwq->flags & IB_WQ_FLAGS_CVLAN_STRIPPING) &&
	    !skb_is_nonlinear(skb) &&
	    shca_wq_cvlan_tci(skb->data, skb->len, &tci)) {
		status = shca_rwq_scatter_stripped(sdev, rwq, w, skb,
						   &byte_len);
		if (status == IB_WC_SUCCESS) {
			cqe->flags |= SHCA_CQE_F_CVLAN;
			cqe->vlan_id = tci;
		}
	} else {
		status = shca_frame_scatter(sdev, rwq->ibwq.pd, w, skb,
					    &byte_len);
	}
	if (status == IB_WC_SUCCESS)
		cqe->byte_len = byte_len;
	return status;
}

/*
 * Write @skb into @w, taken by shca_rwq_take(); a malformed @w (@bad)
 * completes in error instead.  Context: rwq->lock held.
 */
static void shca_rwq_fill_locked(struct shca_dev *sdev, struct shca_rwq *rwq,
				 const struct shca_rwqe *w, bool bad,
				 const struct sk_buff *skb)
{
	struct shca_cqe cqe = {};

	lockdep_assert_held(&rwq->lock);
	cqe.wr_id = w->hdr.wr_id;
	cqe.status = bad ? IB_WC_LOC_QP_OP_ERR :
			   shca_rwq_scatter(sdev, rwq, w, skb, &cqe);
	shca_rwq_complete(rwq, &cqe);
	shca_rwq_after(rwq, cqe.status);
	shca_stat_inc(sdev, SHCA_STAT_RSS_RX_FRAMES);
}

/*
 * Deliver the frames waiting on @rwq, oldest first, while WQEs are
 * posted, and drop those past their deadline; a WQ that is not RDY (or
 * turns out broken) drops them all.  Handled frames go to @done, for the
 * caller to free unlocked.  Return: true if frames still wait.
 * Context: rwq->lock held.
 */
static bool shca_rwq_drain_locked(struct shca_dev *sdev, struct shca_rwq *rwq,
				  struct sk_buff_head *done, bool *fatal)
{
	struct shca_rwqe w;
	struct sk_buff *skb;
	bool bad;
	int drop;

	lockdep_assert_held(&rwq->lock);
	while ((skb = skb_peek(&rwq->pending))) {
		if (time_after_eq(jiffies, shca_rwq_cb(skb)->deadline)) {
			__skb_unlink(skb, &rwq->pending);
			__skb_queue_tail(done, skb);
			shca_stat_inc(sdev, SHCA_STAT_RWQ_DELAY_DROPPED);
			continue;
		}
		drop = shca_rwq_take(rwq, &w, &bad, fatal);
		if (drop == SHCA_STAT_RWQ_NO_WQE)
			return true;
		if (drop) {
			shca_rwq_drop_pending_locked(rwq, done);
			return false;
		}
		__skb_unlink(skb, &rwq->pending);
		__skb_queue_tail(done, skb);
		shca_rwq_fill_locked(sdev, rwq, &w, bad, skb);
	}
	return false;
}

/* (Re)arm @rwq's look at its ring.  Context: rwq->lock held. */
static void shca_rwq_delay_arm(struct shca_rwq *rwq)
{
	lockdep_assert_held(&rwq->lock);
	queue_delayed_work(shca_wq, &rwq->delay_work,
			   msecs_to_jiffies(SHCA_RWQ_DELAY_POLL_MS));
}

/*
 * Keep a copy of @skb, which found no WQE, on @rwq's pending queue.
 * Return: 0, or the counter to bump (the frame is dropped).
 * Context: rwq->lock held.
 */
static int shca_rwq_hold_locked(struct shca_rwq *rwq, struct sk_buff *skb)
{
	struct sk_buff *copy;

	lockdep_assert_held(&rwq->lock);
	if (skb_queue_len(&rwq->pending) >= SHCA_RWQ_DELAY_MAX)
		return SHCA_STAT_RWQ_NO_WQE;
	copy = skb_clone(skb, GFP_ATOMIC);
	if (!copy)
		return SHCA_STAT_RWQ_NO_WQE;
	shca_rwq_cb(copy)->deadline = jiffies +
				      msecs_to_jiffies(SHCA_RWQ_DELAY_MS);
	__skb_queue_tail(&rwq->pending, copy);
	shca_stat_inc(to_sdev(rwq->ibwq.device), SHCA_STAT_RWQ_DELAYED);
	shca_rwq_delay_arm(rwq);
	return 0;
}

/*
 * @rwq's delay_work: deliver or expire the waiting frames, and look
 * again soon while some still wait.  destroy_wq cancels it.
 * Context: process (shca_wq); takes rwq->lock.
 */
static void shca_rwq_delay_work(struct work_struct *work)
{
	struct shca_rwq *rwq = container_of(to_delayed_work(work),
					    struct shca_rwq, delay_work);
	struct shca_dev *sdev = to_sdev(rwq->ibwq.device);
	struct sk_buff_head done;
	unsigned long flags;
	bool fatal = false;

	__skb_queue_head_init(&done);
	spin_lock_irqsave(&rwq->lock, flags);
	if (shca_rwq_drain_locked(sdev, rwq, &done, &fatal))
		shca_rwq_delay_arm(rwq);
	spin_unlock_irqrestore(&rwq->lock, flags);
	__skb_queue_purge(&done);
	if (fatal)
		shca_rwq_event(rwq, IB_EVENT_WQ_FATAL);
}

/*
 * Take a WQE for @skb, behind the frames already waiting; with
 * DELAY_DROP, a frame that finds none waits.  Return: 0, or the counter
 * to bump.  Context: rwq->lock held.
 */
static int shca_rwq_deliver_locked(struct shca_dev *sdev, struct shca_rwq *rwq,
				   struct sk_buff *skb,
				   struct sk_buff_head *done, bool *fatal)
{
	struct shca_rwqe w;
	bool bad;
	int drop;

	lockdep_assert_held(&rwq->lock);
	if (shca_rwq_drain_locked(sdev, rwq, done, fatal))
		return shca_rwq_hold_locked(rwq, skb);
	drop = shca_rwq_take(rwq, &w, &bad, fatal);
	if (drop == SHCA_STAT_RWQ_NO_WQE &&
	    (rwq->flags & IB_WQ_FLAGS_DELAY_DROP))
		return shca_rwq_hold_locked(rwq, skb);
	if (!drop)
		shca_rwq_fill_locked(sdev, rwq, &w, bad, skb);
	return drop;
}

/* Deliver one frame to @rwq.  Context: process, any lock. */
static void shca_rwq_deliver(struct shca_dev *sdev, struct shca_rwq *rwq,
			     struct sk_buff *skb)
{
	struct sk_buff_head done;
	unsigned long flags;
	bool fatal = false;
	int drop;

	__skb_queue_head_init(&done);
	spin_lock_irqsave(&rwq->lock, flags);
	drop = shca_rwq_deliver_locked(sdev, rwq, skb, &done, &fatal);
	spin_unlock_irqrestore(&rwq->lock, flags);
	__skb_queue_purge(&done);
	if (drop)
		shca_stat_inc(sdev, drop);
	if (fatal)
		shca_rwq_event(rwq, IB_EVENT_WQ_FATAL);
}

/**
 * shca_rss_rx_one - one steered frame for an RSS QP
 * @qp: the RSS QP
 * @skb: the frame, skb->data at the Ethernet header, linear; not consumed
 *
 * The WQ is table[hash & (size - 1)] (the table size is a power of two).
 * Context: the QP's RQ engine (process, qp->rq_engine held); takes the
 * WQ's lock.
 */
void shca_rss_rx_one(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_rss *rss = qp->rss;
	struct shca_ind_tbl *tbl;
	struct shca_rwq *rwq;
	u32 hash;

	lockdep_assert_held(&qp->rq_engine);
	if (!rss || READ_ONCE(qp->dying)) {
		shca_stat_inc(sdev, SHCA_STAT_RWQ_DROPPED);
		return;
	}
	tbl = rss->tbl;
	hash = shca_rss_hash(rss->key, skb->data, skb_headlen(skb),
			     rss->fields);
	rwq = to_srwq(tbl->ibtbl.ind_tbl[hash & (tbl->size - 1)]);
	shca_rwq_deliver(sdev, rwq, skb);
}
