// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: receive WQEs leaving their rings.
 *
 * Every receive WQE a consumer takes leaves its ring through
 * shca_rwqe_pop(), which copies it out of the producer's mapping and
 * checks it there, once: a QP's RQ (the RX engine, rx_engine.c, and the
 * responder, rc_resp.c), an SRQ (shca_srq_pop(), also for tag matching,
 * tm.c) and a WQ (rwq.c).  Kernel consumers' receive WRs enter a ring
 * through shca_rwqe_push().  Also here: which RQ or SRQ, PD and CQ a
 * QP's receives use.
 */
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "shca_trace.h"
#include "rwqe.h"
#include "rq_logic.h"

/**
 * shca_rwqe_pop - copy and check the receive WQE at a ring's consumer index
 * @ring: an RQ, SRQ or WQ ring; its single consumer is the caller
 * @w: filled with a private copy of the WQE
 * @left: set to the number of WQEs left in the ring
 * @max_sge: the scatter limit of the ring's queue, as created
 *
 * The ring is mapped by its producer, so the WQE is checked here, once,
 * where it leaves the ring (rq_logic.h): its SGE count against @max_sge
 * (and SHCA_MAX_SGE, what @w holds), the sum of its lengths against 32
 * bits.  A WQE that fails is consumed all the same: @w gets its wr_id and
 * no SGEs, and the caller completes it with IB_WC_LOC_QP_OP_ERR, as the
 * verbs give a malformed receive WQE (a local QP operation error).
 * Context: the ring's consumer: the RQ engine for an RQ, srq->lock held
 * for an SRQ, rwq->lock held for a WQ; does not sleep.
 * Return: 0, -EBADMSG for a malformed WQE (taken), -ENOENT if the ring is
 * empty, -EIO if it is broken.
 */
int shca_rwqe_pop(struct shca_ring *ring, struct shca_rwqe *w, u32 *left,
		  u32 max_sge)
{
	const void *slot;
	int err = 0;
	u32 prod;

	/* pairs with the producer's release of prod after writing WQEs */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (!shca_ring_idx_valid(prod, ring->kcons, ring->entries))
		return -EIO;
	if (prod == ring->kcons)
		return -ENOENT;
	slot = shca_ring_entry(ring, ring->kcons);
	memcpy(&w->hdr, slot, sizeof(w->hdr));
	if (shca_rwqe_num_sge_ok(w->hdr.num_sge, max_sge, SHCA_MAX_SGE)) {
		memcpy(w->sge, slot + sizeof(w->hdr),
		       w->hdr.num_sge * sizeof(w->sge[0]));
		if (!shca_rwqe_len_ok(w->sge, w->hdr.num_sge))
			err = -EBADMSG;
	} else {
		err = -EBADMSG;
	}
	if (err)
		w->hdr.num_sge = 0;
	ring->kcons++;
	*left = shca_ring_count(prod, ring->kcons);
	/* the WQE is copied out before its slot is handed back */
	smp_store_release(&ring->ctl->cons, ring->kcons);
	return err;
}

/**
 * shca_rwqe_push - write a kernel receive WR at a ring's producer index
 * @ring: a kernel RQ or SRQ ring; the caller holds its producer lock
 * @wr: the work request
 * @max_sge: the queue's scatter limit
 *
 * The caller publishes ring->kprod once it is done.
 * Context: any, does not sleep.
 * Return: 0, -EINVAL for a bad SGE count, -ENOMEM if the ring is full,
 * -EIO if it is broken.
 */
int shca_rwqe_push(struct shca_ring *ring, const struct ib_recv_wr *wr,
		   u32 max_sge)
{
	struct shca_recv_wqe *wqe;
	u32 cons;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	/* pairs with the consumer's release of cons: slots are free */
	cons = smp_load_acquire(&ring->ctl->cons);
	if (!shca_ring_idx_valid(ring->kprod, cons, ring->entries))
		return -EIO;
	if (shca_ring_idx_full(ring->kprod, cons, ring->entries))
		return -ENOMEM;

	wqe = shca_ring_entry(ring, ring->kprod);
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved_96 = 0;
	shca_wqe_put_sges((struct shca_sge *)(wqe + 1), wr->sg_list,
			  wr->num_sge);
	ring->kprod++;
	return 0;
}

/**
 * shca_rq_srq - the SRQ @qp receives from now
 * @qp: QP
 *
 * An XRC target's is the one the packet in hand names (qp->resp.xsrq,
 * referenced for that packet; NULL if it named none of its domain).
 * Context: RQ engine.
 * Return: the SRQ, or NULL for a QP with an RQ of its own.
 */
struct shca_srq *shca_rq_srq(struct shca_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return qp->resp.xsrq;
	return qp->ibqp.srq ? to_ssrq(qp->ibqp.srq) : NULL;
}

/*
 * Take the next receive WQE of @qp, from its RQ or its SRQ.
 * Return: 0, -EBADMSG if it is malformed (taken: its wr_id is in @w, to
 * complete with IB_WC_LOC_QP_OP_ERR), -ENOENT if there is none, -EIO if
 * the ring is broken (or an XRC target has no SRQ at hand).
 * Context: RQ engine.
 */
