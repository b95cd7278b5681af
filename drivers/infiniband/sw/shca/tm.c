// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: tag matching SRQs (IBV_SRQT_TM).  See tm.h and tm_logic.h.
 *
 * List operations come through the SRQ's ops ring and are executed in the
 * doorbell (a post_srq_recv command without work requests), so that when
 * ibv_post_srq_ops() returns, its operations are in effect.
 *
 * Messages: the first packet of a SEND to an RC QP of a TM SRQ is
 * classified (shca_tm_classify()); a tagged one is matched against the
 * list under srq->lock, and when nothing matches it takes an ordinary
 * WQE of the SRQ under the same lock hold and is counted unexpected.
 *  - eager, matched: the tag's buffer becomes the receive WQE and the TMH
 *    is skipped; a multi-packet message reports the match at once and the
 *    data when it ends;
 *  - rendezvous, matched: the match is reported, then the QP's requester
 *    READs the sender's buffer into the tag's (an internal operation,
 *    rc_req.h) and, fenced behind it, SENDs the FIN (the request's TMH and
 *    RVH with the FIN opcode); the data completion is reported when the
 *    READ retires.  A buffer too small for the RVH's length gets the
 *    headers and IBV_WC_TM_RNDV_INCOMPLETE;
 *  - everything else lands whole in an ordinary WQE.
 */
#include <linux/slab.h>

#include "shca.h"
#include "rwqe.h"
#include "tm.h"

/* A matched rendezvous: the READ and the FIN the requester runs for it. */
struct shca_tm_rndv {
	struct shca_req_iop read;
	struct shca_req_iop fin;
	struct shca_srq *srq;
	refcount_t refs;	/* one per operation the requester holds */
	u64 wr_id;
	u32 len;
	u16 handle;
};

static struct shca_dev *shca_tm_sdev(struct shca_srq *srq)
{
	return to_sdev(srq->ibsrq.device);
}

static struct shca_cq *shca_tm_cq(struct shca_srq *srq)
{
	return to_scq(srq->ibsrq.ext.cq);
}

/* A completion of the TM SRQ @srq, with the fields all of them share. */
static void shca_tm_cqe_init(struct shca_srq *srq, struct shca_cqe *cqe,
			     u8 opcode, u8 status)
{
	memset(cqe, 0, sizeof(*cqe));
	cqe->opcode = opcode;
	cqe->status = status;
	cqe->flags = SHCA_CQE_F_TM;
	cqe->tm_srqn = srq->srqn;
	cqe->port_num = 1;
}

/* ---------------------------------------------------------------- */
/* Creation                                                          */
/* ---------------------------------------------------------------- */

/**
 * shca_tm_create - the tag matching part of a TM SRQ
 * @srq: the SRQ being created (srq->lock initialised)
 * @init: its attributes; tm_cap.max_num_tags is written back
 * @max_ops: the provider's ibv_tm_cap.max_ops
 * @udata: the user's command (TM SRQs are user SRQs only)
 *
 * Context: process, may sleep.
 * Return: 0, -EINVAL for limits out of range, -ENOMEM.
 */
int shca_tm_create(struct shca_srq *srq, struct ib_srq_init_attr *init,
		   u32 max_ops, struct ib_udata *udata)
{
	struct shca_dev *sdev = shca_tm_sdev(srq);
	u32 max_tags = init->ext.tag_matching.max_num_tags;
	struct shca_tm *tm;
	int err;

	if (!max_tags || max_tags > SHCA_TM_MAX_TAGS || !max_ops ||
	    max_ops > SHCA_TM_MAX_OPS) {
		ibdev_dbg(&sdev->ibdev, "srq: TM max_num_tags %u or max_ops %u out of range\n",
			  max_tags, max_ops);
		return -EINVAL;
	}
	tm = kzalloc(sizeof(*tm), shca_gfp(true));
	if (!tm)
		return -ENOMEM;
	tm->tags = kvcalloc(max_tags, sizeof(*tm->tags), shca_gfp_array(true));
	if (!tm->tags) {
		err = -ENOMEM;
		goto err_free;
	}
	err = shca_ring_alloc(&tm->ops, sdev->dma_dev,
			      roundup_pow_of_two(max_ops),
			      SHCA_TM_OP_ENTRY_SHIFT, shca_udata_uctx(udata));
	if (err)
		goto err_free_tags;
	shca_tm_list_init(&tm->list, tm->tags, max_tags);
	mutex_init(&tm->ops_lock);
	srq->tm = tm;
	return 0;

err_free_tags:
	kvfree(tm->tags);
err_free:
	kfree(tm);
	return err;
}

