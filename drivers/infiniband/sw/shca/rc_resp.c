// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RC/UC/XRC responder.  See rc.h for the contract.
 *
 * Everything here runs in the RQ engine (process context, qp->rq_engine
 * held: rq_work, or a same-host sender executing its request inline,
 * rx_engine.c), never concurrently with itself, so struct shca_resp needs no
 * lock of its own; the only exception is the RTR handover in
 * shca_resp_modify() (see rc_resp.h).
 *
 * RC request packets are classified by PSN (rc_resp_logic.h):
 *  - expected: the opcode sequence is checked, the per-operation handler
 *    runs and returns a verdict (done, drop, RNR, or a fatal NAK);
 *  - duplicate: SEND/WRITE are ACKed again, READ and atomics are answered
 *    again from the responder resources;
 *  - future: one PSN sequence NAK per gap, unless the request is held
 *    for the gap to fill (below).
 * READ responses and atomic ACKs are queued as resources and sent by
 * shca_resp_tx() oldest first, in budgeted batches; plain ACKs and
 * sequence NAKs wait until they are out, so responses leave in PSN order.
 *
 * UC shares the handlers but sends nothing back: a gap or any error
 * drops the message in progress, and reception resumes at the next FIRST
 * or ONLY packet.
 *
 * An XRC target runs RC's rules, with its responses in XRC opcodes.  It
 * has no PD, CQ or RQ of its own: every request names an XRC SRQ of the
 * target's domain in its XRCETH, held (resp->xsrq) while the packet is
 * handled, and that SRQ supplies the receive WQE, the PD that R_Keys and
 * receive buffers are checked against, and the CQ.  A request naming no
 * such SRQ, or another SRQ than the message it continues, is NAKed as a
 * remote access error and counted in rx_xrc_bad_srq; nothing is delivered.
 * SRQ numbers are reused as soon as they are free, so the message, its
 * receive WQE and READ responses keep the SRQ they began on by its uid:
 * an SRQ created since under the same number is another SRQ, and once
 * the message's SRQ is destroyed, its WQE completes nowhere.
 */
#include <linux/slab.h>

#include "shca.h"
#include "shca_trace.h"
#include "roce.h"
#include "rwqe.h"
#include "tm.h"
#include "wire.h"
#include "hold.h"
#include "rc_resp_logic.h"
#include "rc_resp_priv.h"

#define SHCA_RESP_TX_BUDGET	64	/* response packets per engine run */
#define SHCA_RESP_RESET_BIT	0
#define SHCA_RESP_ACK_TIMED_BIT	0
/*
 * How long the wire's responder holds an ACK nobody asked for: far below
 * any local ACK timeout a requester may use (4.096 us << timeout, and
 * timeout 0 means none), so that a requester that stalls without setting
 * AckReq is not held up for long.
 */
#define SHCA_RESP_ACK_DELAY_NS	(100 * NSEC_PER_USEC)

/*
 * Reordering on this host.  A veth's or loopback's packets wait in the
 * receive backlog of the CPU that sent them until its NET_RX softirq takes
 * them; under load (on 6.1, once ksoftirqd has work, it alone runs them,
 * at nice 0 behind the engines' workers) one CPU's backlog may wait for
 * milliseconds while another's runs at once.  Two packets of one QP sent
 * from two CPUs then arrive swapped.  So a request after a gap, from a
 * peer QP on this host, is held rather than NAKed: at most SHCA_HOLD_MAX
 * of them (as many as such a peer may send after the gap), in PSN order,
 * for SHCA_REORDER_MIN_NS, then while a backlog or the QP's rx_queue
 * holds packets, or the peer's requests are counted sent and not arrived
 * (shca_qp.wire_req_out, wire_req_in: one may be in the softirq of a
 * virtual CPU that its host does not run for a while),
 * SHCA_REORDER_HOLD_NS at most (hold.h).  The minimum covers what no
 * queue or count shows.  The hold's time counts from when ePSN last
 * moved (a second gap waits as long as a first), and whether it ran out
 * is decided only at the end of an RQ engine run, once the requests
 * queued behind the held one were looked at: an engine that ran late
 * finds the gap's request behind it in rx_queue.  When ePSN reaches them
 * the held requests run in order as if they had just arrived, and
 * nothing is NAKed or resent (rc_held_requests counts them).  When the
 * hold runs out, or it is full, the gap gets its sequence NAK as it
 * would have at once, and what was held is dropped, as the requester
 * resends it (rc_held_expired).  A peer elsewhere gets its NAK at once:
 * delaying a request is what a network may do anyway, so either is
 * within the rules (IBTA 9.7.5.1.1), but only this host is known to
 * reorder.  The test parameter rc_hold_any_ms holds any wire request
 * after a gap, for that long (at most a minute) whatever the backlogs.
 * The requester holds responses after a gap the same way
 * (rc_req_comp.c).
 */

static bool shca_resp_is_rc(struct shca_qp *qp)
{
	return shca_qp_is_reliable(qp->ibqp.qp_type);
}

