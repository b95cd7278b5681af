// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the send queue engine loop and the doorbell.
 *
 * Each QP's SQ is drained by engine runs (shca_sq_run()) under
 * qp->sq_engine: in qp->sq_work on shca_wq, in a user QP's doorbell (the
 * posting thread), or in qp->rq_work catching up on responses
 * (shca_sq_catch_up()).  The mutex makes the run the only consumer of
 * the SQ and the owner of ring.kcons.  A run drains a UD/GSI/RAW SQ
 * (ud_send.c) or runs the RC/UC requester and completer (rc_req.c).
 *
 * Doorbell suppression (shca-abi.h): the engine keeps
 * SHCA_RING_F_ENGINE_ACTIVE set while it works, and while a later run is
 * certain to come (RC packets in flight with a retransmit timer: an ACK
 * or the timer brings one); before it goes idle it clears the flag,
 * issues a full barrier and looks at prod once more.
 *
 * A run that sends on the same-host direct path may execute the request
 * at its destination right away (shca_rq_inline()), so the response can
 * be in comp_queue when the send returns; such a response comes without
 * sq_work (qp->sq_runner, qp->sq_owed), and the run consumes it before it
 * ends.
 */
#include "shca.h"

/*
 * The timed linger is due: its run of sq_work decides afresh.
 * Context: softirq (hrtimer).  Drops the reference the armed timer held.
 */
static enum hrtimer_restart shca_linger_timer_fn(struct hrtimer *t)
{
	struct shca_qp *qp = container_of(t, struct shca_qp, sq_linger_timer);

	clear_bit(SHCA_QP_SQ_TIMED, &qp->sq_timed);
	smp_mb__after_atomic();	/* a run that sees sq_work queued sees it clear */
	if (!READ_ONCE(qp->dying))
		shca_qp_queue(qp, &qp->sq_work);
	shca_qp_put(qp);
	return HRTIMER_NORESTART;
}

/**
 * shca_linger_timer_init - set up a QP's timed linger
 * @qp: QP being created
 *
 * Context: process (QP creation).
 */