/* Context: process. */
void shca_tm_fill_resp(struct shca_srq *srq, struct shca_create_srq_resp *resp)
{
	struct shca_tm *tm = srq->tm;

	resp->comp_mask |= SHCA_CREATE_SRQ_RESP_CMASK_TM;
	resp->tm_max_tags = tm->list.max_tags;
	resp->tm_max_ops = tm->ops.entries;
	resp->tm_max_sge = SHCA_TM_MAX_SGE;
	shca_ring_fill_info(&tm->ops, &resp->tm_ops);
}

/*
 * After ib_core made sure no QP uses the SRQ: nothing holds a tag.
 * Context: process, may sleep.
 */
void shca_tm_destroy(struct shca_srq *srq)
{
	struct shca_tm *tm = srq->tm;

	if (!tm)
		return;
	srq->tm = NULL;
	shca_ring_free(&tm->ops);
	mutex_destroy(&tm->ops_lock);
	kvfree(tm->tags);
	kfree(tm);
}

/* ---------------------------------------------------------------- */
/* List operations                                                   */
/* ---------------------------------------------------------------- */

/* TAG_ADD.  Context: doorbell; srq->lock held. */
static u8 shca_tm_op_add(struct shca_srq *srq, const struct shca_tm_op_wqe *op,
			 const struct shca_sge *sge)
{
	struct shca_tm_list *l = &srq->tm->list;
	struct shca_tm_tag *t = shca_tm_at(l, op->handle);
	u64 len;

	lockdep_assert_held(&srq->lock);
	if (!t || t->state != SHCA_TM_TAG_FREE ||
	    shca_sge_total(sge, op->num_sge, &len))
		return SHCA_WC_TM_ERR;
	memcpy(t->sge, sge, op->num_sge * sizeof(*sge));
	t->num_sge = op->num_sge;
	t->len = len;
	return shca_tm_add(l, op->handle, op->tag, op->mask, op->recv_wr_id) ?
	       IB_WC_SUCCESS : SHCA_WC_TM_ERR;
}

/* Execute one operation.  Context: doorbell; srq->lock held. */
static u8 shca_tm_op_exec(struct shca_srq *srq, const struct shca_tm_op_wqe *op,
			  const struct shca_sge *sge)
{
	struct shca_tm_list *l = &srq->tm->list;

	lockdep_assert_held(&srq->lock);
	shca_tm_sync(l, op->flags & SHCA_TM_OP_F_SYNC, op->unexpected_cnt);
	switch (op->opcode) {
	case SHCA_OP_TM_ADD:
		return shca_tm_op_add(srq, op, sge);
	case SHCA_OP_TM_DEL:
		return shca_tm_del(l, op->handle) ? IB_WC_SUCCESS :
						    SHCA_WC_TM_ERR;
	default:		/* SYNC */
		return IB_WC_SUCCESS;
	}
}

static u8 shca_tm_op_wc(u8 opcode)
{
	switch (opcode) {
	case SHCA_OP_TM_ADD:
		return SHCA_WC_TM_ADD;
	case SHCA_OP_TM_DEL:
		return SHCA_WC_TM_DEL;
	default:
		return SHCA_WC_TM_SYNC;
	}
}

/*
 * Copy the operation at the ring's consumer index out of shared memory
 * and check its opcode, flags and SGE count.
 * Return: true if it may be executed.  Context: doorbell.
 */
static bool shca_tm_op_fetch(struct shca_tm *tm, struct shca_tm_op_wqe *op,
			     struct shca_sge *sge)
{
	const struct shca_tm_op_wqe *e = shca_ring_entry(&tm->ops,
							 tm->ops.kcons);

