// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: completion queues.
 *
 * A CQ is a ring of struct shca_cqe.  The kernel (the engines) is
 * the only producer and keeps its producer index in ring.kprod.  The
 * consumer is userspace for user CQs and shca_poll_cq() for kernel CQs
 * (ring.kcons).  A user CQ's consumer index is read from shared memory
 * and never trusted.
 *
 * Arming: ib_req_notify_cq() (kernel ULPs, and user CQs of providers
 * that make the system call) sets cq->notify.  A user CQ is also armed
 * through the arm word of its mapped ctl (shca-abi.h): every CQE write
 * publishes prod, issues a full barrier and drains a non-zero word into
 * cq->notify (shca_cq_take_arm()), so an arm racing with a CQE write is
 * either seen by that write or followed by a poll that sees the CQE.
 *
 * Events: a completion that matches the armed state (NEXT_COMP or
 * SOLICITED) is counted in mod_pending.  With no moderation the event is
 * raised at once; with modify_cq() it is raised when mod_count such
 * completions have accumulated since the last event, or mod_period usec
 * after the first of them (mod_timer), whichever comes first.  Raising
 * disarms the CQ; comp_handler is then called once cq->lock is dropped:
 *  - inline, in the raiser's context (shca_cq_deliver()), when the
 *    handler is uverbs' (user CQs) or ib_core's own (ib_alloc_cq() CQs
 *    polled from softirq or a workqueue).  These only queue the event or
 *    schedule the poller and never call back into shca, so whatever lock
 *    the raiser holds cannot deadlock them.  The raisers are the engines
 *    through shca_cq_post() (process context; the SQ engine holds the
 *    qp->sq_engine mutex, rwq.c holds rwq->lock with IRQs off, tm.c may
 *    hold srq->lock or tm->ops_lock), modify_cq() (process) and
 *    mod_timer (softirq).  Softirqs raised by the handler (irq_poll) run
 *    as it returns only when the raiser is preemptible, i.e. holds no
 *    spinlock: softirq code takes no shca mutex;
 *  - through comp_work on the completion vector's CPU for any other
 *    handler (ib_create_cq() consumers, IB_POLL_DIRECT), which may poll,
 *    arm or post from inside and so must not run under a caller's lock.
 * Destroy stops the timer and the work and waits for inline calls (the
 * CQ is idle by then: ib_core refuses to destroy a CQ a QP uses), so no
 * handler runs once destroy_cq returns.
 */
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/wait_bit.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "shca_trace.h"
#include "cq_logic.h"

/*
 * Runs the completion events (shca_cq_comp_work()); the module allocates
 * and destroys it (main.c).
 */
struct workqueue_struct *shca_comp_wq;

static int shca_cq_check_cqe(struct ib_device *ibdev, int cqe)
{
	if (cqe < 1 || cqe > SHCA_MAX_CQE) {
		ibdev_dbg(ibdev, "cq: cqe %d out of range 1..%u\n", cqe,
			  SHCA_MAX_CQE);
		return -EINVAL;
	}
	return 0;
}

static int shca_cq_check(struct shca_dev *sdev,
			 const struct ib_cq_init_attr *attr,
			 struct ib_udata *udata)
{
	struct ib_device *ibdev = &sdev->ibdev;
	struct shca_create_cq_req req;
	int err;

	err = shca_udata_get_req(ibdev, udata, &req, sizeof(req),
				 udata ? offsetofend(typeof(req), comp_mask) : 0);
	if (!err)
		err = shca_udata_check_cmd(ibdev, "create_cq", req.comp_mask, 0,
					   req.reserved_32);
	if (err)
		return err;
	if (attr->flags) {
		ibdev_dbg(ibdev, "cq: unsupported flags %#x\n", attr->flags);
		return -EOPNOTSUPP;
	}
	if (attr->comp_vector >= ibdev->num_comp_vectors) {
		ibdev_dbg(ibdev, "cq: comp_vector %u >= %d\n",
			  attr->comp_vector, ibdev->num_comp_vectors);
		return -EINVAL;
	}
	return shca_cq_check_cqe(ibdev, attr->cqe);
}

static int shca_cq_reply(struct shca_dev *sdev, struct shca_cq *cq,
			 struct ib_udata *udata)
{
	struct shca_create_cq_resp resp = {};

