// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the RX engine of every QP type: each packet queued on a QP meets
 * its receive WQE here (UD, GSI), its responder (RC/UC/XRC, rc_resp.c)
 * or raw.c (RAW_PACKET).
 *
 * rx_demux.c queues each checked packet on its QP (the skb holds a QP
 * reference).  The RQ engine then matches each packet with a receive WQE,
 * writes the GRH and the payload and produces the completion; RC/UC/XRC
 * requests go to the responder (rc_resp.c).  An RQ engine run holds
 * qp->rq_engine: it is qp->rq_work, or a same-host sender that executes
 * its request in its own thread (shca_rq_inline(): UD sends, and the
 * requests of an RC/UC/XRC consumer that converses, engine_logic.h; on
 * the direct path, or on the wire when the request comes back up this
 * host's IP stack in the sender's thread, rx_demux.c).
 * The engine is the only consumer of the RQ and owns ring.kcons (its WQEs
 * leave the ring through rwqe.c); it also
 * flushes the RQ of a QP in the error state.
 * RAW_PACKET QPs get their frames from flow steering (flow.c) on the same
 * rx_queue; rq_work hands them to raw.c.
 */
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ipv6_stubs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "shca_trace.h"
#include "raw.h"
#include "rwqe.h"
#include "rq_logic.h"
#include "wire.h"

/*
 * The largest request payload a sender executes inline: a bigger copy
 * is worth a second CPU (rq_work) more than the wakeup it costs.
 */
#define SHCA_RQ_INLINE_MAX	4096

static void shca_rq_complete(struct shca_qp *qp, struct shca_cqe *cqe,
			     bool solicited)
{
	cqe->opcode = IB_WC_RECV;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->port_num = 1;
	shca_cq_post(to_scq(qp->ibqp.recv_cq), cqe, solicited);
}

/* The 40-byte GRH: IPv6 header, or IPv4 header in the last 20 bytes. */
static u8 shca_rx_grh(struct sk_buff *skb, u8 *grh)
{
	memset(grh, 0, SHCA_GRH_BYTES);
	if (ip_hdr(skb)->version == 4) {
		memcpy(grh + SHCA_GRH_BYTES - sizeof(struct iphdr),
		       ip_hdr(skb), sizeof(struct iphdr));
		return RDMA_NETWORK_IPV4;
	}
	memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	return RDMA_NETWORK_IPV6;
}

/* Write GRH + payload into the WQE's buffers.  Return: an ib_wc_status. */
static enum ib_wc_status shca_rx_scatter(struct shca_qp *qp,
					 const struct shca_rwqe *w,
					 struct sk_buff *skb, struct shca_cqe *cqe)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);
	struct shca_sge_cursor cur = {
		.sdev = to_sdev(qp->ibqp.device),
		.pd = shca_rq_pd(qp),
		.sge = w->sge,
		.num_sge = w->hdr.num_sge,
	};
	u8 grh[SHCA_GRH_BYTES];
	u64 total;
	int err;

	/* shca_rwqe_pop() checked the count and the lengths */
	shca_sge_total(w->sge, w->hdr.num_sge, &total);
	if (total < SHCA_GRH_BYTES + cb->pay_len)
		return IB_WC_LOC_LEN_ERR;
	cqe->network_hdr_type = shca_rx_grh(skb, grh);
	err = shca_cursor_copy(&cur, grh, sizeof(grh), true);
	if (!err)
		err = shca_cursor_copy(&cur, skb->data + cb->pay_off,
				       cb->pay_len, true);
	if (err)
		return IB_WC_LOC_PROT_ERR;
	cqe->byte_len = SHCA_GRH_BYTES + cb->pay_len;
	return IB_WC_SUCCESS;
}

static void shca_rx_fill_cqe(struct sk_buff *skb, struct shca_cqe *cqe)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);

	cqe->src_qp = cb->src_qpn;
	cqe->flags = SHCA_CQE_F_GRH;
	if (cb->opcode == (SHCA_TR_UD | SHCA_OPC_SEND_ONLY_WITH_IMMEDIATE)) {
		cqe->flags |= SHCA_CQE_F_IMM;
		cqe->imm_data = (__force u32)cb->imm;
	}
	cqe->pkey_index = 0;
	cqe->vlan_id = 0xffff;
	if (skb_mac_header_was_set(skb) &&
	    skb_mac_header_len(skb) >= ETH_HLEN)
		ether_addr_copy(cqe->smac, eth_hdr(skb)->h_source);
}

