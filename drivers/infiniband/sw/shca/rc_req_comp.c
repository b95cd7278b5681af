// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RC completer - ACKs, NAKs, READ responses and atomic ACKs from
 * qp->comp_queue.  Runs in SQ engine runs only (see rc_req.c).  User
 * WQEs and internal operations are alike here: retiring a shadow
 * (shca_req_retire()) does what each needs.
 *
 * Rules:
 *  - an ACK acknowledges every PSN up to and including its own
 *    (coalescing);
 *  - a READ response or atomic ACK implicitly acknowledges the SEND and
 *    WRITE messages before it;
 *  - an ACK that reaches past a READ/atomic still missing its response
 *    is an implicit NAK: resend from the first missing response PSN;
 *  - READ responses must arrive in order; a gap re-requests the rest of
 *    the READ from the first missing PSN (once per gap);
 *  - anything stale is ignored, anything malformed dropped and counted.
 *
 * Either gap (an implicit NAK, a READ response or atomic ACK after the
 * one expected) may be reordering on this host rather than a loss: the
 * responder's ACKs go out inline, its READ responses through tx_work,
 * and two CPUs' receive backlogs may deliver them swapped (rc_resp.c,
 * "Reordering").  So, as the responder does with requests, the response
 * that shows the gap is held, when its peer QP is on this host
 * (shca_reorder_hold(), for as long as rc_resp.c holds): in arrival
 * order, at most SHCA_HOLD_MAX, and handled again (shca_comp_rerun())
 * whenever una moves.  Nothing is resent unless the hold runs out, or nothing may
 * bring the gap's packet any more (shca_comp_hold_check()): the held
 * responses are then handled once more, and the first gap goes back as
 * before.  rc_held_responses counts the holds, rc_held_expired those
 * that ran out.
 */
#include "rc_req_priv.h"
#include "hold.h"
#include "psn.h"
#include "shca_trace.h"
#include "wire.h"

static void shca_comp_bad(struct shca_qp *qp)
{
	shca_qp_stat_inc(qp, SHCA_STAT_RC_BAD_RESP);
}

static void shca_comp_dup(struct shca_qp *qp)
{
	shca_qp_stat_inc(qp, SHCA_STAT_RC_DUP_ACKS);
}

/*
 * The response in hand, of PSN @psn, shows a gap: hold it (see above)?
 * Context: SQ engine.  Return: true if it is held (the caller stops there).
 */
static bool shca_comp_hold(struct shca_qp *qp, u32 psn)
{
	struct shca_req *req = &qp->req;
	u32 n = skb_queue_len(&req->held);
	bool running = n || req->hold_rerun;

	if (!req->comp_skb ||
	    !shca_reorder_hold(qp, &req->hold_time, n, running, false))
		return false;
	if (!running)
		shca_req_arm_hold(qp);
	trace_shca_hold(qp, psn, 1);
	__skb_queue_tail(&req->held, req->comp_skb);
	req->comp_skb = NULL;
	if (!req->hold_rerun)
		shca_qp_stat_inc(qp, SHCA_STAT_RC_HELD_RESPONSES);
	return true;
}

/**
 * shca_comp_hold_drop - drop the held responses
 * @qp: RC/XRC initiator QP, leaving RTS or destroyed
 *
 * Context: SQ engine (qp->sq_engine held).
 */
void shca_comp_hold_drop(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->sq_engine);
	__skb_queue_purge(&qp->req.held);
	shca_req_disarm_hold(qp);
}

/**
 * shca_comp_rerun - handle the held responses again, in arrival order
 * @qp: RC/XRC initiator QP whose una moved
 *
 * Each is held again if its gap is still open and the hold was not ended;
 * the hold's time counts again from now (shca_hold_restart()).
 * Context: SQ engine.
 */
void shca_comp_rerun(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	struct sk_buff_head again;
	struct sk_buff *skb;

	lockdep_assert_held(&qp->sq_engine);
	if (skb_queue_empty(&req->held))
		return;
	shca_hold_restart(&req->hold_time, ktime_get_ns());
	__skb_queue_head_init(&again);
	skb_queue_splice_init(&req->held, &again);
	req->hold_rerun = true;
	while ((skb = __skb_dequeue(&again)))
		if (!shca_comp_rx(qp, skb))
			consume_skb(skb);
	req->hold_rerun = false;
	if (skb_queue_empty(&req->held))
		shca_req_disarm_hold(qp);
}