void shca_linger_timer_init(struct shca_qp *qp)
{
	hrtimer_init(&qp->sq_linger_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	qp->sq_linger_timer.function = shca_linger_timer_fn;
}

/*
 * Arm the timed linger for @ns.  True when a run of sq_work is certain to
 * come: the timer was armed now, or is armed and has not yet queued its
 * run (SHCA_QP_SQ_TIMED is cleared before).  A dying QP does not linger.
 * The timer is not cancelled at destroy: it fires within
 * SHCA_LINGER_MAX_NS << SHCA_LINGER_EMPTY_MAX and drops its reference,
 * which destroy waits for.
 * Context: SQ engine (qp->sq_engine held).
 */
static bool shca_linger_arm(struct shca_qp *qp, u64 ns)
{
	lockdep_assert_held(&qp->sq_engine);
	if (test_and_set_bit(SHCA_QP_SQ_TIMED, &qp->sq_timed))
		return true;
	if (READ_ONCE(qp->dying)) {
		clear_bit(SHCA_QP_SQ_TIMED, &qp->sq_timed);
		return false;
	}
	shca_qp_stat_inc(qp, SHCA_STAT_SQ_TIMED_LINGERS);
	kref_get(&qp->ref);
	hrtimer_start(&qp->sq_linger_timer, ns_to_ktime(ns),
		      HRTIMER_MODE_REL_SOFT);
	return true;
}

/*
 * An RC/UC engine has nothing left to do: linger (engine_logic.h)?  True
 * when it stays active because a run was queued or the timer armed.
 * Context: SQ engine (qp->sq_engine held).
 */
static bool shca_engine_linger(struct shca_qp *qp)
{
	struct shca_linger *l = &qp->sq_linger;

	lockdep_assert_held(&qp->sq_engine);
	switch (shca_linger_next(l, READ_ONCE(qp->rq_requests),
				 qp->sq.ring.kcons)) {
	case SHCA_LINGER_RUN:
		/* one more run, after others ran */
		shca_qp_queue(qp, &qp->sq_work);
		return true;
	case SHCA_LINGER_TIMED:
		if (shca_linger_arm(qp, shca_linger_delay(l)))
			return true;
		l->how = SHCA_LINGER_NONE;
		return false;
	default:
		return false;
	}
}

/**
 * shca_engine_loop - run one queue engine with doorbell suppression
 * @qp: the QP; the caller holds a reference
 * @step: one pass of the engine; false when it must yield and come back
 * @pending: is there work the engine could do right now?
 * @resumes: is another run certain to come without a doorbell (NULL: no)?
 * @budget: what @step may consume before the engine yields
 *
 * SHCA_RING_F_ENGINE_ACTIVE stays set while the engine works, so
 * producers skip the doorbell.  Before going idle the engine clears the
 * flag, issues a full barrier (pairing with the producer's barrier between
 * publishing prod and reading the flag) and asks @pending once more, so a
 * post racing with the engine going idle is never lost.  When @step
 * yields, the work item is requeued and the flag stays set.  It also
 * stays set when @resumes says a run will come anyway (an RC requester
 * waiting for responses, whose ACKs or retransmit timer queue sq_work):
 * that run sees what is posted meanwhile, so a post into a busy send
 * queue needs no system call.  An RC/UC engine with nothing left to do
 * lingers for one more run of sq_work before it clears the flag, so a
 * consumer that reposts as its completions come in finds the engine
 * still active; but not a same-host ping-pong's or RPC's engine, whose
 * consumer posts only after its peer's request; and for a streaming
 * consumer that the doorbell found racing the engine, the run comes from
 * a timer, and timed lingers go on while they find posts (engine_logic.h).
 * A UD engine does not linger: its sends complete in the doorbell, as
 * consumers of an idle QP expect.
 *
 * Context: process (SQ engine or a doorbell), may sleep; qp->sq_engine
 * held.
 */
static void shca_engine_loop(struct shca_qp *qp,
			     bool (*step)(struct shca_qp *qp, u32 *budget),
			     bool (*pending)(struct shca_qp *qp),
			     bool (*resumes)(struct shca_qp *qp), u32 budget)
{
	struct shca_ring_ctl *ctl = qp->sq.ring.ctl;

	WRITE_ONCE(ctl->flags, SHCA_RING_F_ENGINE_ACTIVE);
	smp_mb();	/* flag visible before we read prod */
	for (;;) {
		if (!step(qp, &budget)) {
			/* stay "active": we come back, after others ran */
			shca_qp_queue(qp, &qp->sq_work);
			return;
		}
		if (qp->sq_owed) {
			qp->sq_owed = false;
			continue;	/* responses this run brought about */
		}
		if (resumes && resumes(qp))
			return;	/* stay "active": a response brings us back */
		if (resumes && shca_engine_linger(qp))
			return;	/* stay "active": the linger's run comes */
		if (qp->user)	/* for shca_sq_doorbell(): user QPs only */
			qp->sq_idle_ns = ktime_get_ns();
		WRITE_ONCE(ctl->flags, 0);
		smp_mb();	/* pairs with the producer's barrier */
		if (!pending(qp))
			return;
		WRITE_ONCE(ctl->flags, SHCA_RING_F_ENGINE_ACTIVE);
		smp_mb();	/* flag visible before we read prod again */
	}
}

/*
 * One run of the SQ engine: UD/GSI QPs drain their SQ, RC/UC/XRC
 * initiator QPs run the requester and completer (rc_req.c).
 * Context: process, may sleep; qp->sq_engine held.
 */
static void shca_sq_run(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->sq_engine);
	if (!qp->sq.ring.ctl)
		return;		/* an XRC target has no send queue */
	WRITE_ONCE(qp->sq_runner, current);
	qp->sq_owed = false;
	if (shca_qp_is_conn(qp->ibqp.qp_type))
		shca_engine_loop(qp, shca_req_pass, shca_req_pending,
				 shca_req_resumes, SHCA_REQ_PASSES);
	else
		shca_engine_loop(qp, shca_sq_drain, shca_sq_pending, NULL,
				 SHCA_SQ_BUDGET);
	shca_tx_flush(to_sdev(qp->ibqp.device), &qp->sq_tx_batch);
	WRITE_ONCE(qp->sq_runner, NULL);
}