	memcpy(op, e, sizeof(*op));
	if (op->opcode < SHCA_OP_TM_ADD || op->opcode > SHCA_OP_TM_SYNC ||
	    op->flags & ~(SHCA_TM_OP_F_SIGNALED | SHCA_TM_OP_F_SYNC) ||
	    op->num_sge > SHCA_TM_MAX_SGE || op->reserved_160)
		return false;
	if (op->opcode == SHCA_OP_TM_ADD)
		memcpy(sge, e + 1, op->num_sge * sizeof(*sge));
	return true;
}

/* Run the operation at the consumer index.  Context: doorbell. */
static void shca_tm_op_one(struct shca_srq *srq)
{
	struct shca_tm *tm = srq->tm;
	struct shca_sge sge[SHCA_TM_MAX_SGE];
	struct shca_tm_op_wqe op;
	struct shca_tm_op_wqe *e;
	struct shca_cqe cqe;
	unsigned long flags;
	bool sync_req = false;
	u8 status = IB_WC_LOC_QP_OP_ERR;

	e = shca_ring_entry(&tm->ops, tm->ops.kcons);
	if (shca_tm_op_fetch(tm, &op, sge)) {
		spin_lock_irqsave(&srq->lock, flags);
		status = shca_tm_op_exec(srq, &op, sge);
		sync_req = shca_tm_sync_req(&tm->list);
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	WRITE_ONCE(e->result, status);
	if (status != IB_WC_SUCCESS) {
		ibdev_dbg(srq->ibsrq.device, "srq %u: TM op %u handle %u failed %u\n",
			  srq->srqn, op.opcode, op.handle, status);
		shca_stat_inc(shca_tm_sdev(srq), SHCA_STAT_TM_OP_ERRS);
	} else if (!(op.flags & SHCA_TM_OP_F_SIGNALED)) {
		return;
	}
	shca_tm_cqe_init(srq, &cqe, shca_tm_op_wc(op.opcode), status);
	cqe.wr_id = op.wr_id;
	if (sync_req)
		cqe.tm_flags = SHCA_CQE_TM_F_SYNC_REQ;
	shca_cq_post(shca_tm_cq(srq), &cqe, false);
}

/**
 * shca_tm_doorbell - execute the list operations the provider published
 * @srq: a TM SRQ
 *
 * Each operation's outcome goes to its result byte before cons moves on.
 * Context: process (the post_srq_recv command), may sleep.
 * Return: 0, or -EINVAL if the ring's producer index is impossible.
 */
int shca_tm_doorbell(struct shca_srq *srq)
{
	struct shca_tm *tm = srq->tm;
	struct shca_ring *ring = &tm->ops;
	int err = 0;
	u32 prod;

	mutex_lock(&tm->ops_lock);
	/* pairs with the provider's release of prod */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (!shca_ring_idx_valid(prod, ring->kcons, ring->entries)) {
		ibdev_dbg(srq->ibsrq.device, "srq %u: TM ops ring broken\n",
			  srq->srqn);
		err = -EINVAL;
		goto out;
	}
	while (ring->kcons != prod) {
		shca_tm_op_one(srq);
		ring->kcons++;
		/* the result is written before the slot is handed back */
		smp_store_release(&ring->ctl->cons, ring->kcons);
	}
out:
	mutex_unlock(&tm->ops_lock);
	return err;
}

/* ---------------------------------------------------------------- */
/* Messages                                                          */
/* ---------------------------------------------------------------- */

/* Post a completion for the tag @t of @qp's message.  Context: any. */
static void shca_tm_post_tag(struct shca_qp *qp, struct shca_srq *srq,
			     struct shca_cqe *cqe)
{
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->src_qp = READ_ONCE(qp->attr.dest_qp_num);
	shca_cq_post(shca_tm_cq(srq), cqe, false);
}

/* Free a BUSY tag; the completion that says so follows.  Context: any. */
static void shca_tm_release_handle(struct shca_srq *srq, u16 handle)
{
	struct shca_tm_tag *t = shca_tm_at(&srq->tm->list, handle);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	shca_tm_release(t);
	spin_unlock_irqrestore(&srq->lock, flags);
}

/* The rendezvous READ retired: report the data.  Context: SQ engine. */
static void shca_tm_rndv_read_done(struct shca_qp *qp,
				   struct shca_req_iop *iop,
				   enum ib_wc_status status)
{
	struct shca_tm_rndv *r = container_of(iop, struct shca_tm_rndv, read);
	struct shca_cqe cqe;

	shca_stat_inc(shca_tm_sdev(r->srq), status == IB_WC_SUCCESS ?
		      SHCA_STAT_TM_RNDV_READS : SHCA_STAT_TM_RNDV_ERRS);
	shca_tm_release_handle(r->srq, r->handle);
	shca_tm_cqe_init(r->srq, &cqe, SHCA_WC_TM_RECV, status);
	cqe.wr_id = r->wr_id;
	cqe.byte_len = status == IB_WC_SUCCESS ? r->len : 0;
	cqe.tm_flags = SHCA_CQE_TM_F_DATA_VALID | SHCA_CQE_TM_F_RELEASE;
	cqe.tm_handle = r->handle;
	shca_tm_post_tag(qp, r->srq, &cqe);
	if (refcount_dec_and_test(&r->refs))
		kfree(r);
}

/* The FIN retired (or was flushed): nothing to report.  Context: ditto. */
static void shca_tm_rndv_fin_done(struct shca_qp *qp, struct shca_req_iop *iop,
				  enum ib_wc_status status)
{
	struct shca_tm_rndv *r = container_of(iop, struct shca_tm_rndv, fin);

	if (refcount_dec_and_test(&r->refs))
		kfree(r);
}

/* The READ into the first @len bytes of @t's buffer. */
static void shca_tm_rndv_read_init(struct shca_tm_rndv *r,
				   const struct shca_tm_tag *t,
				   const struct shca_rvh *rvh,
				   struct ib_pd *pd)
{
	struct shca_req_iop *iop = &r->read;
	u32 left = r->len, n = 0;

	while (left && n < t->num_sge) {
		iop->sge[n] = t->sge[n];
		iop->sge[n].length = min(left, t->sge[n].length);
		left -= iop->sge[n].length;
		n++;
	}
	iop->hdr.opcode = SHCA_OP_RDMA_READ;
	iop->hdr.num_sge = n;
	iop->hdr.rdma.remote_addr = be64_to_cpu(rvh->va);
	iop->hdr.rdma.rkey = be32_to_cpu(rvh->rkey);
	iop->pd = pd;
	iop->done = shca_tm_rndv_read_done;
}

/* The FIN: the request's TMH and RVH, FIN opcode, after the READ. */
static void shca_tm_rndv_fin_init(struct shca_tm_rndv *r, const u8 *hdrs)
{
	struct shca_req_iop *iop = &r->fin;

	BUILD_BUG_ON(sizeof(iop->inl) < SHCA_TMH_BYTES + SHCA_RVH_BYTES);
	memcpy(iop->inl, hdrs, SHCA_TMH_BYTES + SHCA_RVH_BYTES);
	iop->inl[0] = SHCA_TMH_FIN;
	iop->hdr.opcode = SHCA_OP_SEND;
	iop->hdr.flags = SHCA_WQE_F_INLINE | SHCA_WQE_F_FENCE;
	iop->hdr.inline_len = SHCA_TMH_BYTES + SHCA_RVH_BYTES;
	iop->done = shca_tm_rndv_fin_done;
}

/*
 * A matched rendezvous: report the match and prepare READ and FIN, which
 * shca_tm_rx_rndv_go() queues once the request is acknowledged.  @r was
 * allocated before the match.  Context: RQ engine.
 */
static void shca_tm_rndv_prepare(struct shca_qp *qp, struct shca_srq *srq,
				 struct shca_tm_rndv *r, struct shca_tm_tag *t,
				 const u8 *hdrs)
{
	const struct shca_tmh *tmh = (const struct shca_tmh *)hdrs;
	const struct shca_rvh *rvh = (const void *)(hdrs + SHCA_TMH_BYTES);
	struct shca_cqe cqe;

	r->srq = srq;
	r->wr_id = t->wr_id;
	r->handle = shca_tm_handle(&srq->tm->list, t);
	r->len = be32_to_cpu(rvh->len);
	refcount_set(&r->refs, 2);
	shca_tm_rndv_read_init(r, t, rvh, srq->ibsrq.pd);
	shca_tm_rndv_fin_init(r, hdrs);

	shca_tm_cqe_init(srq, &cqe, SHCA_WC_TM_RECV, IB_WC_SUCCESS);
	cqe.wr_id = r->wr_id;
	cqe.tm_flags = SHCA_CQE_TM_F_MATCH;
	cqe.tm_tag = be64_to_cpu(tmh->tag);
	cqe.tm_app_ctx = be32_to_cpu(tmh->app_ctx);
	shca_tm_post_tag(qp, srq, &cqe);
	qp->resp.tm_rndv = r;
}

/**
 * shca_tm_rx_rndv_go - start the READ and FIN of a matched rendezvous
 * @qp: RC QP of a TM SRQ, whose responder just executed the request
 *
 * Called after the request's ACK went out, so that the sender sees its
 * SEND acknowledged before the READ and the FIN arrive.
 * Context: RQ engine.
 */
void shca_tm_rx_rndv_go(struct shca_qp *qp)
{
	struct shca_tm_rndv *r = qp->resp.tm_rndv;

	qp->resp.tm_rndv = NULL;
	if (shca_req_post_iop(qp, &r->read)) {
		/* the QP is going away: nothing will run, report it */
		shca_tm_rndv_read_done(qp, &r->read, IB_WC_WR_FLUSH_ERR);
		shca_tm_rndv_fin_done(qp, &r->fin, IB_WC_WR_FLUSH_ERR);
		return;
	}
	/* the READ may retire meanwhile: its reference is its own */
	if (shca_req_post_iop(qp, &r->fin))
		shca_tm_rndv_fin_done(qp, &r->fin, IB_WC_WR_FLUSH_ERR);
}

/*
 * A matched rendezvous whose length the tag's buffer cannot hold: the
 * buffer gets the request itself (as much as fits) and software takes
 * over.  Context: RQ engine.
 */
static void shca_tm_rndv_incomplete(struct shca_qp *qp, struct shca_srq *srq,
				    struct shca_tm_tag *t, const u8 *payload,
				    u32 len)
{
	const struct shca_tmh *tmh = (const struct shca_tmh *)payload;
	struct shca_sge_cursor cur = {
		.sdev = shca_tm_sdev(srq),
		.pd = srq->ibsrq.pd,
		.sge = t->sge,
		.num_sge = t->num_sge,
	};
	u16 handle = shca_tm_handle(&srq->tm->list, t);
	u32 n = min(len, t->len);
	struct shca_cqe cqe;
	u8 status;

	shca_stat_inc(shca_tm_sdev(srq), SHCA_STAT_TM_RNDV_INCOMPLETE);
	status = shca_cursor_copy(&cur, (void *)payload, n, true) ?
		 IB_WC_LOC_PROT_ERR : SHCA_WC_TM_RNDV_INCOMPLETE;
	shca_tm_cqe_init(srq, &cqe, SHCA_WC_TM_RECV, status);
	cqe.wr_id = t->wr_id;
	cqe.byte_len = n;
	cqe.tm_flags = SHCA_CQE_TM_F_MATCH | SHCA_CQE_TM_F_DATA_VALID |
		       SHCA_CQE_TM_F_RELEASE;
	cqe.tm_handle = handle;
	cqe.tm_tag = be64_to_cpu(tmh->tag);
	cqe.tm_app_ctx = be32_to_cpu(tmh->app_ctx);
	shca_tm_release_handle(srq, handle);
	shca_tm_post_tag(qp, srq, &cqe);
}

/* A matched tag's buffer is the message's receive WQE.  Context: RQ engine. */
static void shca_tm_take_tag(struct shca_qp *qp, struct shca_srq *srq,
			     struct shca_tm_tag *t)
{
	struct shca_resp *resp = &qp->resp;

	resp->wqe->hdr.wr_id = t->wr_id;
	resp->wqe->hdr.num_sge = t->num_sge;
	memcpy(resp->wqe->sge, t->sge, t->num_sge * sizeof(t->sge[0]));
	resp->tm_kind = SHCA_TM_RX_EAGER;
	resp->tm_handle = shca_tm_handle(&srq->tm->list, t);
}

/* A multi-packet eager message matched: say so now.  Context: RQ engine. */
static void shca_tm_rx_match(struct shca_qp *qp, struct shca_srq *srq)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_cqe cqe;

	shca_tm_cqe_init(srq, &cqe, SHCA_WC_TM_RECV, IB_WC_SUCCESS);
	cqe.wr_id = resp->wqe->hdr.wr_id;
	cqe.tm_flags = SHCA_CQE_TM_F_MATCH;
	cqe.tm_tag = resp->tm_tag;
	cqe.tm_app_ctx = resp->tm_app_ctx;
	shca_tm_post_tag(qp, srq, &cqe);
	resp->tm_match_sent = true;
}