static bool shca_resp_is_xrc(struct shca_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/*
 * XRC target: take the SRQ @srqn names in the target's domain for the
 * packet or response in hand.  @uid 0 takes whichever SRQ has the number
 * now (a new packet's); otherwise only the SRQ of that uid, and none once
 * it is destroyed, even if another took its number.  Context: RQ engine.
 */
static void shca_resp_xsrq_enter(struct shca_qp *qp, u32 srqn, u64 uid)
{
	struct shca_srq *srq;

	if (!shca_resp_is_xrc(qp))
		return;
	srq = shca_xsrq_get(shca_resp_sdev(qp), srqn, qp->xrcd);
	if (srq && uid && srq->uid != uid) {
		shca_srq_put(srq);
		srq = NULL;
	}
	qp->resp.xsrq = srq;
}

static void shca_resp_xsrq_exit(struct shca_qp *qp)
{
	if (qp->resp.xsrq)
		shca_srq_put(qp->resp.xsrq);
	qp->resp.xsrq = NULL;
}

/*
 * The delayed ACK is due: rq_work sends it if packets are still
 * unacknowledged (shca_resp_batch_end()).
 * Context: softirq (hrtimer).  Drops the reference the armed timer held.
 */
static enum hrtimer_restart shca_resp_ack_timer_fn(struct hrtimer *t)
{
	struct shca_qp *qp = container_of(t, struct shca_qp, resp.ack_timer);

	set_bit(SHCA_RESP_ACK_TIMED_BIT, &qp->resp.ack_timed);
	if (!READ_ONCE(qp->dying))
		shca_qp_queue(qp, &qp->rq_work);
	shca_qp_put(qp);
	return HRTIMER_NORESTART;
}

/*
 * Arm one of the responder's timers @t for @ns with a QP reference,
 * unless it is already armed (or running: the rq_work it queues comes
 * back here).  Context: RQ engine.
 */
static void shca_resp_timer_arm(struct shca_qp *qp, struct hrtimer *t,
				u64 ns)
{
	if (READ_ONCE(qp->dying) || hrtimer_active(t))
		return;
	kref_get(&qp->ref);
	hrtimer_start(t, ns_to_ktime(ns), HRTIMER_MODE_REL_SOFT);
}

/* Cancel it unless it is running (it drops its own reference then). */
static void shca_resp_timer_cancel(struct shca_qp *qp, struct hrtimer *t)
{
	if (hrtimer_try_to_cancel(t) == 1)
		shca_qp_put(qp);
}

/* Arm the delayed ACK.  Context: RQ engine. */
static void shca_resp_ack_timer_arm(struct shca_qp *qp)
{
	shca_resp_timer_arm(qp, &qp->resp.ack_timer, SHCA_RESP_ACK_DELAY_NS);
}

/* An ACK went out: the delayed one is not needed.  Context: RQ engine. */
static void shca_resp_ack_timer_stop(struct shca_qp *qp)
{
	shca_resp_timer_cancel(qp, &qp->resp.ack_timer);
}

/*
 * Time to look at the held requests again (shca_rc_hold_check()).
 * Context: softirq (hrtimer).  Drops the reference the armed timer held.
 */
static enum hrtimer_restart shca_resp_hold_timer_fn(struct hrtimer *t)
{
	struct shca_qp *qp = container_of(t, struct shca_qp, resp.hold_timer);

	if (!READ_ONCE(qp->dying))
		shca_qp_queue(qp, &qp->rq_work);
	shca_qp_put(qp);
	return HRTIMER_NORESTART;
}

/* Arm it to look again (shca_hold_wait()).  Context: RQ engine. */
static void shca_resp_hold_timer_arm(struct shca_qp *qp)
{
	shca_resp_timer_arm(qp, &qp->resp.hold_timer,
			    shca_hold_wait(&qp->resp.hold_time, ktime_get_ns(),
					   SHCA_REORDER_CHECK_NS));
}

/*
 * Drop the held requests: the requester resends them after its NAK, or
 * the connection is gone.  Context: RQ engine.
 */
static void shca_resp_hold_drop(struct shca_qp *qp)
{
	__skb_queue_purge(&qp->resp.held);
	shca_resp_timer_cancel(qp, &qp->resp.hold_timer);
}

/*
 * A zeroed resource ring of @n entries, charged to the process if @user.
 * Context: process, may sleep.
 */
static struct shca_resp_res_ring *shca_resp_ring_alloc(u32 n, bool user)
{
	struct shca_resp_res_ring *ring;

	ring = kzalloc(struct_size(ring, res, n), shca_gfp(user));
	if (ring)
		ring->n = n;
	return ring;
}

/* Context: process, may sleep (QP creation). */
int shca_resp_init(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	__skb_queue_head_init(&resp->held);
	resp->wqe = kzalloc(sizeof(*resp->wqe), shca_gfp(qp->user));
	/* one entry until the move to RTR sizes the ring (no packet before) */
	resp->ring = shca_resp_ring_alloc(1, qp->user);
	if (!resp->wqe || !resp->ring) {
		kfree(resp->wqe);
		kfree(resp->ring);
		resp->wqe = NULL;
		resp->ring = NULL;
		return -ENOMEM;
	}
	resp->res = resp->ring->res;
	resp->nres = resp->ring->n;
	resp->mtu = shca_ib_mtu_to_bytes(IB_MTU_256);
	hrtimer_init(&resp->ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	resp->ack_timer.function = shca_resp_ack_timer_fn;
	hrtimer_init(&resp->hold_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	resp->hold_timer.function = shca_resp_hold_timer_fn;
	return 0;
}

/**
 * shca_resp_prepare - allocate what a modify to RTR hands over
 * @qp: RC/UC/XRC QP
 * @attr: the modify's attributes, checked by shca_qp_transition()
 * @mask: the modify's mask
 *
 * Entering RTR sizes the READ/atomic resource ring by the connection's
 * max_dest_rd_atomic (this modify's, else the one stored before): it is
 * allocated here, before the modify commits anything (nothing fails
 * after it), and handed to shca_resp_modify() in @qp->resp.prep_ring.
 * Context: process, may sleep; qp->state_lock held.
 * Return: 0, or -ENOMEM.
 */
int shca_resp_prepare(struct shca_qp *qp, const struct ib_qp_attr *attr,
		      int mask)
{
	u32 n;

	lockdep_assert_held(&qp->state_lock);
	if (!(mask & IB_QP_STATE) || attr->qp_state != IB_QPS_RTR)
		return 0;
	n = mask & IB_QP_MAX_DEST_RD_ATOMIC ? attr->max_dest_rd_atomic :
					      qp->attr.max_dest_rd_atomic;
	n = clamp_t(u32, n, 1, SHCA_MAX_RD_ATOM);
	qp->resp.prep_ring = shca_resp_ring_alloc(n, qp->user);
	return qp->resp.prep_ring ? 0 : -ENOMEM;
}

/*
 * Context: process, qp->state_lock held.  Entering RTR hands the new
 * connection's parameters and resource ring (shca_resp_prepare()) to the
 * RQ engine; entering RESET has it let go of what it holds.
 */
void shca_resp_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		      int mask)
{
	struct shca_resp *resp = &qp->resp;
	u32 mtu;

	lockdep_assert_held(&qp->state_lock);
	if (!(mask & IB_QP_STATE))
		return;
	if (attr->qp_state == IB_QPS_RESET) {
		shca_qp_queue(qp, &qp->rq_work);
		return;
	}
	if (attr->qp_state != IB_QPS_RTR)
		return;
	mtu = shca_ib_mtu_to_bytes(qp->attr.path_mtu);
	resp->init_epsn = qp->attr.rq_psn & SHCA_PSN_MASK;
	resp->init_mtu = mtu ? mtu : shca_ib_mtu_to_bytes(IB_MTU_256);
	/* one the engine has not taken yet is no longer wanted */
	kfree(xchg(&resp->init_ring, resp->prep_ring));
	resp->prep_ring = NULL;
	smp_mb__before_atomic();	/* init_* before the flag */
	set_bit(SHCA_RESP_RESET_BIT, &resp->reset);
}

/* Forget every resource and pending response.  Context: RQ engine. */
static void shca_resp_res_reset(struct shca_resp *resp)
{
	u32 i;

	for (i = 0; i < resp->nres; i++)
		shca_resp_res_clear(&resp->res[i]);
	resp->res_tx = 0;
	resp->npending = 0;
}

static void shca_resp_cleanup(struct shca_qp *qp, bool flush);

/*
 * Context: process, after the last QP reference is gone; a TM SRQ and its
 * CQ are still there (ib_core lets go of them after us).
 */
void shca_resp_fini(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	if (resp->wqe && resp->wqe_valid && resp->tm_kind)
		shca_resp_cleanup(qp, false);
	__skb_queue_purge(&resp->held);
	if (resp->res)
		shca_resp_res_reset(resp);
	kfree(resp->ring);
	kfree(xchg(&resp->init_ring, NULL));
	kfree(resp->wqe);
	resp->ring = NULL;
	resp->res = NULL;
	resp->nres = 0;
	resp->wqe = NULL;
}

/**
 * shca_resp_stop - destroy: let go of the hold's timer
 * @qp: RC/UC/XRC QP, qp->dying set
 *
 * An RQ engine run finishes first: later ones see qp->dying and arm
 * nothing.  What is held is freed by shca_resp_fini().
 * Context: process, may sleep.
 */
void shca_resp_stop(struct shca_qp *qp)
{
	shca_rq_sync(qp);
	if (hrtimer_cancel(&qp->resp.hold_timer))
		shca_qp_put(qp);
}

/* Apply the RTR handover, if one is due.  Context: RQ engine. */
static void shca_resp_check_reset(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_resp_res_ring *ring;

	/* fully ordered: pairs with the barrier before set_bit() */
	if (!test_and_clear_bit(SHCA_RESP_RESET_BIT, &resp->reset))
		return;
	shca_resp_hold_drop(qp);
	ring = xchg(&resp->init_ring, NULL);
	if (ring) {	/* else a later RTR's, applied by an earlier run */
		kfree(resp->ring);
		resp->ring = ring;
		resp->res = ring->res;
		resp->nres = ring->n;
	}
	shca_resp_res_reset(resp);
	resp->epsn = resp->init_epsn;
	resp->mtu = resp->init_mtu;
	resp->msn = 0;
	resp->unacked = 0;
	resp->ack_due = false;
	resp->nak_seq_sent = false;
	resp->nak_seq_due = false;
	resp->msg_kind = 0;
	resp->wqe_valid = false;
}

/* ---------------------------------------------------------------- */
/* Transmit                                                          */
/* ---------------------------------------------------------------- */

/*
 * Build and send one response packet, its payload (if any) read from
 * @mr at @va.  A packet that cannot be built or routed is lost, as on a
 * wire; the requester retries.
 * Context: RQ engine.  Return: 0, or -EFAULT if the MR could not be read.
 */
static int shca_resp_xmit(struct shca_qp *qp, struct shca_wire_hdr *h,
			  struct shca_mr *mr, u64 va, u32 len, bool direct)
{
	struct shca_dev *sdev = shca_resp_sdev(qp);
	struct shca_path path = {};
	u32 pad = -len & 3, hlen;
	struct sk_buff *skb;
	int ret;

	/* the handlers name the operation; the QP's transport goes on top */
	h->opcode = shca_qp_transport(qp->ibqp.qp_type) |
		    (h->opcode & SHCA_OPC_MASK);
	hlen = shca_opcode_info(h->opcode)->hdr_len;
	h->pad = pad;
	h->pkey = SHCA_PKEY_DEFAULT;
	h->dqpn = READ_ONCE(qp->attr.dest_qp_num) & SHCA_WIRE_24BIT;
	if (shca_qp_path(qp, &path)) {
		shca_qp_stat_inc(qp, SHCA_STAT_TX_ERR);
		return 0;
	}
	path.direct = direct;	/* responses take the way their requests came */
	path.batch = &qp->rq_tx_batch;	/* flushed as the run ends */
	path.wire_out = &qp->wire_resp_out;
	skb = shca_skb_alloc(sdev, &path, hlen + len + pad + SHCA_ICRC_BYTES);
	if (!skb) {
		dst_release(path.dst);
		shca_qp_stat_inc(qp, SHCA_STAT_TX_ERR);
		return 0;
	}
	ret = shca_wire_pack(skb->data, hlen, h);
	if (ret >= 0 && len)
		ret = shca_rmr_copy(mr, va, skb->data + hlen, len, false);
	if (ret < 0) {
		kfree_skb(skb);
		dst_release(path.dst);
		return -EFAULT;
	}
	memset(skb->data + hlen + len, 0, pad + SHCA_ICRC_BYTES);
	if (shca_skb_xmit(sdev, &path, skb))
		shca_qp_stat_inc(qp, SHCA_STAT_TX_ERR);
	else
		shca_qp_stat_inc(qp, SHCA_STAT_TX_PACKETS);
	return 0;
}

/* Send an ACK or NAK carrying @psn and the current MSN.  Context: RQ engine. */
static void shca_resp_send_aeth(struct shca_qp *qp, u8 syndrome, u32 psn)
{
	struct shca_wire_hdr h = {
		.opcode = SHCA_TR_RC | SHCA_OPC_ACKNOWLEDGE,
		.psn = psn & SHCA_PSN_MASK,
		.syndrome = syndrome,
		.msn = qp->resp.msn & SHCA_WIRE_24BIT,
	};

	shca_qp_stat_inc(qp, SHCA_STAT_RC_ACKS_SENT);
	shca_resp_ack_timer_stop(qp);
	shca_resp_xmit(qp, &h, NULL, 0, 0, qp->resp.direct);
}

/* ACK everything up to ePSN - 1.  Context: RQ engine. */
static void shca_resp_ack(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	shca_resp_send_aeth(qp, SHCA_AETH_ACK_NO_CREDIT, resp->epsn - 1);
	resp->unacked = 0;
	resp->ack_due = false;
}

static bool shca_resp_tx_busy(struct shca_resp *resp)
{
	return resp->npending;
}

/*
 * Send the next packet of a READ response.  The R_Key is looked up again
 * for every packet, so a deregistration or invalidation between packets
 * takes effect at once and never waits for this response.
 * Context: RQ engine.
 */
static void shca_resp_tx_read(struct shca_qp *qp, struct shca_resp_res *res)
{
	u64 off = (u64)res->tx_idx * res->mtu;
	struct shca_wire_hdr h = {
		.opcode = shca_resp_read_opcode(res->tx_idx, res->npkts),
		.psn = shca_psn_add(res->psn, res->tx_idx),
		.syndrome = SHCA_AETH_ACK_NO_CREDIT,
		.msn = res->msn,
	};
	u32 len = min_t(u64, res->mtu, res->len - off);
	struct shca_mr *mr = NULL;
	int err = 0;

	/* XRC: the PD to read under */
	shca_resp_xsrq_enter(qp, res->srqn, res->srq_uid);
	if (len)
		err = shca_rmr_get(qp, res->rkey, res->va + off, len,
				   IB_ACCESS_REMOTE_READ, &mr);
	shca_resp_xsrq_exit(qp);
	if (!err) {
		err = shca_resp_xmit(qp, &h, mr, res->va + off, len,
				     res->direct);
		if (mr)
			shca_mr_put(mr);
	}
	if (err) {
		/*
		 * the MR went away or shrank (dereg, rereg, invalidate),
		 * or the XRC SRQ whose PD it is read under was destroyed
		 */
		shca_qp_stat_inc(qp, SHCA_STAT_RC_REM_ACCESS_ERRS);
		shca_resp_send_aeth(qp, SHCA_AETH_NAK_REM_ACC, h.psn);
		res->tx_idx = res->npkts;
		shca_qp_set_error(qp);
	}
	if (++res->tx_idx >= res->npkts)
		res->pending = false;
}

/* Send the ATOMIC ACKNOWLEDGE of an atomic.  Context: RQ engine. */
static void shca_resp_tx_atomic(struct shca_qp *qp, struct shca_resp_res *res)
{
	struct shca_wire_hdr h = {
		.opcode = SHCA_TR_RC | SHCA_OPC_ATOMIC_ACKNOWLEDGE,
		.psn = res->psn,
		.syndrome = SHCA_AETH_ACK_NO_CREDIT,
		.msn = res->msn,
		.orig = res->orig,
	};

	shca_resp_xmit(qp, &h, NULL, 0, 0, res->direct);
	res->pending = false;
}

/* Send what is left of one resource.  Return: false if out of budget. */
static bool shca_resp_tx_res(struct shca_qp *qp, struct shca_resp_res *res,
			     u32 *budget)
{
	while (res->pending) {
		if (READ_ONCE(qp->state) == IB_QPS_ERR)
			return true;	/* batch_end cleans up */
		if (!*budget)
			return false;
		--*budget;
		if (res->type == SHCA_RES_ATOMIC)
			shca_resp_tx_atomic(qp, res);
		else
			shca_resp_tx_read(qp, res);
	}
	return true;
}

/*
 * Send pending responses, oldest first, at most @budget packets.
 * Context: RQ engine.  Return: true if none is left.
 */
static bool shca_resp_tx(struct shca_qp *qp, u32 budget)
{
	struct shca_resp *resp = &qp->resp;

	while (resp->npending) {
		if (!shca_resp_tx_res(qp, &resp->res[resp->res_tx], &budget))
			return false;
		resp->res_tx = (resp->res_tx + 1) % resp->nres;
		resp->npending--;
	}
	return true;
}

/* ---------------------------------------------------------------- */
/* RC                                                                */
/* ---------------------------------------------------------------- */

/* Account an executed packet and ACK if due.  Context: RQ engine. */
static void shca_rc_advance(struct shca_qp *qp, struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;

	resp->epsn = shca_psn_add(resp->epsn, p->npkts);
	resp->msg_kind = shca_resp_seq_next(resp->msg_kind, p->flags);
	if (p->flags & SHCA_OPF_LAST)
		resp->msn = shca_resp_next_msn(resp);
	if (p->flags & (SHCA_OPF_READ | SHCA_OPF_ATOMIC)) {
		/* the response acknowledges everything before it */
		resp->unacked = 0;
		resp->ack_due = false;
		return;
	}
	resp->unacked++;
	if (!p->w.hdr.ackreq && resp->unacked < SHCA_RESP_ACK_EVERY)
		return;
	/* the wire's requests are acknowledged once per batch */
	if (!p->direct || shca_resp_tx_busy(resp))
		resp->ack_due = true;
	else
		shca_resp_ack(qp);
}

/* NAK the packet at ePSN with a fatal syndrome; the QP goes to error. */
static void shca_rc_fatal(struct shca_qp *qp, u8 syndrome,
			  enum shca_stat stat)
{
	shca_qp_stat_inc(qp, stat);
	shca_resp_send_aeth(qp, syndrome, qp->resp.epsn);
	shca_resp_abort_msg(qp);
	shca_qp_set_error(qp);
}

/* RNR NAK the packet at ePSN, with the QP's min_rnr_timer. */
static void shca_rc_rnr_nak(struct shca_qp *qp)
{
	u8 timer;

	shca_qp_stat_inc(qp, SHCA_STAT_RC_RNR_NAKS_SENT);
	timer = READ_ONCE(qp->attr.min_rnr_timer);
	shca_resp_send_aeth(qp, shca_resp_rnr_syndrome(timer), qp->resp.epsn);
}

/*
 * XRC target: does the packet name an SRQ of the domain, the same one as
 * the message it continues (or whose WQE is in use), not merely one that
 * has its number now?  Context: RQ engine.
 */
static bool shca_resp_xrc_ok(struct shca_qp *qp, struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	u32 srqn = p->w.hdr.xrc_srqn;

	if (!shca_resp_is_xrc(qp))
		return true;
	if (!resp->xsrq)
		return false;
	if (resp->msg_kind || resp->wqe_valid)
		return srqn == resp->msg_srqn &&
		       resp->xsrq->uid == resp->msg_srq_uid;
	resp->msg_srqn = srqn;
	resp->msg_srq_uid = resp->xsrq->uid;
	return true;
}

/* The packet at ePSN.  Context: RQ engine. */
static void shca_rc_expected(struct shca_qp *qp, struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	enum shca_resp_verdict v = SHCA_RV_NAK_INV;

	resp->nak_seq_sent = false;
	if (!shca_resp_xrc_ok(qp, p)) {
		shca_qp_stat_inc(qp, SHCA_STAT_RX_XRC_BAD_SRQ);
		v = SHCA_RV_NAK_ACC;
	} else if (shca_resp_seq_ok(resp->msg_kind, p->flags)) {
		v = shca_resp_dispatch(qp, p);
	}
	switch (v) {
	case SHCA_RV_DONE:
		shca_rc_advance(qp, p);
		if (resp->tm_rndv) {
			/*
			 * shca_tm_rx_rndv_go() wants the SEND acknowledged
			 * before its READ and FIN go out, but on the wire
			 * shca_rc_advance() leaves the ACK to the batch's
			 * end: send it now (unless responses are still due,
			 * which an ACK must not overtake).
			 */
			if (resp->ack_due && !shca_resp_tx_busy(resp))
				shca_resp_ack(qp);
			shca_tm_rx_rndv_go(qp);
		}
		break;
	case SHCA_RV_DROP:
		break;
	case SHCA_RV_RNR:
		shca_rc_rnr_nak(qp);
		/*
		 * The NAK stands for the packets behind it too: the
		 * requester resends from ePSN when its RNR timer expires,
		 * and a sequence NAK for them would only make it resend
		 * early.
		 */
		resp->nak_seq_sent = true;
		break;
	case SHCA_RV_NAK_INV:
		shca_rc_fatal(qp, SHCA_AETH_NAK_INV_REQ, SHCA_STAT_RC_INV_REQS);
		break;
	case SHCA_RV_NAK_ACC:
		shca_rc_fatal(qp, SHCA_AETH_NAK_REM_ACC,
			      SHCA_STAT_RC_REM_ACCESS_ERRS);
		break;
	case SHCA_RV_NAK_OP:
		shca_rc_fatal(qp, SHCA_AETH_NAK_REM_OP, SHCA_STAT_RC_REM_OP_ERRS);
		if (p->rq_broken)
			shca_rq_broken(qp);
		break;
	}
}

/* The resource a duplicate READ or atomic at @psn refers to. */
static struct shca_resp_res *shca_resp_res_find(struct shca_resp *resp,
						u32 psn, u8 type)
{
	u32 i;

	for (i = 0; i < resp->nres; i++) {
		struct shca_resp_res *res = &resp->res[i];

		if (res->type == type &&
		    shca_psn_in_window(psn, res->psn, res->npkts))
			return res;
	}
	return NULL;
}

/*
 * Take a duplicate READ for the resource it repeats, @res: the same
 * R_Key, a range inside the original's, the R_Key still valid for it (a
 * duplicate FLUSH: a FLUSH's resource, the same R_Key).
 * Its responses start over at the PSN asked for (with a FIRST or ONLY
 * there, as for a new request), so @res becomes what is asked again.
 * Context: RQ engine.  Return: false to ignore the duplicate.
 */
static bool shca_rc_dup_read_take(struct shca_qp *qp,
				  struct shca_resp_res *res,
				  const struct shca_resp_pkt *p)
{
	const struct shca_wire_hdr *h = &p->w.hdr;
	bool flush = h->opcode == (SHCA_TR_RC | SHCA_OPC_FLUSH);
	u64 end;

	/* a FLUSH is answered again as it was, without flushing again */
	if (flush || res->flush)
		return flush && res->flush && h->rkey == res->rkey;
	if (h->rkey != res->rkey || h->va < res->va ||
	    check_add_overflow(h->va, (u64)h->dma_len, &end) ||
	    end > res->va + res->len)
		return false;
	if (shca_resp_rkey_check(qp, h->rkey, h->va, h->dma_len,
				 IB_ACCESS_REMOTE_READ))
		return false;
	res->psn = h->psn;
	res->npkts = shca_resp_read_npkts(h->dma_len, p->mtu);
	res->mtu = p->mtu;
	res->va = h->va;
	res->len = h->dma_len;
	return true;
}

/*
 * A duplicate READ or atomic: the requester went back to it (a response
 * was lost, or overtaken) and asks for it and every later request again.
 * Its resource is answered again (a READ from the PSN asked for, an
 * atomic with the saved original value), and so is every later one that
 * was already answered, in order after it; those still pending stay as
 * they are.  Context: RQ engine.
 */
static void shca_rc_rewind(struct shca_qp *qp, const struct shca_resp_pkt *p)
{
	bool read = p->flags & SHCA_OPF_READ;
	struct shca_resp *resp = &qp->resp;
	struct shca_resp_res *res, *r;
	u32 i, n, k;

	res = shca_resp_res_find(resp, p->w.hdr.psn,
				 read ? SHCA_RES_READ : SHCA_RES_ATOMIC);
	if (!res || (read && !shca_rc_dup_read_take(qp, res, p)))
		return;
	i = res - resp->res;
	n = shca_resp_rewind_count(resp->nres, resp->res_tx, resp->npending,
				   i);
	for (k = 0; k < max(n, 1U); k++) {
		r = &resp->res[(i + k) % resp->nres];
		r->pending = true;
		r->tx_idx = 0;
		r->direct = p->direct;
	}
	if (n) {
		resp->res_tx = i;
		resp->npending += n;
	}
}

/* A request before ePSN.  Context: RQ engine. */
static void shca_rc_duplicate(struct shca_qp *qp, struct shca_resp_pkt *p)
{
	shca_qp_stat_inc(qp, SHCA_STAT_RC_DUP_REQUESTS);
	if (p->flags & (SHCA_OPF_READ | SHCA_OPF_ATOMIC))
		shca_rc_rewind(qp, p);
	else
		qp->resp.ack_due = true;	/* one ACK for the batch */
}

/* A request after ePSN: one sequence NAK per gap.  Context: RQ engine. */
static void shca_rc_future(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	if (resp->nak_seq_sent)
		return;
	resp->nak_seq_sent = true;
	shca_qp_stat_inc(qp, SHCA_STAT_RC_SEQ_NAKS_SENT);
	if (shca_resp_tx_busy(resp)) {
		resp->nak_seq_due = true;
		return;
	}
	shca_resp_send_aeth(qp, SHCA_AETH_NAK_SEQ, resp->epsn);
	resp->unacked = 0;
	resp->ack_due = false;
}

/* The PSN of a request that shca_resp_parse() accepted. */
static u32 shca_resp_skb_psn(struct sk_buff *skb)
{
	const struct shca_bth *bth;

	bth = (const void *)(skb->data + shca_rx_cb(skb)->bth_off);
	return shca_psn_mask(be32_to_cpu(bth->apsn));
}

/*
 * Hold @skb, a request after a gap, in PSN order (see "Reordering"); a
 * second copy of a held PSN is dropped.  Context: RQ engine.
 * Return: true if @skb was taken (held or freed), false for the NAK.
 */
static bool shca_rc_hold(struct shca_qp *qp, struct sk_buff *skb,
			 const struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	u32 n = skb_queue_len(&resp->held);
	u32 psn = p->w.hdr.psn, at;
	struct sk_buff *pos;

	if (p->direct ||
	    !shca_reorder_hold(qp, &resp->hold_time, n, n, resp->nak_seq_sent))
		return false;
	if (!n)
		shca_resp_hold_timer_arm(qp);
	/* from the tail: reordered requests mostly come in order after it */
	skb_queue_reverse_walk(&resp->held, pos) {
		at = shca_resp_skb_psn(pos);
		if (at == psn) {
			consume_skb(skb);
			return true;
		}
		if (shca_hold_before(at, psn, resp->epsn))
			break;
	}
	if (pos == (struct sk_buff *)&resp->held)
		__skb_queue_head(&resp->held, skb);
	else
		__skb_queue_after(&resp->held, pos, skb);
	shca_qp_stat_inc(qp, SHCA_STAT_RC_HELD_REQUESTS);
	trace_shca_hold(qp, psn, 0);
	return true;
}

/*
 * One RC request by PSN; a request after a gap may be held (@skb, NULL
 * for one already held).  Context: RQ engine.
 * Return: true if @skb was taken.
 */
static bool shca_rc_rx(struct shca_qp *qp, struct sk_buff *skb,
		       struct shca_resp_pkt *p)
{
	switch (shca_resp_psn_class(p->w.hdr.psn, qp->resp.epsn)) {
	case SHCA_PSN_EXPECTED:
		shca_rc_expected(qp, p);
		break;
	case SHCA_PSN_DUPLICATE:
		shca_rc_duplicate(qp, p);
		break;
	case SHCA_PSN_FUTURE:
		if (skb && shca_rc_hold(qp, skb, p))
			return true;
		/* a hold given up: full, or a direct request after the gap */
		if (!skb_queue_empty(&qp->resp.held))
			shca_qp_stat_inc(qp, SHCA_STAT_RC_HELD_EXPIRED);
		shca_resp_hold_drop(qp);	/* resent after the NAK */
		shca_rc_future(qp);
		break;
	}
	return false;
}

/* ---------------------------------------------------------------- */
/* UC                                                                */
/* ---------------------------------------------------------------- */

static void shca_uc_drop(struct shca_qp *qp)
{
	if (qp->resp.msg_kind)
		shca_qp_stat_inc(qp, SHCA_STAT_UC_MSGS_DROPPED);
	shca_resp_abort_msg(qp);
}

/* Context: RQ engine. */
static void shca_uc_rx(struct shca_qp *qp, struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	enum shca_resp_verdict v;

	if (p->w.hdr.psn != resp->epsn)
		shca_uc_drop(qp);	/* a gap: the message is lost */
	resp->epsn = shca_psn_add(p->w.hdr.psn, 1);
	if (!shca_resp_seq_ok(resp->msg_kind, p->flags)) {
		shca_uc_drop(qp);
		if (!(p->flags & SHCA_OPF_FIRST)) {
			shca_qp_stat_inc(qp, SHCA_STAT_RX_DROPPED);
			return;		/* resync on the next FIRST/ONLY */
		}
	}
	v = shca_resp_dispatch(qp, p);
	if (v == SHCA_RV_DONE) {
		resp->msg_kind = shca_resp_seq_next(resp->msg_kind, p->flags);
		return;
	}
	if (v != SHCA_RV_DROP) {
		resp->msg_kind = p->flags & SHCA_RESP_KIND_MASK;
		shca_uc_drop(qp);
	}
	if (p->rq_broken)
		shca_rq_broken(qp);
	else if (p->local_err)
		shca_qp_set_error(qp);
}

/* ---------------------------------------------------------------- */
/* Entry points                                                      */
/* ---------------------------------------------------------------- */

static bool shca_resp_state_ok(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD;
}

/*
 * Parse and sanity-check a request packet.  A packet of the direct path
 * names its segment size, any other one has the path MTU's.
 * Return: 0 or -EINVAL.
 */
static int shca_resp_parse(struct shca_qp *qp, struct sk_buff *skb,
			   struct shca_resp_pkt *p)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);

	memset(p, 0, sizeof(*p));
	if (shca_wire_parse(skb->data + cb->bth_off, cb->blen, &p->w))
		return -EINVAL;
	p->flags = p->w.info->flags;
	if (!(p->flags & SHCA_OPF_REQ) || p->w.pay_len != cb->pay_len ||
	    (p->w.hdr.pkey & 0x7fff) != (SHCA_PKEY_DEFAULT & 0x7fff))
		return -EINVAL;
	p->payload = skb->data + cb->pay_off;
	p->npkts = 1;
	p->direct = cb->seg != 0;
	p->mtu = p->direct ? cb->seg : qp->resp.mtu;
	return 0;
}