/**
 * shca_sq_work - the SQ engine of one QP, from the workqueue
 * @work: qp->sq_work; the queuer took a QP reference for us
 *
 * Runs for kernel QPs, timers, incoming ACKs and engines that yielded.
 * Context: process (shca_wq), may sleep.
 */
void shca_sq_work(struct work_struct *work)
{
	struct shca_qp *qp = container_of(work, struct shca_qp, sq_work);

	mutex_lock(&qp->sq_engine);
	shca_sq_run(qp);
	mutex_unlock(&qp->sq_engine);
	shca_qp_put(qp);
}

/**
 * shca_sq_doorbell - run the SQ engine of a user QP in the caller
 * @qp: user QP; the uverbs command holds it
 *
 * The engine runs in the ringing thread, which saves a wakeup of a worker
 * and a switch back for every post.  How soon after the engine went idle
 * the doorbell came decides its later lingers (shca_linger_rang()).  The
 * doorbell never waits: if an engine run is in progress (sq_work, another
 * thread's doorbell, rq_work catching up), that run sees the new WQEs (the
 * producer published prod before it found the flag clear, and the run
 * looks at prod after it cleared the flag); sq_work is queued all the
 * same, for a holder of the mutex that is not an engine run
 * (shca_sq_sync()).  If the engine yields, it requeues sq_work as usual.
 * Context: process (the doorbell system call); does not sleep on the
 * engine.
 */
void shca_sq_doorbell(struct shca_qp *qp)
{
	shca_qp_stat_inc(qp, SHCA_STAT_SQ_DOORBELLS);
	if (!mutex_trylock(&qp->sq_engine)) {
		shca_qp_queue(qp, &qp->sq_work);
		return;
	}
	/* the engine was idle: how soon after it went idle did we ring? */
	shca_linger_rang(&qp->sq_linger, ktime_get_ns() - qp->sq_idle_ns,
			 READ_ONCE(qp->rq_requests));
	shca_sq_run(qp);
	mutex_unlock(&qp->sq_engine);
}

/**
 * shca_sq_consumed_more - an SQ engine run consumed responses
 * @qp: QP
 *
 * Wakes rq_work if a request waits for them (shca_sq_catch_up()).
 * Context: SQ engine (qp->sq_engine held), after comp_done moved.
 */
void shca_sq_consumed_more(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->sq_engine);
	smp_mb();	/* comp_done before rq_waits; pairs with catch_up */
	if (test_and_clear_bit(SHCA_QP_RQ_WAITS, &qp->rq_waits))
		shca_qp_queue(qp, &qp->rq_work);
}

/**
 * shca_sq_catch_up - consume the responses that arrived before a request
 * @qp: RC/UC/XRC initiator QP whose responder is about to execute a request
 * @mark: the request's shca_rx_cb()->comp_mark
 *
 * ACKs and responses wait in comp_queue for the SQ engine, requests in
 * rx_queue for rq_work: two work items that may run in either order.  A
 * request that the peer sent only after it acknowledged our SEND (a tag
 * matching rendezvous FIN, say) must not complete before that SEND does,
 * as it cannot on a wire that keeps the order; so the request waits until
 * the responses queued before it are consumed.  If the SQ engine is free,
 * this thread runs it.  If a run is in progress (a long one: a stream
 * whose ACKs keep coming), or the run here ran out of budget and left
 * the rest to sq_work, that run consumes them within a pass and wakes
 * rq_work (shca_sq_consumed_more()), so the responder never waits for
 * the end of the stream (its peer's requests would wait as long, and
 * time out).
 * Context: qp->rq_work, may sleep; qp->rq_engine held, trylocks
 * qp->sq_engine.
 * Return: true if the request may go on, false if rq_work must leave it
 * at the head of rx_queue and end: it is woken again.
 */
