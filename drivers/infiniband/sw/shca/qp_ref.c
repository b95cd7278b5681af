// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: QP references, engine queueing and the engines' error transitions.
 *
 * Lifetime: a QP is found by QPN in sdev->qps (lookups take a reference
 * under the xarray lock).  Every engine work item runs with a reference
 * of its own (shca_qp_queue()).  An engine that meets an error moves its
 * QP to the error state here; qp.c's destroy waits until every reference
 * is gone.
 */
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "shca_trace.h"

/*
 * Runs the per-QP engines (SQ and RQ work items); the module allocates
 * and destroys it (main.c).
 */
struct workqueue_struct *shca_wq;

static void shca_qp_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_qp, ref)->freed);
}

/* Context: any. */
struct shca_qp *shca_qp_get(struct shca_dev *sdev, u32 qpn)
{
	unsigned long flags;
	struct shca_qp *qp;

	xa_lock_irqsave(&sdev->qps, flags);
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !kref_get_unless_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&sdev->qps, flags);
	return qp;
}

/* Context: any. */
void shca_qp_put(struct shca_qp *qp)
{
	kref_put(&qp->ref, shca_qp_release);
}

/**
 * shca_qp_queue - queue one of the QP's engines with a reference for it
 * @qp: QP; the caller holds a reference
 * @work: qp->sq_work or qp->rq_work
 *
 * The work function drops the reference when it is done.
 * Context: any.
 */
void shca_qp_queue(struct shca_qp *qp, struct work_struct *work)
{
	kref_get(&qp->ref);
	shca_qp_queue_held(qp, work);
}

/**
 * shca_qp_queue_held - queue one of the QP's engines with a reference
 *	the caller took for it
 * @qp: QP
 * @work: qp->sq_work or qp->rq_work
 *
 * For a caller that hands an skb, and the QP reference it holds, to one
 * of the QP's queues: an engine run may consume the skb and drop that
 * reference (perhaps the QP's last: destroy waits for it) as soon as it
 * is queued, so the engine's reference is taken before, and keeps the QP
 * alive until the work is queued.
 * Context: any.
 */
void shca_qp_queue_held(struct shca_qp *qp, struct work_struct *work)
{
	if (!queue_work(shca_wq, work))
		shca_qp_put(qp);	/* already queued, with its own ref */
}

void shca_qp_kick(struct shca_qp *qp)
{
	shca_qp_queue(qp, &qp->sq_work);
	shca_qp_queue(qp, &qp->rq_work);
}

/**
 * shca_qp_set_error - move the QP to the error state from an engine
 * @qp: QP
 *
 * Both engines then flush what is posted.  A QP that its consumer moved to
 * RESET while the engine was deciding stays in RESET: the error belongs to
 * the life that modify_qp ended, and the consumer's next RESET->INIT must
 * not find the QP in ERR.
 * Context: process (an engine work item), may sleep.
 */
void shca_qp_set_error(struct shca_qp *qp)
{
	enum ib_qp_state was;

	mutex_lock(&qp->state_lock);
	was = qp->state;
	if (was != IB_QPS_RESET && was != IB_QPS_ERR) {
		trace_shca_qp_state(qp, was, IB_QPS_ERR);
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	}
	mutex_unlock(&qp->state_lock);
	if (was == IB_QPS_ERR || was == IB_QPS_RESET)
		return;
	shca_qp_stat_inc(qp, SHCA_STAT_QP_FATAL);
	/*
	 * Only on the transition: an engine that meets a broken ring calls
	 * us again, and kicking it again would spin it forever.
	 */
	shca_qp_kick(qp);
}

/**
 * shca_qp_fatal - a work queue of @qp is broken beyond completing a WQE
 * @qp: QP whose own SQ or RQ ring holds an impossible producer index
 *
 * A local work queue catastrophic error: the QP moves to the error state
 * and its consumer gets IB_EVENT_QP_FATAL, once per stay in that state
 * (there is no WQE to carry an error completion).
 * Context: process (an engine work item), may sleep.
 */
void shca_qp_fatal(struct shca_qp *qp)
{
	struct ib_qp *ibqp = &qp->ibqp;
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = IB_EVENT_QP_FATAL,
	};
	bool first;

	mutex_lock(&qp->state_lock);
	if (qp->state == IB_QPS_RESET) {
		/* reset meanwhile, as in shca_qp_set_error() */
		mutex_unlock(&qp->state_lock);
		return;
	}
	first = !qp->fatal_sent;
	qp->fatal_sent = true;
	mutex_unlock(&qp->state_lock);
	shca_qp_set_error(qp);
	if (first && ibqp->event_handler) {
		trace_shca_async(&ev, ibqp->qp_num);
		ibqp->event_handler(&ev, ibqp->qp_context);
	}
}