/*
 * Match the tagged message (or not) and take what it lands in, in one
 * srq->lock hold.  A message that matches nothing takes an ordinary WQE
 * and counts as unexpected only if there is one.
 * Return: the tag (BUSY) or NULL; *err as shca_srq_pop() when NULL.
 * Context: RQ engine.
 */
static struct shca_tm_tag *shca_tm_match_or_pop(struct shca_qp *qp,
						struct shca_srq *srq, u64 tag,
						int *err)
{
	struct shca_tm_list *l = &srq->tm->list;
	struct shca_tm_tag *t;
	unsigned long flags;
	int ev = -1;

	spin_lock_irqsave(&srq->lock, flags);
	t = shca_tm_match(l, tag);
	if (!t) {
		*err = shca_srq_pop_locked(srq, qp->resp.wqe, &ev);
		if (!*err) {
			shca_tm_unexpected(l);
			qp->resp.tm_sync_req = shca_tm_unexp_sync_req(l);
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	shca_srq_raise(srq, ev);
	return t;
}

static int shca_tm_rx_plain(struct shca_qp *qp, struct shca_srq *srq,
			    enum shca_tm_rx_kind kind)
{
	int err = shca_srq_pop(srq, qp->resp.wqe);

	if (!err)
		qp->resp.tm_kind = kind;
	return err;
}

/* A tagged message: eager or rendezvous.  Context: RQ engine. */
static int shca_tm_rx_tagged(struct shca_qp *qp, struct shca_srq *srq,
			     const u8 *payload, u32 len,
			     enum shca_tm_class cls)
{
	const struct shca_tmh *tmh = (const struct shca_tmh *)payload;
	struct shca_resp *resp = &qp->resp;
	struct shca_tm_rndv *r = NULL;
	struct shca_tm_tag *t;
	int err = 0;

	if (cls == SHCA_TMC_RNDV) {
		r = kzalloc(sizeof(*r), GFP_KERNEL);
		if (!r)
			return -ENOMEM;
	}
	resp->tm_sync_req = false;
	t = shca_tm_match_or_pop(qp, srq, be64_to_cpu(tmh->tag), &err);
	if (!t) {
		kfree(r);
		if (!err) {
			resp->tm_kind = SHCA_TM_RX_UNEXP;
			shca_stat_inc(shca_tm_sdev(srq), SHCA_STAT_TM_UNEXPECTED);
		}
		return err;
	}
	shca_stat_inc(shca_tm_sdev(srq), SHCA_STAT_TM_MATCHED);
	resp->tm_tag = be64_to_cpu(tmh->tag);
	resp->tm_app_ctx = be32_to_cpu(tmh->app_ctx);
	if (cls == SHCA_TMC_EAGER) {
		shca_tm_take_tag(qp, srq, t);
		resp->tm_skip = SHCA_TMH_BYTES;
		return 0;
	}
	if (be32_to_cpu(((const struct shca_rvh *)(tmh + 1))->len) > t->len) {
		kfree(r);
		shca_tm_rndv_incomplete(qp, srq, t, payload, len);
	} else {
		shca_tm_rndv_prepare(qp, srq, r, t, payload);
	}
	return 1;
}

/**
 * shca_tm_rx_first - the first packet of a SEND to a QP of a TM SRQ
 * @qp: RC QP attached to @srq
 * @srq: its TM SRQ
 * @payload: the packet's payload
 * @len: its length
 * @only: the message is this one packet
 *
 * Classifies the message, matches it and sets up qp->resp (wqe,
 * wqe_valid, tm_*) for the packets to come.
 * Context: RQ engine.
 * Return: 0 if the message goes to resp->wqe (after resp->tm_skip bytes),
 * 1 if it is handled entirely (a matched rendezvous: its READ and FIN
 * wait in resp->tm_rndv for shca_tm_rx_rndv_go()), -ENOENT if there is
 * nothing to receive it into (RNR), -ENOMEM (RNR too), -EBADMSG if the
 * ordinary WQE it took is malformed (in resp->wqe with no SGEs, for a
 * completion in error: shca_rwqe_pop()), -EIO if the SRQ's ring is broken.
 */
int shca_tm_rx_first(struct shca_qp *qp, struct shca_srq *srq,
		     const u8 *payload, u32 len, bool only)
{
	struct shca_resp *resp = &qp->resp;
	enum shca_tm_class cls;
	int err;

	cls = shca_tm_classify(payload, len, only, SHCA_TM_MAX_RNDV_HDR);
	resp->tm_kind = SHCA_TM_RX_NONE;
	resp->tm_skip = 0;
	resp->tm_match_sent = false;
	switch (cls) {
	case SHCA_TMC_PLAIN:
		err = shca_tm_rx_plain(qp, srq, SHCA_TM_RX_PLAIN);
		if (!err)
			shca_stat_inc(shca_tm_sdev(srq), SHCA_STAT_TM_MALFORMED);
		return err;
	case SHCA_TMC_NO_TAG:
		err = shca_tm_rx_plain(qp, srq, SHCA_TM_RX_NO_TAG);
		if (!err)
			shca_stat_inc(shca_tm_sdev(srq), SHCA_STAT_TM_NO_TAG);
		return err;
	default:
		err = shca_tm_rx_tagged(qp, srq, payload, len, cls);
		if (err || only || resp->tm_kind != SHCA_TM_RX_EAGER)
			return err;
		/* a longer eager message: report the match now */
		shca_tm_rx_match(qp, srq);
		return 0;
	}
}

/**
 * shca_tm_rx_complete - finish the completion of a TM SRQ message
 * @qp: RC QP of a TM SRQ
 * @cqe: the receive completion rc_resp.c is about to post (its status,
 *	 length and immediate set)
 *
 * Gives it the TM opcode and flags of the message's kind and lets a
 * matched tag go (SHCA_CQE_TM_F_RELEASE), whatever the status.
 * Context: RQ engine.
 */
void shca_tm_rx_complete(struct shca_qp *qp, struct shca_cqe *cqe)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_srq *srq = shca_rq_srq(qp);
	enum shca_tm_rx_kind kind = resp->tm_kind;

	resp->tm_kind = SHCA_TM_RX_NONE;
	switch (kind) {
	case SHCA_TM_RX_NONE:
	case SHCA_TM_RX_PLAIN:
		return;
	case SHCA_TM_RX_NO_TAG:
		cqe->opcode = SHCA_WC_TM_NO_TAG;
		break;
	case SHCA_TM_RX_UNEXP:
		cqe->opcode = SHCA_WC_TM_RECV;
		if (resp->tm_sync_req)
			cqe->tm_flags = SHCA_CQE_TM_F_SYNC_REQ;
		break;
	case SHCA_TM_RX_EAGER:
		shca_tm_release_handle(srq, resp->tm_handle);
		cqe->opcode = SHCA_WC_TM_RECV;
		cqe->tm_handle = resp->tm_handle;
		cqe->tm_flags = SHCA_CQE_TM_F_DATA_VALID | SHCA_CQE_TM_F_RELEASE;
		if (!resp->tm_match_sent) {
			cqe->tm_flags |= SHCA_CQE_TM_F_MATCH;
			cqe->tm_tag = resp->tm_tag;
			cqe->tm_app_ctx = resp->tm_app_ctx;
		}
		break;
	}
	cqe->flags |= SHCA_CQE_F_TM;
	cqe->tm_srqn = srq->srqn;
}
