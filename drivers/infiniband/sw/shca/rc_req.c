// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RC/UC/XRC-initiator requester.  See rc.h for the contract and
 * rc_req.h for the state.  This file sends the WQEs that rc_req_fetch.c
 * copies from the SQ ring into private shadows, segments them into
 * packets, runs the retransmit and RNR timers and retires WQEs in order;
 * rc_req_comp.c handles the responses.
 *
 * Internal operations (struct shca_req_iop, RC QPs on a tag matching SRQ)
 * are fetched into the same shadow queue, ahead of the SQ ring when both
 * have work, and from there on are WQEs like the others, except that
 * retiring one calls its done() instead of posting a send completion.
 *
 * Everything runs in an SQ engine run, in qp->sq_work, in a user QP's
 * doorbell or in qp->rq_work catching up on responses before a request
 * (shca_sq_catch_up()), under qp->sq_engine (shca_sq_run()), so never
 * concurrently.
 * The timers only set a bit in req.events and queue sq_work; an armed
 * timer holds a QP reference.
 *
 * Flow control: at most req.win.cur PSNs unacknowledged (an adaptive
 * window of SHCA_REQ_MIN_WIN..SHCA_REQ_MAX_UNACKED, see rc_req.h), at most
 * max(1, max_rd_atomic) READ/atomic requests outstanding (0 is treated
 * as 1, so a QP that never set it can still read), and a FENCE WQE waits
 * until every earlier READ/atomic has completed.
 *
 * Retransmission is go-back-N: the shadows keep first_psn, so resending
 * from any PSN regenerates exactly the packets sent before.  Besides the
 * sequence NAKs and the local ACK timeout, a requester whose peer is on
 * another host resends early when no ACK has come for a few of its
 * measured round trips (shca_req_probe(), rc_req_logic.h).
 */
#include <linux/jiffies.h>

#include "rc_req_priv.h"
#include "direct.h"
#include "hold.h"
#include "psn.h"
#include "roce.h"
#include "rq_logic.h"
#include "shca_trace.h"
#include "wire.h"

/* ---- timers ---- */

static bool shca_adaptive_retrans = true;
module_param_named(adaptive_retrans, shca_adaptive_retrans, bool, 0644);
MODULE_PARM_DESC(adaptive_retrans,
		 "RC requesters resend early, after a few round trips without an ACK, to a peer on another host (default: on; rc_probes counts them)");

/* Context: timer (softirq).  Drops the reference the armed timer held. */
static void shca_req_timer_fire(struct shca_qp *qp, int event)
{
	set_bit(event, &qp->req.events);
	shca_qp_queue(qp, &qp->sq_work);
	shca_qp_put(qp);
}

static void shca_req_rto_fn(struct timer_list *t)
{
	struct shca_qp *qp = from_timer(qp, t, req.rto_timer);

	shca_req_timer_fire(qp, SHCA_REQ_EV_RTO);
}

static void shca_req_rnr_fn(struct timer_list *t)
{
	struct shca_qp *qp = from_timer(qp, t, req.rnr_timer);

	shca_req_timer_fire(qp, SHCA_REQ_EV_RNR);
}

static void shca_req_hold_fn(struct timer_list *t)
{
	struct shca_qp *qp = from_timer(qp, t, req.hold_timer);

	shca_req_timer_fire(qp, SHCA_REQ_EV_HOLD);
}

/* (Re)arm @t for @ns with a QP reference.  Context: SQ engine. */
static void shca_req_arm(struct shca_qp *qp, struct timer_list *t, u64 ns)
{
	u64 j = min_t(u64, nsecs_to_jiffies64(ns), MAX_JIFFY_OFFSET);

	if (READ_ONCE(qp->dying))
		return;
	kref_get(&qp->ref);
	if (mod_timer(t, jiffies + max_t(u64, j, 1)))
		shca_qp_put(qp);	/* it was pending with its own ref */
}

/* Context: SQ engine. */
static void shca_req_disarm(struct shca_qp *qp, struct timer_list *t)
{
	if (del_timer(t))
		shca_qp_put(qp);
}

/*
 * Look at the held responses again (shca_hold_wait()), unless the timer
 * is pending.  Context: SQ engine.
 */
void shca_req_arm_hold(struct shca_qp *qp)
{
	if (!timer_pending(&qp->req.hold_timer))
		shca_req_arm(qp, &qp->req.hold_timer,
			     shca_hold_wait(&qp->req.hold_time, ktime_get_ns(),
					    SHCA_REORDER_CHECK_NS));
}

/* None held any more.  Context: SQ engine. */
void shca_req_disarm_hold(struct shca_qp *qp)
{
	shca_req_disarm(qp, &qp->req.hold_timer);
}

/*
 * The current retransmit wait, backoff included: the retries taken from
 * retry_cnt are the timeouts in a row since the PSNs last advanced (the
 * budget is reloaded on progress).  Context: SQ engine.
 */
static u64 shca_req_rto_ns(struct shca_qp *qp)
{
	int taken = READ_ONCE(qp->attr.retry_cnt) - qp->req.retry.left;

	return shca_rc_rto_backoff_ns(READ_ONCE(qp->attr.timeout),
				      clamp(taken, 0, SHCA_RC_RTO_BACKOFF_MAX));
}

/*
 * When the next early resend is due (rc_req_logic.h), in jiffies, in
 * @at.  Return: false for none: adaptive retransmission off, no estimate
 * yet, the period's probes made, or the timeout too short for one.
 * Context: SQ engine.
 */
static bool shca_req_probe_due(struct shca_qp *qp, u64 rto_ns,
			       unsigned long *at)
{
	struct shca_req *req = &qp->req;
	u64 ns;

	if (!READ_ONCE(shca_adaptive_retrans))
		return false;
	ns = shca_rc_probe_ns(&req->rtt, req->probes, rto_ns);
	if (!ns)
		return false;
	*at = req->probe_start +
	      clamp_t(u64, nsecs_to_jiffies64(ns), 1, MAX_JIFFY_OFFSET);
	return true;
}

/*
 * Arm the retransmit timer for the earlier of @due (the timeout) and the
 * next early resend.  Context: SQ engine.
 */
static void shca_req_arm_rto_at(struct shca_qp *qp, unsigned long due,
				u64 rto_ns)
{
	unsigned long at;

	if (!shca_req_probe_due(qp, rto_ns, &at) || time_after(at, due))
		at = due;
	shca_req_arm(qp, &qp->req.rto_timer,
		     time_after(at, jiffies) ? jiffies_to_nsecs(at - jiffies) : 0);
}

/* When the timeout of @rto_ns started at rto_start expires, in jiffies. */
static unsigned long shca_req_rto_due(struct shca_qp *qp, u64 rto_ns)
{
	return qp->req.rto_start + min_t(u64, nsecs_to_jiffies64(rto_ns),
					 MAX_JIFFY_OFFSET);
}

/* Start the retransmit timer over.  Context: SQ engine. */
static void shca_req_arm_rto(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	u64 ns = shca_req_rto_ns(qp);

	req->rto_start = jiffies;
	req->probe_start = req->rto_start;
	req->probes = 0;
	if (ns)
		shca_req_arm_rto_at(qp, shca_req_rto_due(qp, ns), ns);
}

