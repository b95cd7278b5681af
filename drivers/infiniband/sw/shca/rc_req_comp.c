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
 */
#include "rc_req_priv.h"
#include "psn.h"
#include "wire.h"

static void shca_comp_bad(struct shca_qp *qp)
{
	shca_stat_inc(to_sdev(qp->ibqp.device), SHCA_STAT_RC_BAD_RESP);
}

static void shca_comp_dup(struct shca_qp *qp)
{
	shca_stat_inc(to_sdev(qp->ibqp.device), SHCA_STAT_RC_DUP_ACKS);
}

/* Next response PSN a READ/atomic WQE waits for. */
static u32 shca_comp_expect(const struct shca_req_wqe *w)
{
	return shca_psn_add(w->first_psn, w->acked);
}

/*
 * Acknowledge every PSN up to and including @last.
 * Context: SQ engine.
 */
static void shca_comp_acked(struct shca_qp *qp, u32 last)
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
	if (implicit_nak)
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
	shca_comp_acked(qp, shca_psn_add(psn, -1));
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
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	u32 psn = pkt->hdr.psn;
	u8 syn = pkt->hdr.syndrome;

	switch (shca_rc_aeth_kind(syn)) {
	case SHCA_RC_AETH_ACK:
		switch (shca_rc_ack_classify(psn, qp->req.una,
					     qp->req.next_psn)) {
		case SHCA_RC_ACK_NEW:
			shca_comp_acked(qp, psn);
			break;
		case SHCA_RC_ACK_DUP:
			shca_comp_dup(qp);
			break;
		default:
			shca_comp_bad(qp);
		}
		break;
	case SHCA_RC_AETH_RNR:
		shca_stat_inc(sdev, SHCA_STAT_RC_RNR_NAKS_RCVD);
		if (shca_comp_ack_before(qp, psn))
			shca_req_rnr_wait(qp, psn, syn & 0x1f);
		break;
	case SHCA_RC_AETH_NAK_SEQ:
		shca_stat_inc(sdev, SHCA_STAT_RC_SEQ_NAKS_RCVD);
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
			if (shca_psn_after(psn, expect))
				shca_req_go_back(qp, expect, true);
			else
				shca_comp_dup(qp);
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
	if (w->hdr.opcode != SHCA_OP_RDMA_READ || pkt->pay_len != want ||
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
	if (w->hdr.opcode == SHCA_OP_RDMA_READ) {
		shca_comp_bad(qp);
		return;
	}
	if (shca_comp_scatter(qp, w, 0, &orig, sizeof(orig))) {
		shca_req_fail(qp, w, IB_WC_LOC_PROT_ERR);
		return;
	}
	shca_comp_got(qp, w, pkt->hdr.psn);
}

/**
 * shca_comp_rx - handle one response packet
 * @qp: QP the packet was steered to
 * @skb: the packet; not consumed
 *
 * Context: SQ engine.
 */
void shca_comp_rx(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct shca_wire_pkt pkt;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return;		/* nothing outstanding to answer */
	/* rq.c let only responses of the QP's own transport through */
	if (!shca_qp_is_reliable(qp->ibqp.qp_type) ||
	    shca_wire_parse(skb->data + cb->bth_off, cb->blen, &pkt)) {
		shca_comp_bad(qp);
		return;
	}
	switch (pkt.hdr.opcode & SHCA_OPC_MASK) {
	case SHCA_OPC_ACKNOWLEDGE:
		shca_comp_ack(qp, &pkt);
		break;
	case SHCA_OPC_ATOMIC_ACKNOWLEDGE:
		shca_comp_atomic(qp, &pkt);
		break;
	case SHCA_OPC_RDMA_READ_RESPONSE_FIRST:
	case SHCA_OPC_RDMA_READ_RESPONSE_MIDDLE:
	case SHCA_OPC_RDMA_READ_RESPONSE_LAST:
	case SHCA_OPC_RDMA_READ_RESPONSE_ONLY:
		shca_comp_read(qp, &pkt,
			       skb->data + cb->bth_off + pkt.hdr_len);
		break;
	default:
		shca_comp_bad(qp);
	}
}