/*
 * One parsed request; @skb as for shca_rc_rx().  Context: RQ engine.
 * Return: true if @skb was taken.
 */
static bool shca_resp_one(struct shca_qp *qp, struct sk_buff *skb,
			  struct shca_resp_pkt *p)
{
	bool taken = false;

	qp->resp.direct = p->direct;	/* where ACKs and NAKs go */
	shca_resp_xsrq_enter(qp, p->w.hdr.xrc_srqn, 0);
	if (shca_resp_is_rc(qp))
		taken = shca_rc_rx(qp, skb, p);
	else
		shca_uc_rx(qp, p);
	shca_resp_xsrq_exit(qp);
	return taken;
}

/*
 * After a request: run the held requests that ePSN has reached, in
 * order, as if they had just arrived, and drop those it passed (a resent
 * copy ran).  A NAK since ePSN last moved (RNR), or the QP's error state,
 * drops the rest.  Context: RQ engine.
 */
static void shca_rc_hold_drain(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;
	enum shca_psn_class c;
	struct shca_resp_pkt p;
	struct sk_buff *skb;

	while ((skb = skb_peek(&resp->held))) {
		if (resp->nak_seq_sent ||
		    !shca_resp_state_ok(READ_ONCE(qp->state))) {
			shca_resp_hold_drop(qp);
			return;
		}
		c = shca_resp_psn_class(shca_resp_skb_psn(skb), resp->epsn);
		if (c == SHCA_PSN_FUTURE)
			return;
		__skb_unlink(skb, &resp->held);
		if (c == SHCA_PSN_EXPECTED && !shca_resp_parse(qp, skb, &p))
			shca_resp_one(qp, NULL, &p);
		consume_skb(skb);
	}
	shca_resp_hold_drop(qp);	/* none left: the timer only */
}