/**
 * shca_comp_hold_check - end the hold when it may
 * @qp: RC/XRC initiator QP, after its queued responses
 *
 * While the hold lasts (shca_reorder_hold_keep()), look again later;
 * else handle the held responses with the hold over: the first gap goes
 * back.  Out of RTS (SQD) they are dropped.
 * Context: SQ engine.
 */
void shca_comp_hold_check(struct shca_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct shca_req *req = &qp->req;

	lockdep_assert_held(&qp->sq_engine);
	if (skb_queue_empty(&req->held))
		return;
	if (READ_ONCE(qp->dying) ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD)) {
		shca_comp_hold_drop(qp);
		return;
	}
	if (shca_reorder_hold_keep(qp, &req->hold_time, &qp->comp_queue)) {
		shca_req_arm_hold(qp);
		return;
	}
	shca_qp_stat_inc(qp, SHCA_STAT_RC_HELD_EXPIRED);
	shca_hold_end(&req->hold_time);	/* each goes back or is handled */
	shca_comp_rerun(qp);
}

/* Next response PSN a READ/atomic WQE waits for. */
static u32 shca_comp_expect(const struct shca_req_wqe *w)
{
	return shca_psn_add(w->first_psn, w->acked);
}

/*
 * Acknowledge every PSN up to and including @last.  A positive ACK
 * (@ack) that shows a READ or atomic response missing may be held.
 * Context: SQ engine.
 */
static void shca_comp_acked(struct shca_qp *qp, u32 last, bool ack)
{
	struct shca_req *req = &qp->req;
	u32 una = shca_psn_add(last, 1);
	bool implicit_nak = false;

	while (req->head != req->fetch) {
		struct shca_req_wqe *w = shca_req_wqe_at(qp, req->head);

		if (!w->started)
			break;
		if (shca_req_is_rd_atomic(w)) {
			if (!shca_psn_before(last, shca_comp_expect(w))) {
				una = shca_comp_expect(w);
				implicit_nak = true;
			}
			break;
		}
		if (!shca_req_all_sent(w, req->next_psn) ||
		    shca_psn_before(last, shca_req_last_psn(w)))
			break;
		shca_req_retire(qp, IB_WC_SUCCESS);
	}
	shca_req_advance(qp, una);
	if (implicit_nak && !(ack && shca_comp_hold(qp, last)))
		shca_req_go_back(qp, una, true);
}

/*
 * Common entry of ACK/NAK handling: acknowledge what comes before @psn
 * (the NAKed PSN).  Return: true if @psn is now the oldest unacknowledged
 * PSN, i.e. the NAK applies.
 */
static bool shca_comp_ack_before(struct shca_qp *qp, u32 psn)
{
	struct shca_req *req = &qp->req;

	if (psn == req->una)
		return req->una != req->next_psn;
	if (shca_rc_ack_classify(shca_psn_add(psn, -1), req->una,
				 req->next_psn) != SHCA_RC_ACK_NEW) {
		shca_comp_dup(qp);
		return false;
	}
	shca_comp_acked(qp, shca_psn_add(psn, -1), false);
	return req->una == psn;
}

/* A NAK that ends the QP: invalid request, remote access or operation. */
static void shca_comp_nak_fatal(struct shca_qp *qp, u32 psn,
				enum ib_wc_status status)
{
	if (!shca_comp_ack_before(qp, psn))
		return;
	shca_req_fail(qp, shca_req_wqe_at(qp, qp->req.head), status);
}