static bool shca_rx_accept(struct shca_qp *qp, struct sk_buff *skb)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY :
						     READ_ONCE(qp->attr.qkey);

	if (READ_ONCE(qp->dying) || (state != IB_QPS_RTR &&
				     state != IB_QPS_RTS) ||
	    (qp->ibqp.qp_type != IB_QPT_UD && qp->ibqp.qp_type != IB_QPT_GSI)) {
		shca_qp_stat_inc(qp, SHCA_STAT_RX_DROPPED);
		return false;
	}
	if (shca_rx_cb(skb)->qkey != qkey) {
		shca_qp_stat_inc(qp, SHCA_STAT_RX_BAD_QKEY);
		return false;
	}
	return true;
}

/* Deliver one packet to the RQ.  Context: RQ engine. */
static void shca_rx_one(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_cqe cqe = {};
	struct shca_rwqe w;
	int err;

	if (!shca_rx_accept(qp, skb))
		return;
	err = shca_rq_pop(qp, &w);
	if (err && err != -EBADMSG) {
		shca_qp_stat_inc(qp, err == -ENOENT ?
				 SHCA_STAT_RX_NO_RECV_WQE : SHCA_STAT_RX_DROPPED);
		if (err == -EIO)
			shca_rq_broken(qp);
		return;
	}
	cqe.wr_id = w.hdr.wr_id;
	cqe.status = err ? IB_WC_LOC_QP_OP_ERR :
			   shca_rx_scatter(qp, &w, skb, &cqe);
	if (cqe.status == IB_WC_SUCCESS)
		shca_rx_fill_cqe(skb, &cqe);
	shca_qp_stat_inc(qp, SHCA_STAT_RX_PACKETS);
	shca_rq_complete(qp, &cqe, shca_rx_cb(skb)->se);
	if (cqe.status != IB_WC_SUCCESS && cqe.status != IB_WC_LOC_LEN_ERR)
		shca_qp_set_error(qp);
}

/*
 * Complete every posted receive with a flush error, a malformed one too.
 * Context: RQ engine.
 */
static void shca_rq_flush(struct shca_qp *qp)
{
	struct shca_rwqe w;
	int err;

	for (;;) {
		struct shca_cqe cqe = { .status = IB_WC_WR_FLUSH_ERR };

		err = shca_rq_pop(qp, &w);
		if (err && err != -EBADMSG)
			break;
		cqe.wr_id = w.hdr.wr_id;
		shca_rq_complete(qp, &cqe, false);
	}
}

/*
 * The error state of a QP with an SRQ: the SRQ's WQEs belong to the other
 * QPs, so nothing is flushed; once the engine has let go of its own WQE,
 * tell the consumer that no more will be taken (IB_EVENT_QP_LAST_WQE_REACHED),
 * once per stay in the error state.
 * Context: RQ engine.
 */
static void shca_rq_last_wqe(struct shca_qp *qp)
{
	struct ib_qp *ibqp = &qp->ibqp;
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (READ_ONCE(qp->last_wqe_sent))
		return;
	WRITE_ONCE(qp->last_wqe_sent, true);
	trace_shca_async(&ev, ibqp->qp_num);
	if (ibqp->event_handler)
		ibqp->event_handler(&ev, ibqp->qp_context);
}

/*
 * Take one packet of @qp's rx_queue (a wire packet's ICRC is checked
 * first).  Its reference stays with the QP's caller.
 * Context: RQ engine (qp->rq_engine held), may sleep.
 */
static void shca_rq_one(struct shca_qp *qp, struct sk_buff *skb)
{
	lockdep_assert_held(&qp->rq_engine);
	if (!shca_rx_verify(qp, skb)) {
		kfree_skb(skb);		/* not intact: counted, dropped */
		return;
	}
	/* read by the SQ engine: does its consumer answer requests? */
	WRITE_ONCE(qp->rq_requests, qp->rq_requests + 1);
	if (shca_qp_is_conn(qp->ibqp.qp_type)) {
		if (shca_resp_rx(qp, skb))
			return;		/* held: the responder's now */
	} else if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET) {
		shca_raw_rx_one(qp, skb);
	} else {
		shca_rx_one(qp, skb);
	}
	consume_skb(skb);
}

/*
 * The end of an RQ engine run: the responder's batch end (coalesced ACK,
 * pending responses), another run if work is left, and the error state's
 * flush.  @parked: the request at the head of rx_queue waits for an SQ
 * engine run, which queues rq_work (shca_sq_catch_up()).
 * Context: RQ engine (qp->rq_engine held), may sleep.
 */
static void shca_rq_end(struct shca_qp *qp, bool parked)
{
	bool again = false;

	lockdep_assert_held(&qp->rq_engine);
	if (shca_qp_is_conn(qp->ibqp.qp_type))
		again = shca_resp_batch_end(qp);
	shca_tx_flush(to_sdev(qp->ibqp.device), &qp->rq_tx_batch);
	if (again || (!parked && !skb_queue_empty(&qp->rx_queue)))
		shca_qp_queue(qp, &qp->rq_work);
	if (READ_ONCE(qp->state) == IB_QPS_ERR && !READ_ONCE(qp->dying)) {
		if (qp->ibqp.srq)
			shca_rq_last_wqe(qp);
		else if (qp->rq.ring.ctl)
			shca_rq_flush(qp);
	}
}