/*
 * Time the newest packet of a flight: the first of @qp's packets that
 * went out for the first time (@fresh) while none is timed.  Packets of
 * the direct path are not: they never wait for a probe.
 */
static void shca_req_rtt_start(struct shca_qp *qp, bool fresh, bool direct)
{
	struct shca_req *req = &qp->req;

	if (!fresh || direct || req->rtt_on)
		return;
	req->rtt_on = true;
	req->rtt_psn = shca_psn_mask(req->psn - 1);
	req->rtt_sent_ns = ktime_get_ns();
}

/* @una moved past the timed packet: that is a round trip. */
static void shca_req_rtt_end(struct shca_qp *qp, u32 una)
{
	struct shca_req *req = &qp->req;
	u64 us;

	if (!req->rtt_on || !shca_psn_after(una, req->rtt_psn))
		return;
	req->rtt_on = false;
	us = div_u64(ktime_get_ns() - req->rtt_sent_ns, NSEC_PER_USEC);
	shca_rc_rtt_sample(&req->rtt, min_t(u64, us, U32_MAX));
}

/* ---- WQE life cycle ---- */

static u8 shca_req_wc_opcode(u8 op)
{
	switch (op) {
	case SHCA_OP_RDMA_WRITE:
	case SHCA_OP_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case SHCA_OP_RDMA_READ:
		return IB_WC_RDMA_READ;
	case SHCA_OP_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case SHCA_OP_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case SHCA_OP_BIND_MW:
		return IB_WC_BIND_MW;
	case SHCA_OP_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case SHCA_OP_REG_MR:
		return IB_WC_REG_MR;
	case SHCA_OP_ATOMIC_WRITE:
		return SHCA_WC_ATOMIC_WRITE;
	case SHCA_OP_FLUSH:
		return SHCA_WC_FLUSH;
	default:
		return IB_WC_SEND;
	}
}

/* Post the send completion of a WQE if one is due.  Context: SQ engine. */
static void shca_req_complete(struct shca_qp *qp,
			      const struct shca_send_wqe *hdr, u32 len,
			      enum ib_wc_status status)
{
	struct shca_cqe cqe = {};

	if (status == IB_WC_SUCCESS && qp->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    !(hdr->flags & SHCA_WQE_F_SIGNALED))
		return;
	cqe.wr_id = hdr->wr_id;
	cqe.status = status;
	cqe.opcode = shca_req_wc_opcode(hdr->opcode);
	cqe.byte_len = status == IB_WC_SUCCESS ? len : 0;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.port_num = 1;
	shca_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false);
}

/* Hand the SQ ring slot at kcons back to the producer. */
static void shca_req_pop(struct shca_qp *qp)
{
	struct shca_ring *ring = &qp->sq.ring;

	ring->kcons++;
	/* the WQE copy is done before its slot is handed back */
	smp_store_release(&ring->ctl->cons, ring->kcons);
}

/*
 * End the internal operations on @list with @status, in order.
 * Context: SQ engine, or destroy; qp->sq_engine held.
 */
static void shca_req_iops_done(struct shca_qp *qp, struct list_head *list,
			       enum ib_wc_status status)
{
	struct shca_req_iop *iop, *next;

	list_for_each_entry_safe(iop, next, list, node) {
		list_del_init(&iop->node);
		iop->done(qp, iop, status);	/* may free it */
	}
}

/**
 * shca_req_retire - complete the oldest shadow WQE and release its slot
 * @qp: RC/UC QP
 * @status: completion status
 *
 * A user WQE hands its SQ ring slot back and posts its send completion;
 * an internal operation calls its done() instead.
 * Context: SQ engine.
 */
void shca_req_retire(struct shca_qp *qp, enum ib_wc_status status)
{
	struct shca_req *req = &qp->req;
	struct shca_req_wqe *w = shca_req_wqe_at(qp, req->head);
	struct shca_req_iop *iop = w->iop;

	req->head++;
	if (shca_ring_count(req->cur, req->head) > req->nwqes)
		req->cur = req->head;
	if (iop) {
		w->iop = NULL;
		iop->done(qp, iop, status);	/* may free it */
		return;
	}
	/*
	 * Hand the slot back first: once the completion can be polled, the
	 * consumer may post into the slot (the shadow @w stays ours until
	 * the next fetch, which only this engine does).
	 */
	shca_req_pop(qp);
	shca_req_complete(qp, &w->hdr, w->len, status);
}

/**
 * shca_req_fail - a WQE failed: record its status, QP to the error state
 * @qp: RC/UC QP
 * @w: failing WQE (copied into its shadow entry)
 * @status: its completion status
 *
 * When @w is the oldest outstanding WQE it completes with @status right
 * away, before the QP enters the error state: the error that ends the QP
 * is then the first completion the consumer sees, ahead of the
 * IB_WC_WR_FLUSH_ERR completions of both work queues (the RQ engine may
 * flush the moment it sees the new state).  Otherwise the SQ flush
 * completes it with @status after the WQEs before it.
 *
 * Context: SQ engine (may sleep).
 */
void shca_req_fail(struct shca_qp *qp, struct shca_req_wqe *w,
		   enum ib_wc_status status)
{
	struct shca_req *req = &qp->req;

	w->status = status;
	ibdev_dbg(qp->ibqp.device, "qp %u: %s %llu failed, status %d\n",
		  qp->ibqp.qp_num, w->iop ? "internal op" : "wr",
		  w->hdr.wr_id, status);
	if (req->head != req->fetch && w == shca_req_wqe_at(qp, req->head))
		shca_req_retire(qp, status);
	shca_qp_set_error(qp);
}

static void shca_req_skip_acked(struct shca_qp *qp);

/**
 * shca_req_advance - forward progress: PSNs before @una are acknowledged
 * @qp: RC QP
 * @una: the new oldest unacknowledged PSN
 *
 * Resets the retry counters and restarts (or stops) the retransmit timer.
 * Context: SQ engine.
 */
void shca_req_advance(struct shca_qp *qp, u32 una)
{
	struct shca_req *req = &qp->req;

	if (!shca_psn_after(una, req->una))
		return;
	shca_rc_win_grow(&req->win, shca_psn_mask(una - req->una));
	shca_req_rtt_end(qp, una);
	req->una = una;
	shca_rc_retry_init_cnt(&req->retry, READ_ONCE(qp->attr.retry_cnt));
	shca_rc_retry_init_rnr(&req->rnr, READ_ONCE(qp->attr.rnr_retry));
	req->rto_held = 0;
	req->gb_armed = false;
	shca_req_skip_acked(qp);
	if (req->una == req->next_psn)
		shca_req_disarm(qp, &req->rto_timer);
	else
		shca_req_arm_rto(qp);
}

/*
 * Resend from packet @k of the WQE at @idx: the later WQEs keep their
 * PSNs (first_psn) and are sent again from their first packet.
 */
static void shca_req_rewind(struct shca_qp *qp, u32 idx, u32 k)
{
	struct shca_req_wqe *w = shca_req_wqe_at(qp, idx);
	u32 i;

	for (i = idx + 1; i != qp->req.fetch; i++)
		shca_req_wqe_at(qp, i)->sent = 0;
	w->sent = k;
	qp->req.cur = idx;
	qp->req.psn = shca_psn_add(w->first_psn, k);
}

