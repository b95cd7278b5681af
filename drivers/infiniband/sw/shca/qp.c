// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the QP verbs - creation, the state machine, attributes, posting.
 *
 * Lifetime: a QP is found by QPN in sdev->qps (lookups take a reference
 * under the xarray lock, qp_ref.c).  Destroy unpublishes it, drops the
 * creation reference and waits until every lookup reference is gone.
 */
#include <linux/log2.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include <net/dst_cache.h>

#include "shca.h"
#include "shca_trace.h"
#include "roce.h"
#include "raw.h"
#include "rwqe.h"
#include "odp.h"
#include "rq_logic.h"
#include "rwq.h"

/*
 * The access a QP may grant.  The FLUSH permissions say which placement
 * types a FLUSH request to this QP may ask for (rc_resp_ops.c); both are
 * accepted on every kernel, though a PERSISTENT FLUSH never succeeds (no
 * MR can grant it, compat.h) and on 6.1 there is no FLUSH at all.  Any
 * other bit is refused.
 */
/*
 * IB_ACCESS_ON_DEMAND means nothing for a QP; rdma-core's test_odp grants
 * it on its QPs all the same, so it is accepted where ODP is (odp.h).
 */
#define SHCA_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 SHCA_ACCESS_FLUSH | SHCA_ACCESS_ODP)

/*
 * XRC: an initiator is a user QP (a kernel work request has no field for
 * the remote SRQ number); a target belongs to an XRC domain.
 */
static int shca_qp_check_xrc(struct ib_device *ibdev,
			     const struct ib_qp_init_attr *init,
			     struct ib_udata *udata)
{
	if (init->qp_type == IB_QPT_XRC_INI && !udata) {
		ibdev_dbg(ibdev, "qp: no kernel XRC initiators\n");
		return -EOPNOTSUPP;
	}
	if (init->qp_type == IB_QPT_XRC_TGT && !init->xrcd) {
		ibdev_dbg(ibdev, "qp: XRC target without an XRCD\n");
		return -EINVAL;
	}
	return 0;
}

/* The CQs a QP of each type needs: an XRC target has none of its own. */
static int shca_qp_check_cqs(struct ib_device *ibdev,
			     const struct ib_qp_init_attr *init)
{
	switch (init->qp_type) {
	case IB_QPT_XRC_TGT:
		return 0;
	case IB_QPT_XRC_INI:
		if (init->send_cq)
			return 0;
		break;
	default:
		if (init->send_cq && init->recv_cq)
			return 0;
		break;
	}
	ibdev_dbg(ibdev, "qp: type %d lacks a CQ\n", init->qp_type);
	return -EINVAL;
}