/* Context: SQ engine. */
static void shca_comp_ack(struct shca_qp *qp, const struct shca_wire_pkt *pkt)
{
	u32 psn = pkt->hdr.psn;
	u8 syn = pkt->hdr.syndrome;

	switch (shca_rc_aeth_kind(syn)) {
	case SHCA_RC_AETH_ACK:
		switch (shca_rc_ack_classify(psn, qp->req.una,
					     qp->req.next_psn)) {
		case SHCA_RC_ACK_NEW:
			shca_comp_acked(qp, psn, true);
			break;
		case SHCA_RC_ACK_DUP:
			shca_comp_dup(qp);
			break;
		default:
			shca_comp_bad(qp);
		}
		break;
	case SHCA_RC_AETH_RNR:
		shca_qp_stat_inc(qp, SHCA_STAT_RC_RNR_NAKS_RCVD);
		if (shca_comp_ack_before(qp, psn))
			shca_req_rnr_wait(qp, psn, syn & 0x1f);
		break;
	case SHCA_RC_AETH_NAK_SEQ:
		shca_qp_stat_inc(qp, SHCA_STAT_RC_SEQ_NAKS_RCVD);
		/*
		 * A responder that RNR NAKed @psn may NAK the packets that
		 * were behind it as out of sequence: the RNR timer resends
		 * from @psn already.
		 */
		if (qp->req.rnr_wait && psn == qp->req.rnr_psn)
			break;
		if (shca_comp_ack_before(qp, psn))
			shca_req_go_back(qp, psn, true);
		break;
	case SHCA_RC_AETH_NAK_INV:
		shca_comp_nak_fatal(qp, psn, IB_WC_REM_INV_REQ_ERR);
		break;
	case SHCA_RC_AETH_NAK_ACCESS:
		shca_comp_nak_fatal(qp, psn, IB_WC_REM_ACCESS_ERR);
		break;
	case SHCA_RC_AETH_NAK_OP:
		shca_comp_nak_fatal(qp, psn, IB_WC_REM_OP_ERR);
		break;
	default:
		shca_comp_bad(qp);
	}
}

/*
 * The READ/atomic WQE a response with @psn answers.  SEND/WRITE WQEs
 * before it are implicitly acknowledged and retired on the way.
 * Return: the WQE, or NULL if the response is stale, out of sequence (a
 * go-back to the first missing PSN is started) or malformed.
 * Context: SQ engine.
 */
static struct shca_req_wqe *shca_comp_target(struct shca_qp *qp, u32 psn)
{
	struct shca_req *req = &qp->req;

	switch (shca_rc_ack_classify(psn, req->una, req->next_psn)) {
	case SHCA_RC_ACK_NEW:
		break;
	case SHCA_RC_ACK_DUP:
		shca_comp_dup(qp);
		return NULL;
	default:
		shca_comp_bad(qp);
		return NULL;
	}
	while (req->head != req->fetch) {
		struct shca_req_wqe *w = shca_req_wqe_at(qp, req->head);

		if (!w->started)
			break;
		if (shca_req_is_rd_atomic(w)) {
			u32 expect = shca_comp_expect(w);

			if (psn == expect)
				return w;
			if (shca_psn_after(psn, expect)) {
				if (!shca_comp_hold(qp, psn))
					shca_req_go_back(qp, expect, true);
			} else {
				shca_comp_dup(qp);
			}
			return NULL;
		}
		if (!shca_req_all_sent(w, req->next_psn) ||
		    !shca_psn_before(shca_req_last_psn(w), psn))
			break;
		shca_req_advance(qp, shca_psn_add(shca_req_last_psn(w), 1));
		shca_req_retire(qp, IB_WC_SUCCESS);
	}
	shca_comp_bad(qp);
	return NULL;
}

/* Scatter @len response bytes at byte @off of @w.  Context: SQ engine. */
static int shca_comp_scatter(struct shca_qp *qp, struct shca_req_wqe *w,
			     u64 off, void *data, u32 len)
{
	struct shca_sge_cursor cur;
	int err;

	if (!len)
		return 0;
	err = shca_req_cursor_at(qp, w, off, &cur);
	return err ?: shca_cursor_copy(&cur, data, len, true);
}

/* One response PSN of @w arrived intact.  Context: SQ engine. */
static void shca_comp_got(struct shca_qp *qp, struct shca_req_wqe *w, u32 psn)
{
	w->acked++;
	shca_req_advance(qp, shca_psn_add(psn, 1));
	if (w->acked == w->npkts)
		shca_req_retire(qp, IB_WC_SUCCESS);
}