	if (!udata)
		return 0;
	resp.comp_mask = SHCA_CREATE_CQ_RESP_CMASK_ARM;
	resp.cqn = cq->cqn;
	shca_ring_fill_info(&cq->ring, &resp.ring);
	return shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
}

static int shca_cq_alloc_cqn(struct shca_dev *sdev, struct shca_cq *cq)
{
	int err;

	if (atomic_inc_return(&sdev->num_cq) > SHCA_MAX_CQ) {
		ibdev_dbg(&sdev->ibdev, "cq: limit %u reached\n", SHCA_MAX_CQ);
		atomic_dec(&sdev->num_cq);
		return -ENOMEM;
	}
	err = xa_alloc_cyclic(&sdev->cqs, &cq->cqn, NULL, xa_limit_31b,
			      &sdev->next_cqn, GFP_KERNEL);
	if (err < 0) {
		atomic_dec(&sdev->num_cq);
		return err;
	}
	return 0;
}

static void shca_cq_free_cqn(struct shca_dev *sdev, struct shca_cq *cq)
{
	xa_erase(&sdev->cqs, cq->cqn);
	atomic_dec(&sdev->num_cq);
}

static void shca_cq_comp_work(struct work_struct *work);
static enum hrtimer_restart shca_cq_mod_timer(struct hrtimer *timer);

/*
 * Completion vector @vector is the @vector-th online CPU (there are
 * num_online_cpus() vectors as of registration; a CPU that has gone
 * since falls back to the first online one).
 */
static int shca_cq_vector_cpu(u32 vector)
{
	unsigned int cpu, i = 0;

	for_each_online_cpu(cpu)
		if (i++ == vector)
			return cpu;
	return cpumask_first(cpu_online_mask);
}

static void shca_cq_init_events(struct shca_cq *cq, u32 vector)
{
	cq->comp_cpu = shca_cq_vector_cpu(vector);
	INIT_WORK(&cq->comp_work, shca_cq_comp_work);
	atomic_set(&cq->handlers, 0);
	hrtimer_init(&cq->mod_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	cq->mod_timer.function = shca_cq_mod_timer;
}

int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   SHCA_CREATE_CQ_ARG *arg)
{
	struct ib_udata *udata = shca_create_cq_udata(arg);
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct shca_cq *cq = to_scq(ibcq);
	int err;

	err = shca_cq_check(sdev, attr, udata);
	if (err)
		goto err_out;
	err = shca_cq_alloc_cqn(sdev, cq);
	if (err)
		goto err_out;
	spin_lock_init(&cq->lock);
	shca_cq_init_events(cq, attr->comp_vector);
	cq->user = !!udata;
	err = shca_ring_alloc(&cq->ring, sdev->dma_dev,
			      roundup_pow_of_two(attr->cqe), SHCA_CQE_SHIFT,
			      shca_udata_uctx(udata));
	if (err)
		goto err_free_cqn;
	ibcq->cqe = cq->ring.entries;
	err = shca_cq_reply(sdev, cq, udata);
	if (err)
		goto err_free_ring;
	xa_store(&sdev->cqs, cq->cqn, cq, GFP_KERNEL);
	return 0;

err_free_ring:
	shca_ring_free(&cq->ring);
err_free_cqn:
	shca_cq_free_cqn(sdev, cq);
err_out:
	shca_stat_inc(sdev, SHCA_STAT_CREATE_CQ_ERR);
	return err;
}

/* Wait for comp_handler calls in the raisers' context to return. */
static void shca_cq_wait_handlers(struct shca_cq *cq)
{
	wait_var_event(&cq->handlers, !atomic_read(&cq->handlers));
}

/*
 * Context: process.  No QP uses the CQ any more; stop the moderation
 * timer, the event work and inline handlers before the CQ's memory goes
 * away.
 */
int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct shca_cq *cq = to_scq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->dying = true;		/* nothing re-arms the timer or work */
	spin_unlock_irqrestore(&cq->lock, flags);
	hrtimer_cancel(&cq->mod_timer);
	cancel_work_sync(&cq->comp_work);
	shca_cq_wait_handlers(cq);
	shca_cq_free_cqn(sdev, cq);
	shca_ring_free(&cq->ring);
	return 0;
}