/* The started WQE holding @psn: its shadow index, or -1. */
static s64 shca_req_find(struct shca_qp *qp, u32 psn)
{
	u32 idx;

	for (idx = qp->req.head; idx != qp->req.fetch; idx++) {
		struct shca_req_wqe *w = shca_req_wqe_at(qp, idx);

		if (!w->started)
			break;
		if (shca_psn_in_window(psn, w->first_psn, w->npkts))
			return idx;
	}
	return -1;
}

/*
 * After a go-back, acknowledgements of the original packets may overtake
 * the resend: never resend what is acknowledged already.
 */
static void shca_req_skip_acked(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	s64 idx;

	if (!shca_psn_before(req->psn, req->una))
		return;
	idx = shca_req_find(qp, req->una);
	if (idx >= 0) {
		shca_req_rewind(qp, idx, shca_psn_mask(req->una -
				shca_req_wqe_at(qp, idx)->first_psn));
		return;
	}
	req->psn = req->una;
	while (req->cur != req->fetch &&
	       shca_req_wqe_at(qp, req->cur)->started)
		req->cur++;
}

/*
 * Send everything from @psn on again (go back N); see shca_req_go_back().
 * Return: true if it did.  Context: SQ engine.
 */
static bool shca_req_back_to(struct shca_qp *qp, u32 psn, bool guarded)
{
	struct shca_req *req = &qp->req;
	s64 idx;

	if (guarded && req->gb_armed && req->gb_psn == psn)
		return false;
	idx = shca_req_find(qp, psn);
	if (idx < 0)
		return false;
	shca_req_rewind(qp, idx, shca_psn_mask(psn -
			shca_req_wqe_at(qp, idx)->first_psn));
	if (guarded)	/* a sequence NAK or an out-of-order response */
		shca_rc_win_loss(&req->win, false);
	req->rtt_on = false;	/* which copy an ACK answers is not known */
	req->gb_armed = true;
	req->gb_psn = psn;
	return true;
}

/**
 * shca_req_go_back - retransmit everything from @psn on (go back N)
 * @qp: RC QP
 * @psn: first PSN to send again; ignored unless a started WQE holds it
 * @guarded: skip it if the last go-back went to the same PSN and no
 *	     progress has been made since (one request per lost packet)
 *
 * For a loss (a sequence NAK, an out-of-order response, a timeout):
 * counted in rc_retransmits.  The resend after an RNR NAK is not a
 * retransmission of anything lost (rc_rnr_naks_rcvd counts those).
 * Context: SQ engine.
 * Return: true if it went back.
 */
bool shca_req_go_back(struct shca_qp *qp, u32 psn, bool guarded)
{
	if (!shca_req_back_to(qp, psn, guarded))
		return false;
	shca_qp_stat_inc(qp, SHCA_STAT_RC_RETRANSMITS);
	trace_shca_retransmit(qp, psn, shca_psn_mask(qp->req.next_psn - psn));
	return true;
}

/**
 * shca_req_rnr_wait - RNR NAK for @psn: pause, or fail when out of retries
 * @qp: RC QP; PSNs before @psn are acknowledged already
 * @psn: first PSN to resend when the RNR timer expires
 * @code: 5-bit RNR timer code from the NAK
 *
 * Context: SQ engine.
 */