/* Context: SQ engine. */
static void shca_comp_read(struct shca_qp *qp, const struct shca_wire_pkt *pkt,
			   void *payload)
{
	struct shca_req_wqe *w = shca_comp_target(qp, pkt->hdr.psn);
	u32 k, want;
	bool last;
	u64 off;

	if (!w)
		return;
	k = w->acked;
	last = !!(pkt->info->flags & SHCA_OPF_LAST);
	off = (u64)k * w->mtu;
	want = off < w->len ? min_t(u64, w->mtu, w->len - off) : 0;
	/* a FLUSH's answer: one READ RESPONSE ONLY without payload */
	if ((w->hdr.opcode != SHCA_OP_RDMA_READ &&
	     w->hdr.opcode != SHCA_OP_FLUSH) || pkt->pay_len != want ||
	    !shca_rc_read_last_ok(k, w->sent, w->npkts, last)) {
		shca_comp_bad(qp);
		return;
	}
	if (shca_comp_scatter(qp, w, off, payload, want)) {
		shca_req_fail(qp, w, IB_WC_LOC_PROT_ERR);
		return;
	}
	shca_comp_got(qp, w, pkt->hdr.psn);
}

/* Context: SQ engine. */
static void shca_comp_atomic(struct shca_qp *qp,
			     const struct shca_wire_pkt *pkt)
{
	struct shca_req_wqe *w = shca_comp_target(qp, pkt->hdr.psn);
	u64 orig = pkt->hdr.orig;

	if (!w)
		return;
	if (w->hdr.opcode == SHCA_OP_RDMA_READ ||
	    w->hdr.opcode == SHCA_OP_FLUSH) {
		shca_comp_bad(qp);
		return;
	}
	if (shca_comp_scatter(qp, w, 0, &orig, sizeof(orig))) {
		shca_req_fail(qp, w, IB_WC_LOC_PROT_ERR);
		return;
	}
	shca_comp_got(qp, w, pkt->hdr.psn);
}

/* One parsed response.  Context: SQ engine. */
static void shca_comp_pkt(struct shca_qp *qp, const struct shca_wire_pkt *pkt,
			  void *payload)
{
	switch (pkt->hdr.opcode & SHCA_OPC_MASK) {
	case SHCA_OPC_ACKNOWLEDGE:
		shca_comp_ack(qp, pkt);
		break;
	case SHCA_OPC_ATOMIC_ACKNOWLEDGE:
		shca_comp_atomic(qp, pkt);
		break;
	case SHCA_OPC_RDMA_READ_RESPONSE_FIRST:
	case SHCA_OPC_RDMA_READ_RESPONSE_MIDDLE:
	case SHCA_OPC_RDMA_READ_RESPONSE_LAST:
	case SHCA_OPC_RDMA_READ_RESPONSE_ONLY:
		shca_comp_read(qp, pkt, payload);
		break;
	default:
		shca_comp_bad(qp);
	}
}

/**
 * shca_comp_rx - handle one response packet
 * @qp: QP the packet was steered to
 * @skb: the packet
 *
 * Context: SQ engine.
 * Return: true if @skb was held (see above); else the caller frees it.
 */
bool shca_comp_rx(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool wire = !cb->seg;
	struct shca_wire_pkt pkt;
	bool held;

	lockdep_assert_held(&qp->sq_engine);
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;	/* nothing outstanding to answer */
	/* rx_demux.c let only responses of the QP's own transport through */
	if (!shca_qp_is_reliable(qp->ibqp.qp_type) ||
	    shca_wire_parse(skb->data + cb->bth_off, cb->blen, &pkt)) {
		shca_comp_bad(qp);
		return false;
	}
	/* the same-host path delivers in order: only the wire's are held */
	qp->req.comp_skb = wire ? skb : NULL;
	shca_comp_pkt(qp, &pkt, skb->data + cb->bth_off + pkt.hdr_len);
	held = wire && !qp->req.comp_skb;
	qp->req.comp_skb = NULL;
	return held;
}