bool shca_sq_catch_up(struct shca_qp *qp, u32 mark)
{
	lockdep_assert_held(&qp->rq_engine);
	if (shca_sq_consumed(qp, mark))
		return true;
	if (mutex_trylock(&qp->sq_engine)) {
		shca_sq_run(qp);
		mutex_unlock(&qp->sq_engine);
		/* a run out of budget left the rest to sq_work, which wakes us */
		if (shca_sq_consumed(qp, mark) ||
		    skb_queue_empty(&qp->comp_queue))
			return true;
	}
	set_bit(SHCA_QP_RQ_WAITS, &qp->rq_waits);
	smp_mb__after_atomic();	/* rq_waits before comp_done, see above */
	if (!shca_sq_consumed(qp, mark))
		return false;
	clear_bit(SHCA_QP_RQ_WAITS, &qp->rq_waits);
	return true;
}

/* how long a same-host sender waits for a peer's run (shca_sq_await_run()) */
#define SHCA_SQ_AWAIT_NS	(30 * NSEC_PER_USEC)

/*
 * @qp's SQ engine is busy.  If a run is in progress in another thread, it
 * consumes the responses that came before it ends (a same-host peer's
 * ACK, while its consumer already answered: polled ping-pongs on two
 * CPUs), so wait for them a little: the alternative, rq_work, costs a
 * worker's wakeup on the round trip, and leaves this request's ACK to
 * come back after its sender's run ended.  Never for the run of this
 * thread, nor when another task waits for this CPU.
 * Context: process; the sender's qp->sq_engine may be held.
 * Return: true if every response queued before the request is consumed.
 */
static bool shca_sq_await_run(struct shca_qp *qp, u32 mark)
{
	u64 end = ktime_get_ns() + SHCA_SQ_AWAIT_NS;
	struct task_struct *runner;

	for (;;) {
		if (shca_sq_consumed(qp, mark))
			return true;
		runner = READ_ONCE(qp->sq_runner);
		if (!runner || runner == current || need_resched() ||
		    ktime_get_ns() > end)
			return false;
		cpu_relax();
	}
}

/**
 * shca_sq_take_responses - consume, in this thread, the responses that
 *	arrived before a request a same-host sender is about to run here
 * @qp: RC/UC/XRC initiator QP, the request's destination
 * @mark: the request's shca_rx_cb()->comp_mark
 *
 * For shca_rq_inline(), whose run must not start @qp's SQ engine (it
 * would send while the sender's run is in progress): if the engine is
 * free, only the responses are consumed (shca_req_take_responses()).
 * Without this, a ping-pong whose request once went to rq_work stays
 * there: the ACK of that request reaches its sender after the sender's
 * run ended, so it waits for sq_work, and the peer's answer, which
 * arrives meanwhile, must wait for it in rq_work too, and so on.
 * Context: process, may sleep; the sender's qp->sq_engine may be held;
 * trylocks qp->sq_engine.
 * Return: true if every response queued before the request is consumed.
 */
bool shca_sq_take_responses(struct shca_qp *qp, u32 mark)
{
	if (shca_sq_consumed(qp, mark))
		return true;
	if (!qp->sq.ring.ctl)
		return false;	/* an XRC target has no SQ engine */
	if (!mutex_trylock(&qp->sq_engine))
		return shca_sq_await_run(qp, mark);
	shca_req_take_responses(qp);
	mutex_unlock(&qp->sq_engine);
	return shca_sq_consumed(qp, mark);
}

/**
 * shca_sq_sync - wait until no SQ engine run is in progress
 * @qp: QP
 *
 * Covers sq_work and doorbells, which may run concurrently with
 * modify_qp.  Context: process, may sleep; qp->state_lock not held.
 */
void shca_sq_sync(struct shca_qp *qp)
{
	flush_work(&qp->sq_work);
	mutex_lock(&qp->sq_engine);
	mutex_unlock(&qp->sq_engine);
}