void shca_req_rnr_wait(struct shca_qp *qp, u32 psn, u8 code)
{
	struct shca_req *req = &qp->req;

	if (!shca_rc_retry_take(&req->rnr)) {
		shca_req_fail(qp, shca_req_wqe_at(qp, qp->req.head),
			      IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	req->rnr_wait = true;
	req->rnr_psn = psn;
	shca_req_disarm(qp, &req->rto_timer);
	shca_req_arm(qp, &req->rnr_timer, shca_rc_rnr_ns(code));
}

/**
 * shca_req_cursor_at - an SGE cursor @off bytes into a WQE's payload
 * @qp: QP
 * @w: WQE (not inline)
 * @off: byte offset
 * @cur: cursor to set up
 *
 * The SGEs' lkeys are looked up in the QP's PD, or in the PD an internal
 * operation names.
 *
 * Context: SQ engine.
 * Return: 0, or -ENOSPC if the SGEs are shorter than @off.
 */
int shca_req_cursor_at(struct shca_qp *qp, const struct shca_req_wqe *w,
		       u64 off, struct shca_sge_cursor *cur)
{
	*cur = (struct shca_sge_cursor) {
		.sdev = to_sdev(qp->ibqp.device),
		.pd = w->iop && w->iop->pd ? w->iop->pd : qp->ibqp.pd,
		.sge = w->sge,
		.num_sge = w->hdr.num_sge,
	};
	while (cur->idx < cur->num_sge && off >= w->sge[cur->idx].length) {
		off -= w->sge[cur->idx].length;
		cur->idx++;
	}
	if (cur->idx >= cur->num_sge && off)
		return -ENOSPC;
	cur->off = off;
	return 0;
}

/* ---- sending ---- */

static u8 shca_req_seq(u32 k, u32 n, u8 first, u8 middle, u8 last, u8 only)
{
	if (n == 1)
		return only;
	if (!k)
		return first;
	return k == n - 1 ? last : middle;
}

/* BTH opcode of packet @k of @w. */
static u8 shca_req_pkt_opcode(const struct shca_req_wqe *w, u32 k)
{
	u32 n = w->npkts;

	switch (w->hdr.opcode) {
	case SHCA_OP_SEND:
		return shca_req_seq(k, n, SHCA_OPC_SEND_FIRST,
				    SHCA_OPC_SEND_MIDDLE, SHCA_OPC_SEND_LAST,
				    SHCA_OPC_SEND_ONLY);
	case SHCA_OP_SEND_WITH_IMM:
		return shca_req_seq(k, n, SHCA_OPC_SEND_FIRST,
				    SHCA_OPC_SEND_MIDDLE,
				    SHCA_OPC_SEND_LAST_WITH_IMMEDIATE,
				    SHCA_OPC_SEND_ONLY_WITH_IMMEDIATE);
	case SHCA_OP_SEND_WITH_INV:
		return shca_req_seq(k, n, SHCA_OPC_SEND_FIRST,
				    SHCA_OPC_SEND_MIDDLE,
				    SHCA_OPC_SEND_LAST_WITH_INVALIDATE,
				    SHCA_OPC_SEND_ONLY_WITH_INVALIDATE);
	case SHCA_OP_RDMA_WRITE:
		return shca_req_seq(k, n, SHCA_OPC_RDMA_WRITE_FIRST,
				    SHCA_OPC_RDMA_WRITE_MIDDLE,
				    SHCA_OPC_RDMA_WRITE_LAST,
				    SHCA_OPC_RDMA_WRITE_ONLY);
	case SHCA_OP_RDMA_WRITE_WITH_IMM:
		return shca_req_seq(k, n, SHCA_OPC_RDMA_WRITE_FIRST,
				    SHCA_OPC_RDMA_WRITE_MIDDLE,
				    SHCA_OPC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
				    SHCA_OPC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	case SHCA_OP_RDMA_READ:
		return SHCA_OPC_RDMA_READ_REQUEST;
	case SHCA_OP_ATOMIC_CMP_AND_SWP:
		return SHCA_OPC_COMPARE_SWAP;
	case SHCA_OP_ATOMIC_WRITE:
		return SHCA_OPC_ATOMIC_WRITE;
	case SHCA_OP_FLUSH:
		return SHCA_OPC_FLUSH;
	default:
		return SHCA_OPC_FETCH_ADD;
	}
}

/* Header fields of packet @k of @w (PSN and AckReq set by the caller). */
static void shca_req_fill_hdr(struct shca_qp *qp, const struct shca_req_wqe *w,
			      u32 k, struct shca_wire_hdr *h)
{
	u8 tr = shca_qp_transport(qp->ibqp.qp_type);
	u64 off = (u64)k * w->mtu;

	h->opcode = tr | shca_req_pkt_opcode(w, k);
	if (tr == SHCA_TR_XRC)
		h->xrc_srqn = w->hdr.xrc_remote_srqn;
	h->pkey = SHCA_PKEY_DEFAULT;
	h->dqpn = qp->attr.dest_qp_num & SHCA_WIRE_24BIT;
	h->se = (w->hdr.flags & SHCA_WQE_F_SOLICITED) && k == w->npkts - 1 &&
		w->hdr.opcode != SHCA_OP_RDMA_WRITE &&
		w->hdr.opcode != SHCA_OP_ATOMIC_WRITE;
	h->imm = (__force __be32)w->hdr.ex;
	h->inv_rkey = w->hdr.ex;
	if (w->hdr.opcode == SHCA_OP_RDMA_READ) {
		h->va = w->hdr.rdma.remote_addr + off;
		h->dma_len = min_t(u64, w->len - off,
				   (u64)(w->seg_end - k) * w->mtu);
	} else {
		h->va = w->hdr.rdma.remote_addr;
		h->dma_len = w->len;
	}
	h->rkey = w->hdr.rdma.rkey;
	if (w->hdr.opcode == SHCA_OP_FLUSH) {
		/* checked at fetch (shca_req_check_flush()) */
		h->feth_plt = w->hdr.flush.type;
		h->feth_sel = w->hdr.flush.level;
		h->dma_len = shca_req_flush_dma_len(w->hdr.flush.level,
						    w->hdr.flush.length);
	}
	if (w->hdr.opcode == SHCA_OP_ATOMIC_CMP_AND_SWP ||
	    w->hdr.opcode == SHCA_OP_ATOMIC_FETCH_AND_ADD) {
		h->va = w->hdr.atomic.remote_addr;
		h->rkey = w->hdr.atomic.rkey;
		h->compare = w->hdr.atomic.compare_add;
		h->swap_add = w->hdr.opcode == SHCA_OP_ATOMIC_CMP_AND_SWP ?
			      w->hdr.atomic.swap : w->hdr.atomic.compare_add;
	}
}

/* Payload of packet @k: its byte count (0 for READ/atomic requests). */
static u32 shca_req_pay_len(const struct shca_req_wqe *w, u32 k)
{
	u64 off = (u64)k * w->mtu;

	if (shca_req_is_rd_atomic(w) || off >= w->len)
		return 0;
	return min_t(u64, w->mtu, w->len - off);
}

/* Copy @len payload bytes of packet @k into @buf. */
static int shca_req_gather(struct shca_qp *qp, const struct shca_req_wqe *w,
			   u32 k, u8 *buf, u32 len)
{
	u64 off = (u64)k * w->mtu;
	struct shca_sge_cursor cur;
	int err;

	if (!len)
		return 0;
	if (w->hdr.flags & SHCA_WQE_F_INLINE) {
		memcpy(buf, w->inl + off, len);
		return 0;
	}
	err = shca_req_cursor_at(qp, w, off, &cur);
	return err ?: shca_cursor_copy(&cur, buf, len, false);
}

/*
 * Build and transmit packet @k of @w with PSN req.psn.  A packet that
 * cannot be routed or allocated is lost like on a wire.
 * Return: 0, or a negative errno for a local protection error.
 * Context: SQ engine.
 */
static int shca_req_xmit(struct shca_qp *qp, const struct shca_req_wqe *w,
			 u32 k, bool ackreq)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	u32 len = shca_req_pay_len(w, k), pad = -len & 3, hlen;
	struct shca_wire_hdr h = {};
	struct shca_path path = {};
	struct sk_buff *skb;
	int ret;

	shca_req_fill_hdr(qp, w, k, &h);
	h.psn = qp->req.psn;
	h.ackreq = ackreq;
	h.pad = pad;
	hlen = shca_opcode_info(h.opcode)->hdr_len;
	if (shca_qp_path(qp, &path))
		goto lost;
	path.direct = w->direct;
	path.seg = w->direct ? w->mtu : 0;
	path.batch = &qp->sq_tx_batch;
	path.wire_out = &qp->wire_req_out;
	/* an SQ engine run (direct.c, net.c), of a conversing consumer */
	path.rx_inline = shca_linger_talking(&qp->sq_linger,
					     READ_ONCE(qp->rq_requests));
	if (path.rx_inline)
		shca_linger_inlined(&qp->sq_linger);
	skb = shca_skb_alloc(sdev, &path, hlen + len + pad + SHCA_ICRC_BYTES);
	if (!skb) {
		dst_release(path.dst);
		goto lost;
	}
	ret = shca_wire_pack(skb->data, hlen, &h);
	if (ret >= 0)
		ret = shca_req_gather(qp, w, k, skb->data + hlen, len);
	if (ret < 0) {
		kfree_skb(skb);
		dst_release(path.dst);
		return ret;
	}
	memset(skb->data + hlen + len, 0, pad + SHCA_ICRC_BYTES);
	if (shca_skb_xmit(sdev, &path, skb))
		goto lost;
	shca_qp_stat_inc(qp, SHCA_STAT_TX_PACKETS);
	return 0;
lost:
	shca_qp_stat_inc(qp, SHCA_STAT_TX_ERR);
	return 0;
}

/* READ/atomic requests in flight before the current WQE. */
static u32 shca_req_rd_outstanding(struct shca_qp *qp)
{
	u32 idx, n = 0;

	for (idx = qp->req.head; idx != qp->req.cur; idx++)
		n += shca_req_is_rd_atomic(shca_req_wqe_at(qp, idx));
	return n;
}

/* May @w start now (FENCE, max_rd_atomic)?  Context: SQ engine. */
static bool shca_req_may_start(struct shca_qp *qp,
			       const struct shca_req_wqe *w)
{
	u32 max_rd = max_t(u32, READ_ONCE(qp->attr.max_rd_atomic), 1);
	bool rd = shca_req_is_rd_atomic(w);
	u32 n;

	if (!rd && !(w->hdr.flags & SHCA_WQE_F_FENCE))
		return true;
	n = shca_req_rd_outstanding(qp);
	if ((w->hdr.flags & SHCA_WQE_F_FENCE) && n)
		return false;
	return !rd || n < max_rd;
}

/*
 * May the next message take the same-host direct path?  Only once every
 * packet sent on the wire is acknowledged, so that none can arrive after
 * a direct one; a UC QP never knows, and switches at once.  The way back
 * counts too but for UC: the responses and ACKs of a direct message come
 * back direct (direct.c).
 * Context: SQ engine (qp->sq_engine held).
 */
static bool shca_req_may_go_direct(struct shca_qp *qp)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;
	struct shca_req *req = &qp->req;
	struct shca_path path = {};
	bool direct;

	lockdep_assert_held(&qp->sq_engine);
	if (req->wire_sent && !uc && shca_psn_before(req->una, req->wire_end))
		return false;
	if (shca_qp_path(qp, &path))
		return false;
	direct = shca_direct_usable(sdev, &path, !uc, &qp->direct_memo);
	dst_release(path.dst);
	return direct;
}

/* Give @w its path and its PSNs, starting at req.psn. */
static void shca_req_start(struct shca_qp *qp, struct shca_req_wqe *w)
{
	w->direct = shca_req_may_go_direct(qp);
	shca_qp_stat_inc(qp, w->direct ? SHCA_STAT_TX_DIRECT_MSGS :
					 SHCA_STAT_TX_WIRE_MSGS);
	if (w->direct)
		w->mtu = SHCA_DIRECT_SEG;
	else
		w->mtu = shca_ib_mtu_to_bytes(READ_ONCE(qp->attr.path_mtu)) ?: 256;
	w->npkts = shca_rc_npkts(w->len, w->mtu,
				 w->hdr.opcode == SHCA_OP_RDMA_READ);
	if (w->hdr.opcode != SHCA_OP_RDMA_READ && shca_req_is_rd_atomic(w))
		w->npkts = 1;
	w->first_psn = qp->req.psn;
	w->sent = 0;
	w->acked = 0;
	w->seg_end = 0;
	w->started = true;
}

/* Bookkeeping after packet(s) [sent, sent + n) of @w went out. */
static void shca_req_sent(struct shca_qp *qp, struct shca_req_wqe *w, u32 n)
{
	struct shca_req *req = &qp->req;
	u32 end = shca_psn_add(req->psn, n);
	bool fresh = shca_psn_after(end, req->next_psn);

	req->psn = end;
	w->sent += n;
	if (!w->direct && (!req->wire_sent ||
			   shca_psn_before(req->wire_end, req->psn))) {
		req->wire_sent = true;
		req->wire_end = req->psn;
	}
	if (qp->ibqp.qp_type == IB_QPT_UC) {
		req->next_psn = req->psn;
		req->una = req->psn;
		if (w->sent == w->npkts) {
			req->cur++;
			shca_req_retire(qp, IB_WC_SUCCESS);
		}
		return;
	}
	shca_req_rtt_start(qp, fresh, w->direct);
	if (!shca_psn_before(req->psn, req->next_psn))
		req->next_psn = req->psn;
	if (!timer_pending(&req->rto_timer))
		shca_req_arm_rto(qp);
	if (w->sent == w->npkts)
		req->cur++;
}

/*
 * AckReq at least every SHCA_REQ_ACKREQ_EVERY packets and twice per
 * window, so that a responder that acknowledges only on request (rxe)
 * keeps a small window moving.
 */
static u32 shca_req_ackreq_every(const struct shca_req *req)
{
	return clamp_t(u32, req->win.cur / 2, 1, SHCA_REQ_ACKREQ_EVERY);
}

/*
 * How many response PSNs the next READ request of @w asks for, or 0 if it
 * must wait (shca_rc_read_seg_end()).  A READ's responses come as one
 * burst the requester cannot pace, so a READ larger than the window is
 * split into requests of at most a window each, the next one sent once
 * every response to the previous one arrived.  So a WQE has one READ
 * request outstanding (max_rd_atomic counts WQEs), and no READ brings
 * more responses in flight than the window allows.  The responder sees
 * ordinary READ requests, each for consecutive PSNs and bytes.  A resend
 * after a go-back asks for the rest of the request it repeats, never
 * beyond: a responder answers a duplicate READ only inside the original.
 * Context: SQ engine.
 */
static u32 shca_req_read_seg(const struct shca_qp *qp,
			     struct shca_req_wqe *w)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	u32 win = qp->req.win.cur;
	int room;

	/* on the wire, no larger than the device's room (at least MIN_WIN) */
	if (!w->direct) {
		room = SHCA_DEV_WIRE_BUDGET - atomic_read(&sdev->wire_inflight);
		win = min_t(u32, win, max_t(int, SHCA_REQ_MIN_WIN, room));
	}
	w->seg_end = shca_rc_read_seg_end(w->sent, w->seg_end, w->acked,
					  w->npkts, win);
	return w->seg_end - w->sent;
}