/* Consumer index; for a user CQ it comes from shared memory. */
static u32 shca_cq_cons(struct shca_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	if (cq->user) {
		/* pairs with userspace's release of cons after reading CQEs */
		return smp_load_acquire(&cq->ring.ctl->cons);
	}
	return cq->ring.kcons;
}

/* Merge an arm request into cq->notify; NEXT_COMP wins.  cq->lock held. */
static void shca_cq_arm(struct shca_cq *cq, enum ib_cq_notify_flags how)
{
	lockdep_assert_held(&cq->lock);
	cq->notify = shca_cq_arm_merge(cq->notify, how);
}

/*
 * Take the arm request a user CQ's provider left in @ctl->arm (shca-abi.h)
 * into cq->notify.  The word is user memory: only "armed or not" and
 * "solicited only or not" are read from it, and it is read once.  A
 * kernel CQ has no arm word.  cq->lock held.
 */
static void shca_cq_take_arm(struct shca_cq *cq, struct shca_ring_ctl *ctl)
{
	u32 arm;

	lockdep_assert_held(&cq->lock);
	if (!cq->user || !(READ_ONCE(ctl->arm) & SHCA_CQ_ARM_MASK))
		return;
	arm = xchg(&ctl->arm, 0);
	shca_cq_arm(cq, shca_cq_arm_word(arm));
}

/* Move unpolled CQEs of @cq to the start of @ring; cq->lock held. */
static int shca_cq_move(struct shca_cq *cq, struct shca_ring *ring)
{
	u32 prod = cq->ring.kprod;
	u32 cons = shca_cq_cons(cq);
	u32 n = shca_ring_count(prod, cons);
	u32 i;

	lockdep_assert_held(&cq->lock);
	if (!shca_ring_idx_valid(prod, cons, cq->ring.entries))
		return -EIO;
	if (n > ring->entries)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy(shca_ring_entry(ring, i),
		       shca_ring_entry(&cq->ring, cons + i),
		       sizeof(struct shca_cqe));
	ring->kprod = n;
	/* copied CQEs are visible before prod (the ring is not shared yet) */
	smp_store_release(&ring->ctl->prod, n);
	/* an arm in the old ring's word stays; the provider arms the new one */
	shca_cq_take_arm(cq, cq->ring.ctl);
	swap(cq->ring, *ring);
	return 0;
}

static int shca_resize_reply(struct shca_dev *sdev, struct shca_ring *ring,
			     struct ib_udata *udata)
{
	struct shca_resize_cq_resp resp = {};

	if (!udata)
		return 0;
	shca_ring_fill_info(ring, &resp.ring);
	return shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
}

static int shca_resize_check(struct shca_dev *sdev, int cqe,
			     struct ib_udata *udata)
{
	struct ib_device *ibdev = &sdev->ibdev;
	struct shca_resize_cq_req req;
	int err;

	err = shca_udata_get_req(ibdev, udata, &req, sizeof(req),
				 udata ? offsetofend(typeof(req), comp_mask) : 0);
	if (!err)
		err = shca_udata_check_cmd(ibdev, "resize_cq", req.comp_mask, 0,
					   req.reserved_32);
	return err ? err : shca_cq_check_cqe(ibdev, cqe);
}

/*
 * Resize: unpolled CQEs move to indices 0..n-1 of the new ring (prod = n,
 * cons = 0); fewer entries than unpolled CQEs is -EINVAL (as rxe).
 * Context: process.
 */
int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_ring ring = {};
	unsigned long flags;
	int err;

	err = shca_resize_check(sdev, cqe, udata);
	if (err)
		return err;
	err = shca_ring_alloc(&ring, sdev->dma_dev, roundup_pow_of_two(cqe),
			      SHCA_CQE_SHIFT, shca_udata_uctx(udata));
	if (err)
		return err;
	err = shca_resize_reply(sdev, &ring, udata);
	if (err)
		goto out_free;

	spin_lock_irqsave(&cq->lock, flags);
	err = shca_cq_move(cq, &ring);
	if (!err)
		ibcq->cqe = cq->ring.entries;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (err)
		ibdev_dbg(&sdev->ibdev, "cq %u: resize to %d failed %d\n",
			  cq->cqn, cqe, err);
