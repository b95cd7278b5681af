// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: driver attributes of `rdma resource show qp|cq -dd`: where each
 * queue's producer and consumer stand, and an RC QP's PSN state, so that
 * a stalled queue can be read off a running system.
 *
 * The values are read without the engines' locks (a restrack dump must
 * not wait for an engine run): each is one aligned word read once, a
 * snapshot that may be a few packets old, never a torn value.
 */
#include <rdma/restrack.h>

#include "rc_req_priv.h"
#include "rc_resp.h"

#define SHCA_RES_U32(msg, name, val)					\
	do {								\
		if (rdma_nl_put_driver_u32(msg, name, val))		\
			return -EMSGSIZE;				\
	} while (0)

#define SHCA_RES_HEX(msg, name, val)					\
	do {								\
		if (rdma_nl_put_driver_u32_hex(msg, name, val))		\
			return -EMSGSIZE;				\
	} while (0)

/* A ring's producer and consumer: the shared ones and the kernel's. */
static int shca_res_ring(struct sk_buff *msg, const char *prod,
			 const char *cons, const struct shca_ring *ring)
{
	if (!ring->ctl)
		return 0;
	SHCA_RES_U32(msg, prod, READ_ONCE(ring->ctl->prod));
	SHCA_RES_U32(msg, cons, READ_ONCE(ring->ctl->cons));
	return 0;
}

/* The requester's shadow indices and PSNs.  Context: process. */
static int shca_res_req(struct sk_buff *msg, struct shca_qp *qp)
{
	const struct shca_req *req = &qp->req;

	SHCA_RES_U32(msg, "sq_kcons", READ_ONCE(qp->sq.ring.kcons));
	SHCA_RES_U32(msg, "req_head", READ_ONCE(req->head));
	SHCA_RES_U32(msg, "req_cur", READ_ONCE(req->cur));
	SHCA_RES_U32(msg, "req_fetch", READ_ONCE(req->fetch));
	SHCA_RES_HEX(msg, "req_una", READ_ONCE(req->una));
	SHCA_RES_HEX(msg, "req_psn", READ_ONCE(req->psn));
	SHCA_RES_HEX(msg, "req_next_psn", READ_ONCE(req->next_psn));
	SHCA_RES_U32(msg, "req_win", READ_ONCE(req->win.cur));
	SHCA_RES_U32(msg, "req_wire_charge", READ_ONCE(req->wire_charge));
	SHCA_RES_U32(msg, "req_held", skb_queue_len_lockless(&req->held));
	SHCA_RES_U32(msg, "req_rto_armed", timer_pending(&req->rto_timer));
	SHCA_RES_U32(msg, "req_rto_held", READ_ONCE(req->rto_held));
	SHCA_RES_U32(msg, "req_events", READ_ONCE(req->events));
	SHCA_RES_U32(msg, "comp_queue", skb_queue_len_lockless(&qp->comp_queue));
	return 0;
}

/* The responder's PSN state and holds.  Context: process. */
static int shca_res_resp(struct sk_buff *msg, struct shca_qp *qp)
{
	const struct shca_resp *resp = &qp->resp;

	SHCA_RES_HEX(msg, "resp_epsn", READ_ONCE(resp->epsn));
	SHCA_RES_U32(msg, "resp_unacked", READ_ONCE(resp->unacked));
	SHCA_RES_U32(msg, "resp_ack_due", READ_ONCE(resp->ack_due));
	SHCA_RES_U32(msg, "resp_held", skb_queue_len_lockless(&resp->held));
	SHCA_RES_U32(msg, "resp_pending", READ_ONCE(resp->npending));
	SHCA_RES_U32(msg, "rx_queue", skb_queue_len_lockless(&qp->rx_queue));
	return 0;
}

/**
 * shca_fill_res_qp_entry - a QP's driver attributes for restrack
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * Context: process (an RDMA netlink dump), under the restrack entry's
 * reference; takes no lock.
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_sqp(ibqp);
	enum ib_qp_type type = ibqp->qp_type;
	int err;

	SHCA_RES_U32(msg, "state", READ_ONCE(qp->state));
	err = shca_res_ring(msg, "sq_prod", "sq_cons", &qp->sq.ring) ?:
	      shca_res_ring(msg, "rq_prod", "rq_cons", &qp->rq.ring);
	if (err)
		return err;
	if (type == IB_QPT_RC || type == IB_QPT_UC || type == IB_QPT_XRC_INI) {
		err = shca_res_req(msg, qp);
		if (err)
			return err;
	}
	if (type == IB_QPT_RC || type == IB_QPT_UC || type == IB_QPT_XRC_TGT)
		return shca_res_resp(msg, qp);
	return 0;
}

/**
 * shca_fill_res_cq_entry - a CQ's driver attributes for restrack
 * @msg: the netlink message
 * @ibcq: the CQ
 *
 * Context: process, as shca_fill_res_qp_entry().
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int shca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct shca_cq *cq = to_scq(ibcq);

	SHCA_RES_U32(msg, "cqn", cq->cqn);
	SHCA_RES_U32(msg, "kprod", READ_ONCE(cq->ring.kprod));
	SHCA_RES_U32(msg, "overflow", READ_ONCE(cq->overflow));
	SHCA_RES_U32(msg, "notify", READ_ONCE(cq->notify));
	return shca_res_ring(msg, "prod", "cons", &cq->ring);
}