/*
 * The wire's share of the device: every RC QP's wire PSNs in flight
 * (requests, and the responses a READ asks for) count against
 * SHCA_DEV_WIRE_BUDGET, so that many QPs together never put more on the
 * wire than the receiving side drains in far less than a retransmit
 * timeout.  req.wire_charge is what this QP has counted in
 * sdev->wire_inflight; shca_req_wire_charge() brings it up to date after
 * anything that moves req.psn or req.una.
 * Context: SQ engine.
 */
static u32 shca_req_wire_inflight(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	if (!req->wire_sent || !shca_psn_before(req->una, req->wire_end))
		return 0;
	return shca_psn_mask(req->wire_end - req->una);
}

static void shca_req_wire_charge(struct shca_qp *qp)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_req *req = &qp->req;
	u32 now = shca_req_wire_inflight(qp);

	if (now == req->wire_charge)
		return;
	atomic_add((int)now - (int)req->wire_charge, &sdev->wire_inflight);
	req->wire_charge = now;
}

/* Context: destroy, once the QP's last reference is gone. */
static void shca_req_wire_discharge(struct shca_qp *qp)
{
	atomic_sub(qp->req.wire_charge,
		   &to_sdev(qp->ibqp.device)->wire_inflight);
	qp->req.wire_charge = 0;
}

/*
 * May @n more wire PSNs go out, with @inflight of ours in flight?  Always
 * with nothing of ours in flight, and up to SHCA_REQ_MIN_WIN (so every
 * QP moves, and a QP that waits has responses to come back with), beyond
 * that while the device has room.
 */
static bool shca_req_wire_room(struct shca_qp *qp, u32 inflight, u32 n)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);

	return !inflight || inflight + n <= SHCA_REQ_MIN_WIN ||
	       atomic_read(&sdev->wire_inflight) + n <= SHCA_DEV_WIRE_BUDGET;
}

/*
 * Send the next packet of @w (a whole READ request counts as one).
 * Return: true if it went out, false if flow control holds it.
 * Context: SQ engine.
 */
static bool shca_req_step(struct shca_qp *qp, struct shca_req_wqe *w)
{
	struct shca_req *req = &qp->req;
	bool rc = shca_qp_is_reliable(qp->ibqp.qp_type);
	u32 k = w->sent, n = 1, inflight;
	bool ackreq;
	int err;

	if (w->hdr.opcode == SHCA_OP_RDMA_READ) {
		n = shca_req_read_seg(qp, w);
		if (!n)
			return false;	/* the responses will bring us back */
	}
	/* a READ request larger than what is left of the window goes alone */
	inflight = shca_psn_mask(req->psn - req->una);
	if (rc && inflight && inflight + n > req->win.cur)
		return false;
	if (rc && !w->direct && !shca_req_wire_room(qp, inflight, n))
		return false;	/* our own ACKs bring us back */
	ackreq = rc && (k + n == w->npkts ||
			++req->since_ackreq >= shca_req_ackreq_every(req) ||
			inflight + n >= req->win.cur ||
			(!w->direct &&
			 !shca_req_wire_room(qp, inflight + n, 1)));
	if (ackreq)
		req->since_ackreq = 0;
	err = shca_req_xmit(qp, w, k, ackreq);
	if (err) {
		shca_req_fail(qp, w, err == -EINVAL ? IB_WC_LOC_QP_OP_ERR :
						      IB_WC_LOC_PROT_ERR);
		return false;
	}
	shca_req_sent(qp, w, n);
	shca_req_wire_charge(qp);
	return true;
}