/*
 * Context: RQ engine.
 * Return: true if @skb was taken (held, see "Reordering"); else the
 * caller frees it.
 */
bool shca_resp_rx(struct shca_qp *qp, struct sk_buff *skb)
{
	u32 epsn = qp->resp.epsn;
	struct shca_resp_pkt p;
	bool taken;

	lockdep_assert_held(&qp->rq_engine);
	if (READ_ONCE(qp->dying) || !shca_resp_state_ok(READ_ONCE(qp->state))) {
		shca_qp_stat_inc(qp, SHCA_STAT_RX_DROPPED);
		return false;
	}
	shca_resp_check_reset(qp);
	if (shca_resp_parse(qp, skb, &p)) {
		shca_qp_stat_inc(qp, SHCA_STAT_RX_MALFORMED);
		return false;
	}
	shca_qp_stat_inc(qp, SHCA_STAT_RX_PACKETS);
	taken = shca_resp_one(qp, skb, &p);
	if (!taken && !skb_queue_empty(&qp->resp.held))
		shca_rc_hold_drain(qp);
	/* ePSN moved: the next gap gets its own time */
	if (qp->resp.epsn != epsn && !skb_queue_empty(&qp->resp.held))
		shca_hold_restart(&qp->resp.hold_time, ktime_get_ns());
	return taken;
}