int shca_rq_pop(struct shca_qp *qp, struct shca_rwqe *w)
{
	struct shca_srq *srq = shca_rq_srq(qp);
	u32 left;

	if (srq)
		return shca_srq_pop(srq, w);
	if (!qp->rq.ring.ctl)
		return -EIO;
	return shca_rwqe_pop(&qp->rq.ring, w, &left, qp->rq.max_sge);
}

/*
 * The ring @qp receives from is broken (an impossible producer index).
 * Its own RQ is a local work queue catastrophic error (IB_EVENT_QP_FATAL);
 * a broken SRQ has raised IB_EVENT_SRQ_ERR, and the QP just stops.
 * Context: RQ engine.
 */
void shca_rq_broken(struct shca_qp *qp)
{
	if (shca_rq_srq(qp))
		shca_qp_set_error(qp);
	else
		shca_qp_fatal(qp);
}

/*
 * The PD receive buffers are checked against: an SRQ's WQEs are the
 * SRQ's, so its own PD.  That is also the PD an XRC target checks R_Keys
 * against; it has none of its own (NULL, which matches no MR).
 * Context: RQ engine.
 */
struct ib_pd *shca_rq_pd(struct shca_qp *qp)
{
	struct shca_srq *srq = shca_rq_srq(qp);

	return srq ? srq->ibsrq.pd : qp->ibqp.pd;
}

/**
 * shca_qp_rpd - the PD that remote accesses to @qp are checked against
 * @qp: QP
 *
 * Its own, but for an XRC target, which has none: the PD of the XRC SRQ
 * the request in hand names (shca_rq_pd()), and none (NULL, matching no
 * MR or window) without one.
 * Context: the QP's engines.
 */
struct ib_pd *shca_qp_rpd(struct shca_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return shca_rq_pd(qp);
	return qp->ibqp.pd;
}

/*
 * The CQ receive completions of @qp go to: an XRC SRQ's own, and a TM
 * SRQ's own.
 * Context: RQ engine.
 */
struct shca_cq *shca_rq_cq(struct shca_qp *qp)
{
	struct shca_srq *srq = shca_rq_srq(qp);

	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return srq ? to_scq(srq->ibsrq.ext.cq) : NULL;
	if (srq && srq->tm)
		return to_scq(srq->ibsrq.ext.cq);
	return to_scq(qp->ibqp.recv_cq);
}

static void shca_srq_event(struct shca_srq *srq, enum ib_event_type type)
{
	struct ib_srq *ibsrq = &srq->ibsrq;
	struct ib_event ev = {
		.device = ibsrq->device,
		.element.srq = ibsrq,
		.event = type,
	};

	trace_shca_async(&ev, srq->srqn);
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
	/* a malformed WQE (-EBADMSG) was taken all the same */
	if ((err && err != -EBADMSG) || !srq->limit || left >= srq->limit)
		return -1;
	srq->limit = 0;
	return IB_EVENT_SRQ_LIMIT_REACHED;
}

/**
 * shca_srq_pop_locked - shca_srq_pop() inside a srq->lock hold
 * @srq: the SRQ
 * @w: filled with a private copy of the WQE
 * @ev: the event the pop raises (for shca_srq_raise() after the unlock),
 *	or -1
 *
 * Context: as shca_srq_pop(); srq->lock held.
 * Return: as shca_srq_pop().
 */
int shca_srq_pop_locked(struct shca_srq *srq, struct shca_rwqe *w, int *ev)
{
	u32 left = 0;
	int err;

	lockdep_assert_held(&srq->lock);
	err = shca_rwqe_pop(&srq->ring, w, &left, srq->max_sge);
	*ev = shca_srq_pop_event(srq, err, left);
	return err;
}

/* Raise what shca_srq_pop_locked() found, if anything.  Context: any. */
void shca_srq_raise(struct shca_srq *srq, int ev)
{
	if (ev >= 0)
		shca_srq_event(srq, ev);
}

/**
 * shca_srq_pop - take the next receive WQE of an SRQ
 * @srq: the SRQ of the calling QP
 * @w: filled with a private copy of the WQE
 *
 * Context: RQ engine of an attached QP (or of an XRC target QP holding a
 * reference), process context; takes srq->lock.
 * Return: 0, -EBADMSG if the WQE is malformed (taken: complete its wr_id
 * with IB_WC_LOC_QP_OP_ERR, shca_rwqe_pop()), -ENOENT if the SRQ is
 * empty, -EIO if its ring is broken.
 */
int shca_srq_pop(struct shca_srq *srq, struct shca_rwqe *w)
{
	unsigned long flags;
	int err, ev;

	spin_lock_irqsave(&srq->lock, flags);
	err = shca_srq_pop_locked(srq, w, &ev);
	spin_unlock_irqrestore(&srq->lock, flags);
	shca_srq_raise(srq, ev);
	return err;
}