/* The WQE to send next, fetching a new one if needed, or NULL. */
static struct shca_req_wqe *shca_req_next(struct shca_qp *qp)
{
	struct shca_req_wqe *w;

	if (qp->req.cur != qp->req.fetch)
		return shca_req_wqe_at(qp, qp->req.cur);
	w = shca_req_fetch(qp);
	if (w && w->status != IB_WC_SUCCESS) {
		shca_req_fail(qp, w, w->status);
		return NULL;
	}
	return w;
}

/*
 * Execute the local operation @w once everything before it completed.
 * Return: true if it was executed (successfully or not).
 * Context: SQ engine.
 */
static bool shca_req_local(struct shca_qp *qp, struct shca_req_wqe *w)
{
	enum ib_wc_status st;

	if (qp->req.cur != qp->req.head)
		return false;	/* an ACK or response will bring us back */
	st = shca_local_op(qp, &w->hdr);
	if (st != IB_WC_SUCCESS) {
		shca_req_fail(qp, w, st);
		return true;
	}
	qp->req.cur++;
	shca_req_retire(qp, IB_WC_SUCCESS);
	return true;
}

/*
 * Send packets until nothing may be sent or the budget is used up.
 * Return: false if the budget ran out.
 * Context: SQ engine.
 */
static bool shca_req_send(struct shca_qp *qp)
{
	u32 budget = SHCA_SQ_BUDGET;
	struct shca_req_wqe *w;

	while (budget) {
		enum ib_qp_state state = READ_ONCE(qp->state);

		if (qp->req.rnr_wait || READ_ONCE(qp->dying) ||
		    (state != IB_QPS_RTS && state != IB_QPS_SQD))
			return true;
		w = shca_req_next(qp);
		if (!w)
			return true;
		if (shca_req_is_local(w)) {
			if (!shca_req_local(qp, w) ||
			    READ_ONCE(qp->state) == IB_QPS_ERR)
				return true;
			budget--;
			continue;
		}
		if (!w->started) {
			if (!shca_req_may_start(qp, w))
				return true;
			shca_req_start(qp, w);
		}
		if (!shca_req_step(qp, w))
			return true;
		budget--;
	}
	return false;
}

/* ---- error state ---- */

/* Complete every unfetched user WQE with a flush error. */
static void shca_req_flush_ring(struct shca_qp *qp)
{
	struct shca_ring *ring = &qp->sq.ring;
	struct shca_send_wqe hdr;
	u32 prod;

	/* pairs with the producer's release of prod after writing WQEs */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (!shca_ring_idx_valid(prod, ring->kcons, ring->entries))
		return;
	while (ring->kcons != prod) {
		memcpy(&hdr, shca_ring_entry(ring, ring->kcons), sizeof(hdr));
		shca_req_pop(qp);	/* the slot is free before the CQE */
		shca_req_complete(qp, &hdr, 0, IB_WC_WR_FLUSH_ERR);
	}
}

/*
 * End every queued internal operation with a flush error; those queued
 * meanwhile (by a done()) wait for the next run.  Context: SQ engine.
 */
static void shca_req_flush_iops(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	unsigned long flags;
	LIST_HEAD(queued);

	if (!shca_req_iop_queued(req))
		return;
	spin_lock_irqsave(&req->iop_lock, flags);
	list_splice_init(&req->iops, &queued);
	spin_unlock_irqrestore(&req->iop_lock, flags);
	shca_req_iops_done(qp, &queued, IB_WC_WR_FLUSH_ERR);
}

/*
 * Error state: stop the timers, complete the shadow WQEs in order (a
 * failed one with its own status), then every posted WQE with
 * IB_WC_WR_FLUSH_ERR, then end the queued internal operations likewise.
 * Context: SQ engine.
 */
static void shca_req_flush(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	shca_req_disarm(qp, &req->rto_timer);
	shca_req_disarm(qp, &req->rnr_timer);
	req->rnr_wait = false;
	req->wire_sent = false;		/* nothing is waited for any more */
	while (req->head != req->fetch) {
		struct shca_req_wqe *w = shca_req_wqe_at(qp, req->head);

		shca_req_retire(qp, w->status != IB_WC_SUCCESS ? w->status :
				IB_WC_WR_FLUSH_ERR);
	}
	req->cur = req->head;
	shca_req_flush_ring(qp);
	req->ufetch = qp->sq.ring.kcons;
	shca_req_flush_iops(qp);
}

/* ---- timer expiries ---- */

/* Context: SQ engine. */
static void shca_req_rnr_expired(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	if (!req->rnr_wait)
		return;
	req->rnr_wait = false;
	shca_req_back_to(qp, req->rnr_psn, false);
	shca_req_arm_rto(qp);
}

/*
 * Resend early if an early resend is due (shca_req_probe_due()): from
 * the oldest unacknowledged PSN, as a timeout would, with the window
 * halved as for a sequence NAK, but neither retry_cnt taken nor the
 * timeout's period restarted.  Never to a peer on this host, whose
 * packets are not lost on a wire (a wait there is the host's, see
 * shca_direct_dest_holds()), and not while this device's transmit queue
 * holds packets (what waits there is not lost either: the probe waits
 * its time again, as a timeout is held).  Counted in rc_probes and, as
 * any go-back, rc_retransmits.  Then the timer is armed for what comes
 * next.
 * Context: SQ engine.
 */
static void shca_req_probe(struct shca_qp *qp, unsigned long due, u64 rto_ns)
{
	struct shca_req *req = &qp->req;
	unsigned long at;

	if (!shca_req_probe_due(qp, rto_ns, &at) || time_before(jiffies, at))
		return;
	if (atomic_read(&to_sdev(qp->ibqp.device)->tx_inflight)) {
		/* this device still sends: not lost yet, wait once more */
		req->probe_start = jiffies;
		return;
	}
	if (shca_direct_peer_is_local(qp)) {
		req->probes = SHCA_RC_PROBES_MAX;	/* none this period */
		return;
	}
	req->probes++;
	req->probe_start = jiffies;
	if (shca_req_go_back(qp, req->una, false)) {
		shca_qp_stat_inc(qp, SHCA_STAT_RC_PROBES);
		shca_rc_win_loss(&req->win, false);
	}
	shca_req_arm_rto_at(qp, due, rto_ns);
}