/*
 * The end of a run with requests held: look again later while the hold
 * lasts (shca_reorder_hold_keep()); else the gap gets its sequence NAK
 * and what was held is dropped.  Context: RQ engine.
 */
static void shca_rc_hold_check(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	if (skb_queue_empty(&resp->held))
		return;
	if (shca_reorder_hold_keep(qp, &resp->hold_time, &qp->rx_queue)) {
		shca_resp_hold_timer_arm(qp);
		return;
	}
	shca_qp_stat_inc(qp, SHCA_STAT_RC_HELD_EXPIRED);
	shca_resp_hold_drop(qp);
	shca_rc_future(qp);
}

/* Let go of the message, MRs and resources of a dead connection. */
static void shca_resp_cleanup(struct shca_qp *qp, bool flush)
{
	struct shca_resp *resp = &qp->resp;

	shca_resp_abort_msg(qp);
	shca_resp_hold_drop(qp);
	shca_resp_res_reset(resp);
	/* a matched tag always gets its completion: it frees the handle */
	if (resp->wqe_valid && (flush || resp->tm_kind == SHCA_TM_RX_EAGER)) {
		/*
		 * An XRC target's WQE came from its message's SRQ: none if
		 * that SRQ is gone (and its completion with it).
		 */
		shca_resp_xsrq_enter(qp, resp->msg_srqn, resp->msg_srq_uid);
		shca_resp_complete_err(qp, IB_WC_WR_FLUSH_ERR);
		shca_resp_xsrq_exit(qp);
	}
	resp->wqe_valid = false;
	resp->tm_kind = SHCA_TM_RX_NONE;
}