static int shca_qp_check_type(struct ib_device *ibdev,
			      const struct ib_qp_init_attr *init,
			      struct ib_udata *udata)
{
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		err = shca_qp_check_xrc(ibdev, init, udata);
		if (err)
			return err;
		break;
	case IB_QPT_RAW_PACKET:
		err = shca_raw_check_create(ibdev, init, udata);
		if (err)
			return err;
		break;
	case IB_QPT_GSI:
		if (!udata)
			break;
		fallthrough;
	default:
		ibdev_dbg(ibdev, "qp: type %d not supported\n", init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->rwq_ind_tbl) {
		ibdev_dbg(ibdev, "qp: create_flags %#x/rwq not supported\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	/*
	 * ibv_create_qp(3): only RC and UD QPs may take an SRQ, a basic one;
	 * a tag matching SRQ serves RC QPs (IBV_TM_CAP_RC).
	 */
	if (init->srq && ((init->qp_type != IB_QPT_RC &&
			   init->qp_type != IB_QPT_UD) ||
			  (init->srq->srq_type != IB_SRQT_BASIC &&
			   (init->srq->srq_type != IB_SRQT_TM ||
			    init->qp_type != IB_QPT_RC)))) {
		ibdev_dbg(ibdev, "qp: type %d cannot use SRQ type %d\n",
			  init->qp_type, init->srq->srq_type);
		return -EINVAL;
	}
	return shca_qp_check_cqs(ibdev, init);
}

/* Does a QP of this type and SRQ get an RQ ring of its own? */
static bool shca_qp_wants_rq(const struct ib_qp_init_attr *init)
{
	return !init->srq && init->qp_type != IB_QPT_XRC_INI &&
	       init->qp_type != IB_QPT_XRC_TGT;
}

/*
 * The receive caps are ignored for a QP with an SRQ (ibv_create_qp(3)) and
 * for XRC QPs, which have no RQ; an XRC target has no SQ either.
 */
static int shca_qp_check_cap(struct ib_device *ibdev,
			     const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;
	bool rq = shca_qp_wants_rq(init);

	if (init->qp_type == IB_QPT_XRC_TGT)
		return 0;	/* shca_qp_set_cap() zeroes them */

	if (cap->max_send_wr > SHCA_MAX_QP_WR ||
	    (rq && cap->max_recv_wr > SHCA_MAX_QP_WR) ||
	    cap->max_send_sge > SHCA_MAX_SGE ||
	    (rq && cap->max_recv_sge > SHCA_MAX_SGE) ||
	    cap->max_inline_data > SHCA_MAX_INLINE) {
		ibdev_dbg(ibdev, "qp: caps wr %u/%u sge %u/%u inline %u too big\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data);
		return -EINVAL;
	}
	return 0;
}

static int shca_qp_check(struct ib_device *ibdev,
			 const struct ib_qp_init_attr *init,
			 struct ib_udata *udata)
{
	struct shca_create_qp_req req;
	int err;

	err = shca_udata_get_req(ibdev, udata, &req, sizeof(req),
				 udata ? offsetofend(typeof(req), comp_mask) : 0);
	if (!err)
		err = shca_udata_check_cmd(ibdev, "create_qp", req.comp_mask, 0,
					   req.reserved_32 ||
					   memchr_inv(&req.rx_hash_fields_mask, 0,
						      sizeof(req) -
						      offsetof(typeof(req),
							       rx_hash_fields_mask)));
	if (!err)
		err = shca_qp_check_type(ibdev, init, udata);
	if (!err)
		err = shca_qp_check_cap(ibdev, init);
	return err;
}

/* Reserve the QPN (NULL entry); create stores the QP once it is whole. */
int shca_qp_alloc_qpn(struct shca_dev *sdev, struct shca_qp *qp)
{
	u32 qpn = SHCA_GSI_QPN;
	int err;

	if (atomic_inc_return(&sdev->num_qp) > SHCA_MAX_QP) {
		ibdev_dbg(&sdev->ibdev, "qp: limit %u reached\n", SHCA_MAX_QP);
		err = -ENOMEM;
		goto err_count;
	}
	if (qp->ibqp.qp_type == IB_QPT_GSI)
		err = xa_insert_irq(&sdev->qps, qpn, NULL, GFP_KERNEL);
	else
		err = xa_alloc_cyclic_irq(&sdev->qps, &qpn, NULL,
					  XA_LIMIT(SHCA_GSI_QPN + 1,
						   SHCA_MAX_QPN),
					  &sdev->next_qpn, GFP_KERNEL);
	if (err < 0)
		goto err_count;
	qp->ibqp.qp_num = qpn;
	return 0;

err_count:
	atomic_dec(&sdev->num_qp);
	return err;
}

void shca_qp_free_qpn(struct shca_dev *sdev, struct shca_qp *qp)
{
	xa_erase_irq(&sdev->qps, qp->ibqp.qp_num);
	atomic_dec(&sdev->num_qp);
}

/* log2 of the SQ stride that the QP's granted caps fill exactly */
static u32 shca_qp_sq_shift(const struct shca_qp *qp)
{
	return shca_wqe_shift(sizeof(struct shca_send_wqe), qp->cap.max_send_sge,
			      qp->cap.max_inline_data, SHCA_SQ_ENTRY_SHIFT);
}

/* log2 of the RQ stride, likewise */
static u32 shca_qp_rq_shift(const struct shca_qp *qp)
{
	return shca_wqe_shift(sizeof(struct shca_recv_wqe), qp->cap.max_recv_sge,
			      0, SHCA_RQ_ENTRY_SHIFT);
}

/*
 * Round the caps up to what the rings really provide: the depths to powers
 * of two, the SGEs and inline bytes to all that the stride the request
 * needs holds (rq_logic.h).  An RC QP on a tag matching SRQ executes
 * internal operations of up to SHCA_REQ_IOP_MAX_SGE SGEs in its SQ's
 * shadow slots, so its SQ has the largest stride.
 * Context: process; before the rings exist.
 */
static void shca_qp_set_cap(struct shca_qp *qp, struct ib_qp_init_attr *init)
{
	const u32 shdr = sizeof(struct shca_send_wqe);
	struct ib_qp_cap *cap = &init->cap;
	u32 nsge = cap->max_send_sge, shift;

	if (shca_req_wants_iops(qp))
		nsge = SHCA_MAX_SGE;
	cap->max_send_wr = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	cap->max_recv_wr = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	shift = shca_wqe_shift(shdr, nsge, cap->max_inline_data,
			       SHCA_SQ_ENTRY_SHIFT);
	cap->max_send_sge = shca_wqe_sges(shift, shdr, SHCA_MAX_SGE);
	cap->max_inline_data = shca_wqe_inline(shift, shdr);
	shca_rwqe_grant(&cap->max_recv_sge);
	if (!shca_qp_wants_rq(init)) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (init->qp_type == IB_QPT_XRC_TGT)
		memset(cap, 0, sizeof(*cap));
	qp->cap = *cap;
	qp->sq.max_sge = cap->max_send_sge;
	qp->rq.max_sge = cap->max_recv_sge;
}

static int shca_qp_alloc_rings(struct shca_dev *sdev, struct shca_qp *qp,
			       struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	struct ib_ucontext *uctx = shca_udata_uctx(udata);
	int err;

	if (init->qp_type == IB_QPT_XRC_TGT)
		return 0;
	err = shca_ring_alloc(&qp->sq.ring, sdev->dma_dev, qp->cap.max_send_wr,
			      shca_qp_sq_shift(qp), uctx);
	if (err || !shca_qp_wants_rq(init))
		return err;
	err = shca_ring_alloc(&qp->rq.ring, sdev->dma_dev, qp->cap.max_recv_wr,
			      shca_qp_rq_shift(qp), uctx);
	if (err)
		shca_ring_free(&qp->sq.ring);
	return err;
}

static void shca_qp_free_rings(struct shca_qp *qp)
{
	shca_ring_free(&qp->rq.ring);
	shca_ring_free(&qp->sq.ring);
}

static int shca_qp_reply(struct shca_dev *sdev, struct shca_qp *qp,
			 struct ib_udata *udata)
{
	struct shca_create_qp_resp resp = {};

	if (!udata)
		return 0;
	resp.comp_mask = SHCA_CREATE_QP_RESP_CMASK_SQ;
	resp.qpn = qp->ibqp.qp_num;
	resp.max_inline_data = qp->cap.max_inline_data;
	shca_ring_fill_info(&qp->sq.ring, &resp.sq);
	if (qp->rq.ring.ctl) {
		resp.comp_mask |= SHCA_CREATE_QP_RESP_CMASK_RQ;
		shca_ring_fill_info(&qp->rq.ring, &resp.rq);
	}
	return shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
}

void shca_qp_init(struct shca_dev *sdev, struct shca_qp *qp,
		  struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	kref_init(&qp->ref);
	init_completion(&qp->freed);
	mutex_init(&qp->state_lock);
	mutex_init(&qp->sq_engine);
	__skb_queue_head_init(&qp->sq_tx_batch);
	__skb_queue_head_init(&qp->rq_tx_batch);
	mutex_init(&qp->rq_engine);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	seqlock_init(&qp->av_lock);
	qp->state = IB_QPS_RESET;
	qp->user = !!udata;
	INIT_WORK(&qp->sq_work, shca_sq_work);
	shca_linger_timer_init(qp);
	INIT_WORK(&qp->rq_work, shca_rq_work);
	skb_queue_head_init(&qp->rx_queue);
	skb_queue_head_init(&qp->comp_queue);
	qp->sq_sig_type = init->sq_sig_type;
	qp->xrcd = init->qp_type == IB_QPT_XRC_TGT ? init->xrcd : NULL;
	qp->attr.port_num = 1;
	qp->attr.path_mtu = shca_active_mtu(sdev);
	if (init->qp_type == IB_QPT_GSI)
		qp->attr.qkey = IB_QP1_QKEY;
}

/*
 * The RC/UC engines' private state.  The route cache (qp->dst_cache) is
 * left empty here: shca_qp_prepare_route() sets it up.
 * Context: process, may sleep.
 */
static int shca_qp_init_rc(struct shca_qp *qp)
{
	int err;

	if (!shca_qp_is_conn(qp->ibqp.qp_type))
		return 0;
	err = shca_req_init(qp);
	if (err)
		return err;
	err = shca_resp_init(qp);
	if (err)
		shca_req_fini(qp);
	return err;
}

static void shca_qp_fini_rc(struct shca_qp *qp)
{
	if (!shca_qp_is_conn(qp->ibqp.qp_type))
		return;
	shca_resp_fini(qp);
	shca_req_fini(qp);
	dst_cache_destroy(&qp->dst_cache);	/* empty if never set up */
}

int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct shca_qp *qp = to_sqp(ibqp);
	int err;

	if (init->rwq_ind_tbl)		/* RSS QP: rwq.c */
		return shca_rss_create_qp(qp, init, udata);
	err = shca_qp_check(&sdev->ibdev, init, udata);
	if (err)
		goto err_out;
	shca_qp_init(sdev, qp, init, udata);
	err = shca_qp_alloc_qpn(sdev, qp);
	if (err)
		goto err_out;
	shca_qp_set_cap(qp, init);
	err = shca_qp_alloc_rings(sdev, qp, init, udata);
	if (err)
		goto err_free_qpn;
	err = shca_qp_init_rc(qp);
	if (err)
		goto err_free_rings;
	err = shca_qp_reply(sdev, qp, udata);
	if (err)
		goto err_fini_rc;
	xa_store_irq(&sdev->qps, ibqp->qp_num, qp, GFP_KERNEL);
	return 0;

err_fini_rc:
	shca_qp_fini_rc(qp);
err_free_rings:
	shca_qp_free_rings(qp);
err_free_qpn:
	shca_qp_free_qpn(sdev, qp);
err_out:
	shca_stat_inc(sdev, SHCA_STAT_CREATE_QP_ERR);
	return err;
}

int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct shca_qp *qp = to_sqp(ibqp);

	/* ibv_create_qp(3): a QP still attached to a group is busy */
	if (shca_mcast_qp_attached(qp)) {
		ibdev_dbg(ibqp->device, "qp %u: still attached to a group\n",
			  ibqp->qp_num);
		return -EBUSY;
	}
	WRITE_ONCE(qp->dying, true);	/* engines drop everything now */
	xa_erase_irq(&sdev->qps, ibqp->qp_num);
	if (shca_qp_is_conn(ibqp->qp_type)) {
		shca_req_stop(qp);
		shca_resp_stop(qp);
	}
	shca_qp_put(qp);
	/* queued work, timers, skbs and lookups all hold references */
	wait_for_completion(&qp->freed);
	if (ibqp->send_cq)
		shca_cq_sync_events(to_scq(ibqp->send_cq));
	if (ibqp->recv_cq)
		shca_cq_sync_events(to_scq(ibqp->recv_cq));
	skb_queue_purge(&qp->rx_queue);
	skb_queue_purge(&qp->comp_queue);
	shca_qp_fini_rc(qp);
	shca_qp_free_rings(qp);
	shca_rss_destroy_qp(qp);
	atomic_dec(&sdev->num_qp);
	mutex_destroy(&qp->rq_engine);
	mutex_destroy(&qp->sq_engine);
	mutex_destroy(&qp->state_lock);
	return 0;
}

static int shca_qp_check_path(struct shca_dev *sdev,
			      const struct ib_qp_attr *attr, int mask)
{
	struct ib_device *ibdev = &sdev->ibdev;
	int err;

	if ((mask & IB_QP_PORT) && attr->port_num != 1) {
		ibdev_dbg(ibdev, "qp: bad port %u\n", attr->port_num);
		return -EINVAL;
	}
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index) {
		ibdev_dbg(ibdev, "qp: bad pkey index %u\n", attr->pkey_index);
		return -EINVAL;
	}
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 ||
	     attr->path_mtu > shca_active_mtu(sdev))) {
		ibdev_dbg(ibdev, "qp: path mtu %d above active %d\n",
			  attr->path_mtu, shca_active_mtu(sdev));
		return -EINVAL;
	}
	if (!(mask & IB_QP_AV))
		return 0;
	err = shca_ah_attr_check(ibdev, &attr->ah_attr);
	if (err)
		return err;
	/* ib_core resolves the source GID of every address vector */
	if (!attr->ah_attr.grh.sgid_attr) {
		ibdev_dbg(ibdev, "qp: address vector without a source GID\n");
		return -EINVAL;
	}
	return 0;
}