/**
 * shca_rq_work - the receive engine of one QP
 * @work: qp->rq_work; the queuer took a QP reference for us
 *
 * Context: process (shca_wq), may sleep; takes qp->rq_engine.
 */
void shca_rq_work(struct work_struct *work)
{
	struct shca_qp *qp = container_of(work, struct shca_qp, rq_work);
	bool rc = shca_qp_is_conn(qp->ibqp.qp_type);
	u32 budget = SHCA_RX_BUDGET;
	bool parked = false;
	struct sk_buff *skb;

	mutex_lock(&qp->rq_engine);
	while (budget-- && (skb = skb_dequeue(&qp->rx_queue))) {
		if (rc && !shca_sq_catch_up(qp, shca_rx_cb(skb)->comp_mark)) {
			/* back, with its reference; an SQ engine run wakes us */
			skb_queue_head(&qp->rx_queue, skb);
			parked = true;
			break;
		}
		shca_rq_one(qp, skb);
		shca_qp_put(qp);	/* the skb's reference */
	}
	shca_rq_end(qp, parked);
	mutex_unlock(&qp->rq_engine);
	shca_qp_put(qp);
}

/*
 * May request @skb for @qp run in its sender's thread now: nothing queued
 * ahead of it, and no response that came before it left for the SQ
 * engine to consume first.  An inline run may not run @qp's SQ engine
 * (shca_sq_catch_up(): it would send while the sender's run is in
 * progress), but it may consume those responses if the engine is free
 * (shca_sq_take_responses()).
 * Context: process, may sleep; the sender's qp->sq_engine may be held.
 */
static bool shca_rq_inline_ok(struct shca_qp *qp, struct sk_buff *skb)
{
	return skb_queue_empty(&qp->rx_queue) &&
	       (!shca_qp_is_conn(qp->ibqp.qp_type) ||
		shca_sq_take_responses(qp, shca_rx_cb(skb)->comp_mark));
}

/**
 * shca_rq_inline - run @qp's RQ engine on one request, in its sender
 * @qp: the request's destination, referenced for @skb
 * @skb: a request that shca_rx_direct() left to the sender (parsed,
 *	admitted to @qp), or a wire request caught as it came back up
 *	this host's stack in the sender's thread (its ICRC still due)
 *
 * The sender executes its request at the destination itself, which
 * saves the wakeup of a worker per packet, and the responder's ACK comes
 * back to the sender's own engine run (shca_engine_loop()).  It may do
 * so only when the RQ engine is free and nothing must run before the
 * request (shca_rq_inline_ok()); else the request is queued for rq_work
 * as any other.  A request that finds responses waiting once it holds
 * the engine goes back to the head of the queue.
 * Context: process, may sleep; an SQ engine run of another QP (or of
 * @qp) holding nothing but its qp->sq_engine.  Takes qp->rq_engine and
 * qp->sq_engine only by trylock (shca_sq_take_responses()).
 */
void shca_rq_inline(struct shca_qp *qp, struct sk_buff *skb)
{
	might_sleep();
	if (shca_rx_cb(skb)->pay_len > SHCA_RQ_INLINE_MAX ||
	    !shca_rq_inline_ok(qp, skb) || !mutex_trylock(&qp->rq_engine)) {
		shca_rx_queue_req(qp, skb);
		return;
	}
	if (!shca_rq_inline_ok(qp, skb)) {
		/* rq_work's reference keeps @qp until the unlock is done */
		kref_get(&qp->ref);
		skb_queue_head(&qp->rx_queue, skb);	/* with its reference */
		mutex_unlock(&qp->rq_engine);
		shca_qp_queue_held(qp, &qp->rq_work);
		return;
	}
	shca_qp_stat_inc(qp, SHCA_STAT_RX_INLINE_PACKETS);
	shca_rq_one(qp, skb);
	shca_rq_end(qp, false);
	mutex_unlock(&qp->rq_engine);
	shca_qp_put(qp);	/* the skb's reference */
}

/**
 * shca_rq_sync - wait until no RQ engine run is in progress
 * @qp: QP
 *
 * Covers rq_work and the inline runs of same-host senders.
 * Context: process, may sleep; no engine lock held.
 */
void shca_rq_sync(struct shca_qp *qp)
{
	flush_work(&qp->rq_work);
	mutex_lock(&qp->rq_engine);
	mutex_unlock(&qp->rq_engine);
}
