// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: driver attributes of `rdma resource show qp|cq -dd`: where each
 * queue's producer and consumer stand, and an RC QP's PSN state, so that
 * a stalled queue can be read off a running system (a test that hangs
 * dumps them: they tell a completion the kernel never wrote from one the
 * consumer never polled).
 *
 * The values are read without the engines' locks (a restrack dump must
 * not wait for an engine run): each is one aligned word read once, a
 * snapshot that may be a few packets old, never a torn value.
 */
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "rc_req_priv.h"
#include "rc_resp.h"

/* One driver attribute: its name, value and whether it reads in hex. */
struct shca_res_attr {
	const char *name;
	u32 val;
	bool hex;
};

#define SHCA_RES(n, v)		{ .name = (n), .val = (v) }
#define SHCA_RES_PSN(n, v)	{ .name = (n), .val = (v), .hex = true }

/* Put @n attributes.  Return: 0, or -EMSGSIZE when @msg is full. */
static int shca_res_put(struct sk_buff *msg, const struct shca_res_attr *a,
			unsigned int n)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		if (a[i].hex)
			err = rdma_nl_put_driver_u32_hex(msg, a[i].name,
							 a[i].val);
		else
			err = rdma_nl_put_driver_u32(msg, a[i].name, a[i].val);
		if (err)
			return -EMSGSIZE;
	}
	return 0;
}

/* A ring's producer and consumer indices as its ctl page shows them. */
static int shca_res_ring(struct sk_buff *msg, const char *prod,
			 const char *cons, const struct shca_ring *ring)
{
	if (!ring->ctl)
		return 0;
	{
		const struct shca_res_attr a[] = {
			SHCA_RES(prod, READ_ONCE(ring->ctl->prod)),
			SHCA_RES(cons, READ_ONCE(ring->ctl->cons)),
		};

		return shca_res_put(msg, a, ARRAY_SIZE(a));
	}
}

/* The requester's shadow indices, PSNs and holds. */
static int shca_res_req(struct sk_buff *msg, struct shca_qp *qp)
{
	const struct shca_req *req = &qp->req;
	const struct shca_res_attr a[] = {
		SHCA_RES("sq_kcons", READ_ONCE(qp->sq.ring.kcons)),
		SHCA_RES("req_head", READ_ONCE(req->head)),
		SHCA_RES("req_cur", READ_ONCE(req->cur)),
		SHCA_RES("req_fetch", READ_ONCE(req->fetch)),
		SHCA_RES_PSN("req_una", READ_ONCE(req->una)),
		SHCA_RES_PSN("req_psn", READ_ONCE(req->psn)),
		SHCA_RES_PSN("req_next_psn", READ_ONCE(req->next_psn)),
		SHCA_RES("req_win", READ_ONCE(req->win.cur)),
		SHCA_RES("req_wire_charge", READ_ONCE(req->wire_charge)),
		SHCA_RES("req_held", skb_queue_len_lockless(&req->held)),
		SHCA_RES("req_rto_armed", timer_pending(&req->rto_timer)),
		SHCA_RES("req_rto_held", READ_ONCE(req->rto_held)),
		SHCA_RES("req_events", READ_ONCE(req->events)),
		SHCA_RES("comp_queue", skb_queue_len_lockless(&qp->comp_queue)),
	};

	return shca_res_put(msg, a, ARRAY_SIZE(a));
}

/* The responder's PSN state, ACK state and holds. */
static int shca_res_resp(struct sk_buff *msg, struct shca_qp *qp)
{
	const struct shca_resp *resp = &qp->resp;
	const struct shca_res_attr a[] = {
		SHCA_RES_PSN("resp_epsn", READ_ONCE(resp->epsn)),
		SHCA_RES("resp_unacked", READ_ONCE(resp->unacked)),
		SHCA_RES("resp_ack_due", READ_ONCE(resp->ack_due)),
		SHCA_RES("resp_held", skb_queue_len_lockless(&resp->held)),
		SHCA_RES("resp_pending", READ_ONCE(resp->npending)),
		SHCA_RES("rx_queue", skb_queue_len_lockless(&qp->rx_queue)),
	};

	return shca_res_put(msg, a, ARRAY_SIZE(a));
}

/* A QP's attributes, by type.  Context: process. */
static int shca_res_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_sqp(ibqp);
	enum ib_qp_type type = ibqp->qp_type;
	struct shca_res_attr state = SHCA_RES("state", READ_ONCE(qp->state));
	int err;

	err = shca_res_put(msg, &state, 1) ?:
	      shca_res_ring(msg, "sq_prod", "sq_cons", &qp->sq.ring) ?:
	      shca_res_ring(msg, "rq_prod", "rq_cons", &qp->rq.ring);
	if (err || !shca_qp_is_conn(type))
		return err;
	/* an XRC target has no requester, an XRC initiator no responder */
	if (type != IB_QPT_XRC_TGT)
		err = shca_res_req(msg, qp);
	if (!err && type != IB_QPT_XRC_INI)
		err = shca_res_resp(msg, qp);
	return err;
}

/* A CQ's attributes.  Context: process. */
static int shca_res_cq(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct shca_cq *cq = to_scq(ibcq);
	const struct shca_res_attr a[] = {
		SHCA_RES("cqn", cq->cqn),
		SHCA_RES("kprod", READ_ONCE(cq->ring.kprod)),
		SHCA_RES("overflow", READ_ONCE(cq->overflow)),
		SHCA_RES("notify", READ_ONCE(cq->notify)),
	};

	return shca_res_put(msg, a, ARRAY_SIZE(a)) ?:
	       shca_res_ring(msg, "prod", "cons", &cq->ring);
}

/*
 * The attributes go in an RDMA_NLDEV_ATTR_DRIVER nest, where the rdma
 * tool looks for them: closed here with the fill's result (cancelled on
 * an error).
 */
static int shca_res_close(struct sk_buff *msg, struct nlattr *nest, int err)
{
	if (err) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
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
	struct nlattr *nest = nla_nest_start_noflag(msg,
						    RDMA_NLDEV_ATTR_DRIVER);

	if (!nest)
		return -EMSGSIZE;
	return shca_res_close(msg, nest, shca_res_qp(msg, ibqp));
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
	struct nlattr *nest = nla_nest_start_noflag(msg,
						    RDMA_NLDEV_ATTR_DRIVER);

	if (!nest)
		return -EMSGSIZE;
	return shca_res_close(msg, nest, shca_res_cq(msg, ibcq));
}