/* Context: SQ engine. */
static void shca_req_rto_expired(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	u64 ns = shca_req_rto_ns(qp);
	unsigned long due;

	if (!ns || req->rnr_wait || req->una == req->next_psn)
		return;
	due = shca_req_rto_due(qp, ns);
	if (time_before(jiffies, due)) {
		/*
		 * An early resend's time, or progress restarted the timer
		 * after it had fired.
		 */
		shca_req_probe(qp, due, ns);
		if (!timer_pending(&req->rto_timer))
			shca_req_arm_rto_at(qp, due, ns);
		return;
	}
	if (req->rto_held < SHCA_RC_RTO_HELD_MAX &&
	    shca_direct_dest_holds(qp)) {
		/* not lost: queued on this host; wait a whole period more */
		req->rto_held++;
		shca_qp_stat_inc(qp, SHCA_STAT_RC_TIMEOUTS_HELD);
		shca_req_arm_rto(qp);
		return;
	}
	shca_qp_stat_inc(qp, SHCA_STAT_RC_TIMEOUTS);
	trace_shca_timeout(qp, req->una, req->retry.left);
	ibdev_dbg(qp->ibqp.device,
		  "qp %u: timeout una %#x next %#x psn %#x retries %u, device tx queue %d\n",
		  qp->ibqp.qp_num, req->una, req->next_psn, req->psn,
		  req->retry.left,
		  atomic_read(&to_sdev(qp->ibqp.device)->tx_inflight));
	if (!shca_rc_retry_take(&req->retry)) {
		shca_req_fail(qp, shca_req_wqe_at(qp, qp->req.head),
			      IB_WC_RETRY_EXC_ERR);
		return;
	}
	shca_rc_win_loss(&req->win, true);
	shca_req_go_back(qp, req->una, false);
	shca_req_arm_rto(qp);
}

/*
 * The timers' events.  @drained: this pass consumed every queued response.
 * Context: SQ engine.
 */
static void shca_req_events(struct shca_qp *qp, bool drained)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	/* shca_req_responses() looked at the held responses already */
	clear_bit(SHCA_REQ_EV_HOLD, &qp->req.events);
	if (state != IB_QPS_RTS && state != IB_QPS_SQD) {
		clear_bit(SHCA_REQ_EV_RNR, &qp->req.events);
		clear_bit(SHCA_REQ_EV_RTO, &qp->req.events);
		return;
	}
	if (test_and_clear_bit(SHCA_REQ_EV_RNR, &qp->req.events))
		shca_req_rnr_expired(qp);
	/*
	 * Responses left queued when this pass's budget ran out may be the
	 * progress the timer did not see: the timeout is judged after
	 * they are consumed, in the next pass (the event keeps the engine
	 * pending).
	 */
	if (!drained)
		return;
	if (test_and_clear_bit(SHCA_REQ_EV_RTO, &qp->req.events))
		shca_req_rto_expired(qp);
}

/* ---- the engine ---- */

/*
 * Consume queued responses, counting them in comp_done for the requests
 * that wait for them (shca_sq_catch_up()).
 * Return: false if the budget ran out.
 */
static bool shca_req_responses(struct shca_qp *qp)
{
	u32 budget = SHCA_RX_BUDGET;
	struct sk_buff *skb;
	bool done = true;

	while ((skb = skb_dequeue(&qp->comp_queue))) {
		u32 una = qp->req.una;
		bool held = false;

		if (!READ_ONCE(qp->dying) && shca_rx_verify(qp, skb)) {
			held = shca_comp_rx(qp, skb);
			/* progress may have filled a held response's gap */
			if (!held && una != qp->req.una)
				shca_comp_rerun(qp);
		}
		if (!held)
			kfree_skb(skb);
		WRITE_ONCE(qp->comp_done, qp->comp_done + 1);
		shca_qp_put(qp);	/* the skb's reference */
		if (!--budget) {
			done = false;
			break;
		}
	}
	if (budget != SHCA_RX_BUDGET)
		shca_sq_consumed_more(qp);
	if (done)
		shca_comp_hold_check(qp);
	return done;
}

/**
 * shca_req_take_responses - consume queued responses, and nothing else
 * @qp: RC/UC/XRC initiator QP
 *
 * For a run that must not send (shca_sq_take_responses()); the sq_work
 * each of these responses queued on arrival does the rest of a pass.
 * Context: SQ engine (qp->sq_engine held).
 */
void shca_req_take_responses(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->sq_engine);
	shca_req_responses(qp);
}

/* One pass.  Return: false if a budget ran out.  Context: SQ engine. */
static bool shca_req_run(struct shca_qp *qp)
{
	bool done = shca_req_responses(qp);

	if (READ_ONCE(qp->dying)) {
		/* the timers are stopped or about to be: nothing to do */
		clear_bit(SHCA_REQ_EV_RNR, &qp->req.events);
		clear_bit(SHCA_REQ_EV_RTO, &qp->req.events);
		clear_bit(SHCA_REQ_EV_HOLD, &qp->req.events);
		return done;
	}
	shca_req_events(qp, done);
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		shca_req_flush(qp);
		return done;
	}
	return shca_req_send(qp) && done;
}

/*
 * Would the engine fetch a new shadow now: RTS, no RNR wait, everything
 * fetched is sent (else an ACK or response brings the engine back), and
 * an internal operation is queued or the SQ ring has a WQE (a producer
 * index @prod, @valid for the ring, other than ufetch: copied, or found
 * broken) where shca_req_fetch() would look?
 */
static bool shca_req_may_fetch(struct shca_qp *qp, bool valid, u32 prod)
{
	struct shca_req *req = &qp->req;

	if (READ_ONCE(qp->state) != IB_QPS_RTS || req->rnr_wait ||
	    req->cur != req->fetch)
		return false;
	switch (shca_req_src(qp)) {
	case SHCA_REQ_SRC_IOP:
		return true;
	case SHCA_REQ_SRC_USER:
		return valid && prod != req->ufetch;
	default:
		return false;
	}
}

/*
 * Is there work the engine could do right now?  Queued internal
 * operations are work in the error state (flush) and whenever they may
 * be fetched.  Context: SQ engine.
 */
bool shca_req_pending(struct shca_qp *qp)
{
	struct shca_ring *ring = &qp->sq.ring;
	struct shca_req *req = &qp->req;
	bool valid;
	u32 prod;

	lockdep_assert_held(&qp->sq_engine);
	if (!skb_queue_empty(&qp->comp_queue))
		return true;
	if (READ_ONCE(qp->dying))
		return false;
	if (READ_ONCE(req->events))
		return true;
	/* pairs with the producer's release of prod */
	prod = smp_load_acquire(&ring->ctl->prod);
	valid = shca_ring_idx_valid(prod, ring->kcons, ring->entries);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return shca_req_iop_queued(req) ||
		       (valid && prod != ring->kcons);
	return shca_req_may_fetch(qp, valid, prod);
}

/**
 * shca_req_resumes - will the engine run again without a doorbell?
 * @qp: RC/UC/XRC initiator QP
 *
 * While requests wait for their responses, the ACKs (sq_work) or the
 * retransmit timer bring the engine back; during an RNR wait, the RNR
 * timer does.  Without a retransmit timer (timeout 0: wait for ever) only
 * an ACK does, and a lost last packet or ACK brings none: then the QP
 * moves again only when a new post's packets draw a sequence NAK or an
 * ACK, so that post must not skip its doorbell.
 * Context: SQ engine.
 */
bool shca_req_resumes(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	enum ib_qp_state state = READ_ONCE(qp->state);

	lockdep_assert_held(&qp->sq_engine);
	if (READ_ONCE(qp->dying) ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD) ||
	    !shca_qp_is_reliable(qp->ibqp.qp_type))
		return false;
	return req->rnr_wait ||
	       (shca_req_rto_ns(qp) && shca_psn_before(req->una, req->next_psn));
}