out_free:
	shca_ring_free(&ring);	/* the old ring on success */
	return err;
}

static bool shca_cqe_status_ok(u8 status)
{
	return status <= IB_WC_GENERAL_ERR;
}

static bool shca_cqe_opcode_ok(u8 opcode)
{
	switch (opcode) {
	case IB_WC_SEND:
	case IB_WC_RDMA_WRITE:
	case IB_WC_RDMA_READ:
	case IB_WC_LOCAL_INV:
	case IB_WC_REG_MR:
	case IB_WC_RECV:
	case IB_WC_RECV_RDMA_WITH_IMM:
		return true;
	default:
		return false;
	}
}

static void shca_cqe_flags_to_wc(const struct shca_cqe *cqe, struct ib_wc *wc)
{
	wc->wc_flags = 0;
	if (cqe->flags & SHCA_CQE_F_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = (__force __be32)cqe->imm_data;
	} else if (cqe->flags & SHCA_CQE_F_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->imm_data;
	}
	if (cqe->flags & SHCA_CQE_F_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (wc->opcode & IB_WC_RECV) {
		wc->wc_flags |= IB_WC_WITH_SMAC | IB_WC_WITH_NETWORK_HDR_TYPE;
		memcpy(wc->smac, cqe->smac, ETH_ALEN);
		wc->network_hdr_type = cqe->network_hdr_type;
	}
}

/* Translate one CQE; the ring may have been written by a buggy engine. */
static void shca_cqe_to_wc(struct shca_dev *sdev, const struct shca_cqe *cqe,
			   struct ib_wc *wc)
{
	struct shca_qp *qp = xa_load(&sdev->qps, cqe->qp_num);

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	if (!shca_cqe_status_ok(cqe->status) ||
	    !shca_cqe_opcode_ok(cqe->opcode)) {
		ibdev_err_ratelimited(&sdev->ibdev, "cq: bad cqe %u/%u\n",
				      cqe->status, cqe->opcode);
		wc->status = IB_WC_GENERAL_ERR;
		wc->opcode = IB_WC_SEND;
	}
	wc->qp = qp ? &qp->ibqp : NULL;
	wc->byte_len = cqe->byte_len;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
	wc->port_num = 1;
	wc->vendor_err = cqe->vendor_err;
	shca_cqe_flags_to_wc(cqe, wc);
}

/*
 * Poll a kernel CQ.  Context: any, does not sleep.
 * Return: number of completions, or -EIO for a corrupt ring.
 */
int shca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_ring *ring = &cq->ring;
	unsigned long flags;
	u32 prod, cons;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	/* pairs with the producer's release of prod after writing CQEs */
	prod = smp_load_acquire(&ring->ctl->prod);
	cons = ring->kcons;
	if (!shca_ring_idx_valid(prod, cons, ring->entries)) {
		ibdev_err_ratelimited(&sdev->ibdev, "cq %u: broken ring\n",
				      cq->cqn);
		n = -EIO;
		goto out;
	}
	for (; n < num && cons != prod; n++, cons++)
		shca_cqe_to_wc(sdev, shca_ring_entry(ring, cons), &wc[n]);
	ring->kcons = cons;
	/* CQEs are read before the producer may reuse their slots */
	smp_store_release(&ring->ctl->cons, cons);
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * Arm the CQ.  Context: any, does not sleep.
 * Return: 1 if IB_CQ_REPORT_MISSED_EVENTS and CQEs are pending, else 0.
 */
int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct shca_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	u32 cons;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	shca_cq_arm(cq, flags & IB_CQ_SOLICITED_MASK);
	cons = shca_cq_cons(cq);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    !shca_ring_idx_empty(cq->ring.kprod, cons))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* Should a completion raise the armed event?  cq->lock held. */
static bool shca_cq_should_notify(struct shca_cq *cq, const struct shca_cqe *cqe,
				  bool solicited)
{
	lockdep_assert_held(&cq->lock);
	return shca_cq_notify_due(cq->notify, solicited, cqe->status);
}

/*
 * May comp_handler run in the raiser's context (see the top of this
 * file)?  uverbs' handler only queues the event and wakes the process;
 * ib_core's for ib_alloc_cq() CQs (they have cq->wc) only schedules the
 * poller, except IB_POLL_DIRECT's.
 */