/**
 * shca_resp_batch_end - end of one RQ engine run over an RC/UC QP
 * @qp: QP
 *
 * Sends pending responses (budgeted), then an ACK held back while they
 * were due (or owed to a duplicate) or a deferred sequence NAK.  Packets
 * are acknowledged as the requester asks (AckReq: shca's own sets it at
 * the end of a message and at the edges of its window and budgets), or
 * every SHCA_RESP_ACK_EVERY packets; on the wire, those ACKs are one per
 * batch.  A peer may not ask for an ACK where it stalls, so packets of
 * the wire that are left unacknowledged get a delayed ACK, after
 * SHCA_RESP_ACK_DELAY_NS unless an ACK goes out before.
 * In the error or reset state, releases what the responder holds; a
 * receive WQE in use is completed with a flush error
 * before rx_engine.c flushes the rest of the RQ.
 *
 * Context: RQ engine.
 * Return: true if responses are left and rq_work must run again.
 */
bool shca_resp_batch_end(struct shca_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct shca_resp *resp = &qp->resp;
	bool timed;

	lockdep_assert_held(&qp->rq_engine);
	timed = test_and_clear_bit(SHCA_RESP_ACK_TIMED_BIT, &resp->ack_timed);
	if (READ_ONCE(qp->dying) || state == IB_QPS_ERR ||
	    state == IB_QPS_RESET) {
		shca_resp_ack_timer_stop(qp);
		shca_resp_cleanup(qp, state == IB_QPS_ERR &&
				  !READ_ONCE(qp->dying));
		return false;
	}
	if (!shca_resp_state_ok(state) || !shca_resp_is_rc(qp))
		return false;
	shca_rc_hold_check(qp);
	if (!shca_resp_tx(qp, SHCA_RESP_TX_BUDGET))
		return true;
	if (resp->nak_seq_due) {
		shca_resp_send_aeth(qp, SHCA_AETH_NAK_SEQ, resp->epsn);
		resp->nak_seq_due = false;
		resp->unacked = 0;
		resp->ack_due = false;
	} else if (resp->ack_due || (resp->unacked && timed)) {
		if (!resp->ack_due)
			shca_qp_stat_inc(qp, SHCA_STAT_RC_ACKS_DELAYED);
		shca_resp_ack(qp);
	} else if (resp->unacked && !resp->direct) {
		shca_resp_ack_timer_arm(qp);
	}
	return false;
}