/**
 * shca_req_pass - one pass of the RC/UC requester and completer
 * @qp: RC/UC QP; shca_sq_work() holds a reference for us
 * @passes: passes left in this run of the work item
 *
 * Return: false when the engine must yield (work left, or out of passes).
 * Context: SQ engine (process, qp->sq_engine held), may sleep.
 */
bool shca_req_pass(struct shca_qp *qp, u32 *passes)
{
	bool more;

	lockdep_assert_held(&qp->sq_engine);
	more = shca_req_run(qp);
	shca_req_wire_charge(qp);	/* ACKs moved una, a flush ended all */
	return more && --*passes;
}

/* ---- QP hooks (rc.h) ---- */

/*
 * Does @qp take internal operations: an RC QP on a tag matching SRQ?
 * ib_core sets ibqp.srq before it calls create_qp.
 */
bool shca_req_wants_iops(const struct shca_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC && qp->ibqp.srq &&
	       qp->ibqp.srq->srq_type == IB_SRQT_TM;
}

/*
 * The shadow queue: as many slots as the SQ ring, plus room for internal
 * operations on a QP that takes them, each slot holding what an SQ entry
 * can describe (the entry's stride less its header: qp->cap's SGEs or
 * inline bytes, whichever takes more).  Context: process, may sleep.
 */
int shca_req_init(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	u32 body = 0;		/* an XRC target has no SQ ring */

	if (qp->sq.ring.entries)
		body = shca_wqe_inline(qp->sq.ring.entry_shift,
				       sizeof(struct shca_send_wqe));

	req->iop_cap = shca_req_wants_iops(qp);
	req->nwqes = shca_req_shadow_entries(qp->sq.ring.entries,
					     req->iop_cap);
	req->wstride = ALIGN(offsetof(struct shca_req_wqe, inl) + body,
			     __alignof__(struct shca_req_wqe));
	__skb_queue_head_init(&req->held);
	req->wqes = shca_kvzalloc(array_size(req->nwqes, req->wstride),
				  shca_gfp_array(qp->user));
	if (!req->wqes)
		return -ENOMEM;
	spin_lock_init(&req->iop_lock);
	INIT_LIST_HEAD(&req->iops);
	shca_rc_win_reset(&req->win);
	timer_setup(&req->rto_timer, shca_req_rto_fn, 0);
	timer_setup(&req->rnr_timer, shca_req_rnr_fn, 0);
	timer_setup(&req->hold_timer, shca_req_hold_fn, 0);
	return 0;
}

/* Context: process, qp->state_lock held; SQ engine sends nothing yet. */
void shca_req_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		     int mask)
{
	struct shca_req *req = &qp->req;

	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_SQ_PSN) {
		req->psn = attr->sq_psn & 0xffffff;
		req->una = req->psn;
		req->next_psn = req->psn;
		/* the next engine pass gives back what was counted */
		req->wire_sent = false;
		req->rto_held = 0;
		req->rtt_on = false;
		req->rtt = (struct shca_rc_rtt){};
		shca_rc_win_reset(&req->win);
		/* responses of an earlier connection (the timer finds none) */
		__skb_queue_purge(&req->held);
	}
	if (mask & IB_QP_RETRY_CNT)
		shca_rc_retry_init_cnt(&req->retry, attr->retry_cnt);
	if (mask & IB_QP_RNR_RETRY)
		shca_rc_retry_init_rnr(&req->rnr, attr->rnr_retry);
}

/*
 * Destroy: refuse new internal operations and end every one still held
 * with a flush error, those in shadows first (in send-queue order), then
 * the queued ones.  No engine run touches the shadows once qp->dying is
 * set; qp->sq_engine is held for the done() calls all the same.
 * Context: process, may sleep.
 */
static void shca_req_close_iops(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	unsigned long flags;
	LIST_HEAD(queued);
	u32 idx;

	if (!req->iop_cap)
		return;
	spin_lock_irqsave(&req->iop_lock, flags);
	req->iop_closed = true;
	list_splice_init(&req->iops, &queued);
	spin_unlock_irqrestore(&req->iop_lock, flags);
	mutex_lock(&qp->sq_engine);
	for (idx = req->head; idx != req->fetch; idx++) {
		struct shca_req_wqe *w = shca_req_wqe_at(qp, idx);
		struct shca_req_iop *iop = w->iop;

		if (!iop)
			continue;
		w->iop = NULL;
		iop->done(qp, iop, IB_WC_WR_FLUSH_ERR);	/* may free it */
	}
	shca_req_iops_done(qp, &queued, IB_WC_WR_FLUSH_ERR);
	mutex_unlock(&qp->sq_engine);
}

/**
 * shca_req_post_iop() - queue an internal operation on the requester
 * @qp: RC QP on a tag matching SRQ; the caller holds a reference
 * @iop: the operation, filled in; the caller's until @iop->done()
 *
 * Queues @iop under req.iop_lock and queues sq_work.  The SQ engine takes
 * it into the next free shadow slot ahead of the user's SQ ring (RTS
 * only; it waits in the queue in the other states), and calls
 * @iop->done() once it completes, fails, is flushed in the error state
 * or is dropped at destroy (see struct shca_req_iop).
 *
 * Context: any, does not sleep (the TM code calls it from qp->rq_work).
 * Return: 0, or -EINVAL (done() is not called) if @qp is not RC, takes
 * no internal operations or is being destroyed.
 */
int shca_req_post_iop(struct shca_qp *qp, struct shca_req_iop *iop)
{
	struct shca_req *req = &qp->req;
	unsigned long flags;
	int err = 0;

	if (qp->ibqp.qp_type != IB_QPT_RC || !req->iop_cap || !iop->done)
		return -EINVAL;
	spin_lock_irqsave(&req->iop_lock, flags);
	if (req->iop_closed || READ_ONCE(qp->dying))
		err = -EINVAL;
	else
		list_add_tail(&iop->node, &req->iops);
	spin_unlock_irqrestore(&req->iop_lock, flags);
	/* @iop may be done and freed already: not touched from here on */
	if (!err)
		shca_qp_queue(qp, &qp->sq_work);
	return err;
}

/*
 * Destroy, after qp->dying is set: let a running sq_work finish (it arms
 * no timer once dying is visible), stop the timers and end the internal
 * operations still held.
 * Context: process, may sleep.
 */
void shca_req_stop(struct shca_qp *qp)
{
	shca_sq_sync(qp);
	if (del_timer_sync(&qp->req.rto_timer))
		shca_qp_put(qp);
	if (del_timer_sync(&qp->req.rnr_timer))
		shca_qp_put(qp);
	if (del_timer_sync(&qp->req.hold_timer))
		shca_qp_put(qp);
	mutex_lock(&qp->sq_engine);
	shca_comp_hold_drop(qp);
	mutex_unlock(&qp->sq_engine);
	shca_req_close_iops(qp);
}

/*
 * Context: process, after the last QP reference is gone (or a failed
 * create).  Internal operations were ended by shca_req_stop(); this only
 * catches any left, should a path ever skip it.
 */
void shca_req_fini(struct shca_qp *qp)
{
	shca_req_wire_discharge(qp);
	shca_req_close_iops(qp);
	__skb_queue_purge(&qp->req.held);
	kvfree(qp->req.wqes);
	qp->req.wqes = NULL;
}