static bool shca_cq_handler_inline(struct shca_cq *cq)
{
	struct ib_cq *ibcq = &cq->ibcq;

	return cq->user || (ibcq->wc && ibcq->poll_ctx != IB_POLL_DIRECT);
}

/*
 * Raise the completion event: disarm, and either queue comp_work on the
 * vector's CPU or have the caller call shca_cq_deliver() once it has
 * dropped cq->lock.  cq->lock held.
 * Return: true if the caller must call shca_cq_deliver().
 */
static bool shca_cq_raise(struct shca_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->notify = 0;
	cq->mod_pending = 0;
	/* a running callback finds nothing pending; never waits here */
	hrtimer_try_to_cancel(&cq->mod_timer);
	if (cq->dying || !cq->ibcq.comp_handler)
		return false;
	if (shca_cq_handler_inline(cq)) {
		atomic_inc(&cq->handlers);	/* destroy waits for it */
		return true;
	}
	if (cpu_online(cq->comp_cpu))
		queue_work_on(cq->comp_cpu, shca_comp_wq, &cq->comp_work);
	else
		queue_work(shca_comp_wq, &cq->comp_work);
	return false;
}

/*
 * Call comp_handler for an event shca_cq_raise() left to us.  A kernel
 * CQ's handler may raise a softirq (irq_poll): when we are preemptible
 * (no spinlock held, IRQs on) it runs as BHs are re-enabled, otherwise at
 * the next chance the kernel takes.
 * Context: process or softirq, cq->lock not held; any other lock of the
 * raiser may be held (the handlers never call back into shca).
 */
static void shca_cq_deliver(struct shca_cq *cq)
{
	struct ib_cq *ibcq = &cq->ibcq;

	if (!cq->user && preemptible()) {
		local_bh_disable();
		ibcq->comp_handler(ibcq, ibcq->cq_context);
		local_bh_enable();
	} else {
		ibcq->comp_handler(ibcq, ibcq->cq_context);
	}
	if (atomic_dec_and_test(&cq->handlers))
		wake_up_var(&cq->handlers);
}

/* Has the moderation threshold been reached?  cq->lock held. */
static bool shca_cq_mod_due(struct shca_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	if (!cq->mod_pending)
		return false;
	if (!cq->mod_count && !cq->mod_period)
		return true;
	return cq->mod_count && cq->mod_pending >= cq->mod_count;
}

/*
 * Account one event-worthy completion.  cq->lock held.
 * Return: true if the caller must call shca_cq_deliver().
 */