static int shca_qp_check_attr(struct shca_dev *sdev,
			      const struct ib_qp_attr *attr, int mask)
{
	struct ib_device *ibdev = &sdev->ibdev;

	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE |
		    IB_QP_RATE_LIMIT)) {
		ibdev_dbg(ibdev, "qp: APM/rate limit not supported\n");
		return -EOPNOTSUPP;
	}
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SHCA_QP_ACCESS)) {
		ibdev_dbg(ibdev, "qp: bad access flags %#x\n",
			  attr->qp_access_flags);
		return -EINVAL;
	}
	if (((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	     attr->max_rd_atomic > SHCA_MAX_RD_ATOM) ||
	    ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	     attr->max_dest_rd_atomic > SHCA_MAX_RD_ATOM)) {
		ibdev_dbg(ibdev, "qp: rd_atomic %u/%u above %u\n",
			  attr->max_rd_atomic, attr->max_dest_rd_atomic,
			  SHCA_MAX_RD_ATOM);
		return -EINVAL;
	}
	return shca_qp_check_path(sdev, attr, mask);
}

/*
 * Publish the primary path of a connected QP's new address vector @ah
 * (its source GID resolved by ib_core, shca_qp_check_path()) to the
 * engines and the receive demux, which read it without state_lock
 * (shca_qp_av_read()): the GIDs are never seen half written.
 * Context: modify_qp, qp->state_lock held.
 */