static bool shca_cq_moderate(struct shca_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->mod_pending++;
	if (shca_cq_mod_due(cq))
		return shca_cq_raise(cq);
	if (cq->mod_period && cq->mod_pending == 1 && !cq->dying)
		hrtimer_start(&cq->mod_timer,
			      ns_to_ktime((u64)cq->mod_period * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
	return false;
}

/*
 * cq_period expired since the first unreported completion.
 * Context: softirq (soft hrtimer).
 */
static enum hrtimer_restart shca_cq_mod_timer(struct hrtimer *timer)
{
	struct shca_cq *cq = container_of(timer, struct shca_cq, mod_timer);
	unsigned long flags;
	bool deliver = false;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->mod_pending)
		deliver = shca_cq_raise(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	/* destroy's hrtimer_cancel() waits for this too */
	if (deliver)
		shca_cq_deliver(cq);
	return HRTIMER_NORESTART;
}

/*
 * Deliver the completion event of a CQ whose handler does not run inline
 * (counted in cq_events_queued).
 * Context: process, a bound kworker of the completion vector's CPU
 * (shca_comp_wq), BHs disabled around the handler so softirq-based
 * pollers run on the way out.
 */
static void shca_cq_comp_work(struct work_struct *work)
{
	struct shca_cq *cq = container_of(work, struct shca_cq, comp_work);

	if (!cq->ibcq.comp_handler)
		return;
	shca_stat_inc(to_sdev(cq->ibcq.device), SHCA_STAT_CQ_EVENTS_QUEUED);
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/**
 * shca_cq_sync_events - wait for an event already raised on @cq
 * @cq: a CQ a QP being destroyed completed into
 *
 * ib_free_cq() stops its own polling before it calls destroy_cq, so an
 * event still queued then would re-arm polling on a dying CQ; QP
 * destroy drains it once the QP can produce no more completions.
 * Context: process, may sleep.
 */
void shca_cq_sync_events(struct shca_cq *cq)
{
	flush_work(&cq->comp_work);
	shca_cq_wait_handlers(cq);
}

/**
 * shca_modify_cq - set CQ moderation
 * @ibcq: the CQ
 * @cq_count: raise the event after this many completions (0: no limit)
 * @cq_period: ... or this many usec after the first one (0: no timer)
 *
 * Both zero turns moderation off.  Context: process.
 * Return: 0, or -EINVAL for a period above SHCA_MAX_CQ_MOD_PERIOD.
 */
int shca_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	struct shca_cq *cq = to_scq(ibcq);
	unsigned long flags;
	bool deliver = false;

	if (cq_period > SHCA_MAX_CQ_MOD_PERIOD) {
		ibdev_dbg(ibcq->device, "cq %u: cq_period %u > %u\n", cq->cqn,
			  cq_period, SHCA_MAX_CQ_MOD_PERIOD);
		return -EINVAL;
	}
	spin_lock_irqsave(&cq->lock, flags);
	cq->mod_count = cq_count;
	cq->mod_period = cq_period;
	if (shca_cq_mod_due(cq))
		deliver = shca_cq_raise(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	if (deliver)
		shca_cq_deliver(cq);
	return 0;
}

/* Write one CQE at the private producer index; cq->lock held. */
static int shca_cq_push(struct shca_cq *cq, const struct shca_cqe *cqe)
{
	struct shca_ring *ring = &cq->ring;
	u32 cons = shca_cq_cons(cq);

	lockdep_assert_held(&cq->lock);
	if (!shca_ring_idx_valid(ring->kprod, cons, ring->entries) ||
	    shca_ring_idx_full(ring->kprod, cons, ring->entries))
		return -ENOSPC;
	memcpy(shca_ring_entry(ring, ring->kprod), cqe, sizeof(*cqe));
	ring->kprod++;
	/* the CQE is written before the consumer can see the new prod */
	smp_store_release(&ring->ctl->prod, ring->kprod);
	return 0;
}

static void shca_cq_overflow(struct shca_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	ibdev_err_ratelimited(cq->ibcq.device, "cq %u: overflow\n", cq->cqn);
	shca_stat_inc(to_sdev(cq->ibcq.device), SHCA_STAT_CQ_OVERFLOW);
	trace_shca_async(&ev, cq->cqn);
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * shca_cq_post - produce one completion and account it for the event
 * @cq: completion queue
 * @cqe: the completion
 * @solicited: the completion is for a solicited message
 *
 * A full (or corrupt) ring marks the CQ in error and sends
 * IB_EVENT_CQ_ERR once; the completion is lost.  An arm request in a user
 * CQ's arm word is taken after the CQE is published; the completion
 * event, if one is due, is delivered before we return or through
 * comp_work (see the top of this file).
 * Context: process or softirq, not hardirq; does not sleep.  The caller
 * may hold its own locks (the comp_handlers run here never take them).
 */
void shca_cq_post(struct shca_cq *cq, const struct shca_cqe *cqe,
		  bool solicited)
{
	bool overflow = false, deliver = false;
	unsigned long flags;

	trace_shca_cqe(cq, cqe);
	spin_lock_irqsave(&cq->lock, flags);
	if (shca_cq_push(cq, cqe)) {
		WRITE_ONCE(cq->ring.ctl->flags, SHCA_RING_F_ERROR);
		overflow = !cq->overflow;
		cq->overflow = true;
	} else {
		if (cq->user && cq->notify != IB_CQ_NEXT_COMP) {
			/*
			 * prod is published before we look at the arm word;
			 * pairs with the provider's barrier between arming
			 * and polling
			 */
			smp_mb();
			shca_cq_take_arm(cq, cq->ring.ctl);
		}
		if (shca_cq_should_notify(cq, cqe, solicited))
			deliver = shca_cq_moderate(cq);
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (deliver)
		shca_cq_deliver(cq);
	if (overflow)
		shca_cq_overflow(cq);
}