static void shca_qp_store_av(struct shca_qp *qp,
			     const struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);
	struct shca_qp_av av = {
		.tclass = grh->traffic_class,
		.flow_label = grh->flow_label,
	};

	lockdep_assert_held(&qp->state_lock);
	shca_path_addrs_set(&av.addrs, &grh->dgid, &grh->sgid_attr->gid);
	write_seqlock_bh(&qp->av_lock);
	qp->av = av;
	write_sequnlock_bh(&qp->av_lock);
	/* lazily: entries older than now are not used again */
	dst_cache_reset(&qp->dst_cache);
}

static void shca_qp_store_path(struct shca_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_AV) {
		if (shca_qp_is_conn(qp->ibqp.qp_type))
			shca_qp_store_av(qp, &attr->ah_attr);
		a->ah_attr = attr->ah_attr;
		a->ah_attr.grh.sgid_attr = NULL;	/* ib_core holds it */
	}
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
}

static void shca_qp_store_attr(struct shca_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->state_lock);
	shca_qp_store_path(qp, attr, mask);
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num & 0xffffff;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
}

/*
 * After the move to RESET: wait for an engine run that still saw the old
 * state (e.g. flushing the error state's WQEs), so no completion of this
 * QP is produced once modify_qp returns; the provider then removes the
 * ones still in the CQs.  Later runs see RESET and complete nothing.
 * Context: process, may sleep; qp->state_lock not held (the engines
 * take it).
 */
static void shca_qp_quiesce(struct shca_qp *qp)
{
	shca_sq_sync(qp);
	shca_rq_sync(qp);
}

static int shca_qp_transition(struct shca_dev *sdev, struct shca_qp *qp,
			      const struct ib_qp_attr *attr, int mask)
{
	enum ib_qp_state cur = qp->state, next;

	lockdep_assert_held(&qp->state_lock);
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ibdev_dbg(&sdev->ibdev, "qp %u: cur_qp_state %d, is %d\n",
			  qp->ibqp.qp_num, attr->cur_qp_state, cur);
		return -EINVAL;
	}
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask)) {
		ibdev_dbg(&sdev->ibdev, "qp %u: bad transition %d->%d mask %#x\n",
			  qp->ibqp.qp_num, cur, next, mask);
		return -EINVAL;
	}
	return shca_qp_check_attr(sdev, attr, mask);
}

/*
 * The route cache of a connected QP is set up by its first move to RTR,
 * not at creation: a QP routes packets from RTR on (shca_qp_path()), and
 * QPs that never get there need not pay the per-CPU allocation.  It is
 * set up before the modify commits anything and before the state
 * changes, and stays until the QP is destroyed.  An empty dst_cache is
 * a valid one: lookups miss, stores and resets do nothing.
 * Context: modify_qp, qp->state_lock held, may sleep.
 * Return: 0, or -ENOMEM.
 */
static int shca_qp_prepare_route(struct shca_qp *qp,
				 const struct ib_qp_attr *attr, int mask)
{
	lockdep_assert_held(&qp->state_lock);
	if (!(mask & IB_QP_STATE) || attr->qp_state != IB_QPS_RTR ||
	    qp->dst_cache.cache)
		return 0;
	return dst_cache_init(&qp->dst_cache, GFP_KERNEL);
}

/* Context: process, may sleep. */
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct shca_qp *qp = to_sqp(ibqp);
	int err;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (err)
		goto err_out;
	/* an RSS QP has no state of its own to move (mlx5: ENOSYS) */
	if (shca_qp_is_rss(qp)) {
		ibdev_dbg(ibqp->device, "qp %u: RSS QPs are not modified\n",
			  ibqp->qp_num);
		err = -EOPNOTSUPP;
		goto err_out;
	}
	mutex_lock(&qp->state_lock);
	err = shca_qp_transition(sdev, qp, attr, mask);
	if (!err && shca_qp_is_conn(ibqp->qp_type)) {
		err = shca_qp_prepare_route(qp, attr, mask);
		if (!err)
			err = shca_resp_prepare(qp, attr, mask);
	}
	if (!err) {
		shca_qp_store_attr(qp, attr, mask);
		if (mask & IB_QP_STATE) {
			trace_shca_qp_state(qp, qp->state, attr->qp_state);
			WRITE_ONCE(qp->state, attr->qp_state);
		}
		if (shca_qp_is_conn(ibqp->qp_type)) {
			shca_req_modify(qp, attr, mask);
			shca_resp_modify(qp, attr, mask);
		}
	}
	mutex_unlock(&qp->state_lock);
	if (!err) {
		/* RTS starts WQEs posted early; ERR flushes */
		if ((mask & IB_QP_STATE) && (attr->qp_state == IB_QPS_RTS ||
					     attr->qp_state == IB_QPS_ERR))
			shca_qp_kick(qp);
		if ((mask & IB_QP_STATE) && attr->qp_state == IB_QPS_RESET) {
			shca_qp_quiesce(qp);
			WRITE_ONCE(qp->last_wqe_sent, false);
			mutex_lock(&qp->state_lock);
			qp->fatal_sent = false;
			mutex_unlock(&qp->state_lock);
		}
		return 0;
	}
err_out:
	shca_stat_inc(sdev, SHCA_STAT_MODIFY_QP_ERR);
	return err;
}

/* Context: process, may sleep. */
int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct shca_qp *qp = to_sqp(ibqp);

	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->state_lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->cap = qp->cap;
	mutex_unlock(&qp->state_lock);

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->qp_type = ibqp->qp_type;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_type;
	init->port_num = 1;
	return 0;
}

/*
 * User QPs: a post with no work request is the doorbell of the mapped SQ
 * (ib_uverbs_post_send() with wr_count 0).  It runs the engine in the
 * calling thread before returning, so WQEs posted before the doorbell have
 * been executed (their completions produced) when ibv_post_send() returns,
 * as with rxe, without a hop through the workqueue.
 * Kernel QPs post through the same ring.
 * Context: kernel QPs: any, does not sleep.  User QPs: the uverbs system
 * call, process context, may sleep.
 */
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (!qp->sq.ring.ctl) {		/* an XRC target sends nothing */
		*bad_wr = wr;
		return wr ? -EINVAL : 0;
	}
	if (qp->user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		shca_sq_doorbell(qp);
		return 0;
	}
	if (!wr)
		return 0;
	if (state != IB_QPS_RTS && state != IB_QPS_SQD &&
	    state != IB_QPS_ERR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return shca_post_send_kernel(qp, wr, bad_wr);
}

/*
 * Post receives on a kernel QP (ib_mad's GSI QP among others).  User QPs
 * post through their mapped RQ instead.
 * Context: any, does not sleep.
 */
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_ring *ring = &qp->rq.ring;
	unsigned long flags;
	int err = 0;

	if (qp->user && !wr)
		return 0;	/* receives need no doorbell */
	if (qp->user || !ring->ctl || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		err = -EINVAL;
		goto out;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	for (; wr; wr = wr->next) {
		err = shca_rwqe_push(ring, wr, qp->rq.max_sge);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	/* WQEs are written before the consumer can see the new prod */
	smp_store_release(&ring->ctl->prod, ring->kprod);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		shca_qp_queue(qp, &qp->rq_work);	/* flush them */
out:
	if (err) {
		ibdev_dbg(ibqp->device, "qp %u: post_recv failed %d\n",
			  ibqp->qp_num, err);
		shca_qp_stat_inc(to_sqp(ibqp), SHCA_STAT_POST_RECV_ERR);
	}
	return err;
}
