// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the receive demux.
 *
 * shca_rcv() runs in the UDP softirq for every RoCE v2 datagram of a
 * namespace: it finds the device and the destination QP, checks the
 * headers (a connected QP takes packets only from its peer's address to
 * its own, shca_rx_path_ok()), and queues the skb on the QP (the skb
 * holds a QP reference):
 * requests on qp->rx_queue for rq_work (rx_engine.c, rc_resp.c), responses on
 * qp->comp_queue for the SQ engine (rc_req_comp.c).
 * The ICRC of a queued packet is left to its consumer (shca_rx_verify()
 * at the head of each one's per-packet step): over a veth, this softirq
 * runs on the sending CPU, and the CRC is then paid where the packet is
 * consumed, in parallel with the sender.  A packet that is dropped here
 * has its ICRC checked first, so that the statistic it counts is the one
 * a check in this order would give (a bad ICRC before anything else).
 * shca_rx_direct() takes the packets of the same-host direct path
 * (direct.c) at the same point, after the checks a wire packet needs
 * (the peer's addresses among them: a direct packet carries the IP
 * header a wire packet would); a
 * request whose sender may run the destination's RQ engine itself is
 * handed back to the sender for shca_rq_inline() instead of being queued.
 *
 * A wire packet to a device of this host (over a veth, say) comes back
 * up through the IP stack in its sender's own thread: the softirq runs
 * as the transmit re-enables BHs.  A sender that watches for that
 * (shca_rx_catch_begin() .. shca_rx_catch_end() around the transmit)
 * gets the same as on the direct path: a request left to it for
 * shca_rq_inline(), and a response to the engine run of its thread
 * consumed by that run without sq_work.  The packet went through the
 * whole stack, and its ICRC is still checked by the RQ engine; only the
 * thread that runs the engine differs.
 */
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ipv6_stubs.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "shca_trace.h"
#include "wire.h"

/**
 * shca_addr_ndev - the netdev of @net that owns a local address
 * @net: network namespace
 * @ipv4: @addr is a __be32 IPv4 address, else a struct in6_addr
 * @addr: the address
 *
 * Context: RCU read lock held; no reference is taken.
 * Return: the netdev, or NULL if no netdev of @net has @addr.
 */
struct net_device *shca_addr_ndev(struct net *net, bool ipv4,
				  const void *addr)
{
	if (ipv4)
		return __ip_dev_find(net, *(const __be32 *)addr, false);
	if (IS_ENABLED(CONFIG_IPV6) && ipv6_stub->ipv6_dev_find)
		return ipv6_stub->ipv6_dev_find(net, addr, NULL);
	return NULL;
}

/* The netdev a packet that came in over loopback was addressed to. */
static struct net_device *shca_rx_loopback_ndev(struct sk_buff *skb)
{
	if (ip_hdr(skb)->version == 4)
		return shca_addr_ndev(dev_net(skb->dev), true,
				      &ip_hdr(skb)->daddr);
	return shca_addr_ndev(dev_net(skb->dev), false, &ipv6_hdr(skb)->daddr);
}

/**
 * shca_dev_get_by_netdev - the shca device of a netdev, referenced
 * @ndev: netdev
 *
 * Context: any; takes the RCU read lock.
 * Return: the device (ib_device_put() it), or NULL if @ndev has no shca
 * device.
 */
struct shca_dev *shca_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (ibdev && ibdev->ops.owner != THIS_MODULE) {
		ib_device_put(ibdev);
		ibdev = NULL;
	}
	return ibdev ? to_sdev(ibdev) : NULL;
}

/*
 * The shca device a packet was received for, referenced.
 * Context: softirq.
 */
static struct shca_dev *shca_rx_dev(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct shca_dev *sdev = NULL;

	rcu_read_lock();
	if (ndev && (ndev->flags & IFF_LOOPBACK))
		ndev = shca_rx_loopback_ndev(skb);
	if (ndev)
		sdev = shca_dev_get_by_netdev(ndev);
	rcu_read_unlock();
	return sdev;
}

/*
 * Check the ICRC (and the IP/UDP layout it covers) of a linear wire
 * packet; return the stat to count or -1.  rdma_rxe's variant of an RC
 * FLUSH's ICRC passes, marked for shca_rx_verify() to count.
 * Context: any.
 */
static int shca_rx_icrc(struct sk_buff *skb)
{
	u8 *ip = skb_network_header(skb);
	int err;

	err = shca_icrc_check(ip, skb_tail_pointer(skb) - ip);
	shca_rx_cb(skb)->icrc_rxe = err == SHCA_ICRC_RXE_FLUSH;
	if (err >= 0)
		return -1;
	return err == -EBADMSG ? SHCA_STAT_RX_BAD_ICRC : SHCA_STAT_RX_MALFORMED;
}

/*
 * The ICRC check a wire packet still owes (shca_rx_cb.icrc_due), done
 * once; return the stat to count or -1 (intact, or nothing due).
 * Context: any.
 */
static int shca_rx_icrc_due(struct sk_buff *skb)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);

	if (!cb->icrc_due)
		return -1;
	cb->icrc_due = false;
	return shca_rx_icrc(skb);
}

/**
 * shca_rx_verify - check the ICRC of a queued packet before consuming it
 * @qp: the QP that dequeued @skb
 * @skb: from qp->rx_queue or qp->comp_queue
 *
 * Packets of the wire are queued with their ICRC unchecked; those of the
 * direct path (which carry none) and the frames of flow steering have
 * nothing to check.  A bad packet is counted (rx_bad_icrc, or
 * rx_malformed for a layout the ICRC cannot be computed over); the caller
 * then drops it without looking at it further.
 * Context: the consumer of the queue (RQ engine, SQ engine); any context.
 * Return: true if @skb may be consumed.
 */
bool shca_rx_verify(struct shca_qp *qp, struct sk_buff *skb)
{
	bool due = shca_rx_cb(skb)->icrc_due;
	int stat = shca_rx_icrc_due(skb);

	if (stat < 0) {
		if (due && shca_rx_cb(skb)->icrc_rxe)
			shca_qp_stat_inc(qp, SHCA_STAT_RX_FLUSH_ICRC_RXE);
		return true;
	}
	shca_qp_stat_inc(qp, stat);
	return false;
}

/* Check IP/UDP lengths; return the stat to count or -1. */
static int shca_rx_check(struct sk_buff *skb, u32 *bth_off, u32 *blen)
{
	struct udphdr *uh;
	u32 ulen;

	if (skb_linearize(skb))
		return SHCA_STAT_RX_DROPPED;
	uh = udp_hdr(skb);
	ulen = ntohs(uh->len);
	if (ulen < sizeof(*uh) || (u8 *)uh + ulen > skb_tail_pointer(skb))
		return SHCA_STAT_RX_MALFORMED;
	if (ip_hdr(skb)->version == 4 && ip_hdr(skb)->ihl != 5)
		return SHCA_STAT_RX_MALFORMED;	/* no room for options in a GRH */
	*bth_off = (u8 *)(uh + 1) - skb->data;
	*blen = ulen - sizeof(*uh);
	return -1;
}

/* Parse the transport headers into skb->cb; return the stat or -1. */
static int shca_rx_parse(struct sk_buff *skb, u32 bth_off, u32 blen,
			 u32 *dqpn)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);
	struct shca_wire_pkt pkt;

	if (shca_wire_parse(skb->data + bth_off, blen, &pkt))
		return SHCA_STAT_RX_MALFORMED;
	memset(cb, 0, sizeof(*cb));
	cb->bth_off = bth_off;
	cb->pay_off = bth_off + pkt.hdr_len;
	cb->pay_len = pkt.pay_len;
	cb->blen = blen;
	cb->qkey = pkt.hdr.qkey;
	cb->src_qpn = pkt.hdr.src_qpn;
	cb->imm = pkt.hdr.imm;
	cb->opcode = pkt.hdr.opcode;
	cb->se = pkt.hdr.se;
	*dqpn = pkt.hdr.dqpn;
	return -1;
}

/*
 * The transport of a QP of @type: what it sends and accepts.
 * Context: any.
 * Return: one of enum shca_transport, or -1 for a type shca does not run.
 */
int shca_qp_transport(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return SHCA_TR_RC;
	case IB_QPT_UC:
		return SHCA_TR_UC;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return SHCA_TR_XRC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SHCA_TR_UD;
	default:
		return -1;
	}
}

/*
 * Which way an XRC packet may go: an initiator only takes responses, a
 * target only requests.
 */
static bool shca_rx_role_ok(const struct shca_qp *qp, u32 opflags)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_XRC_INI:
		return opflags & SHCA_OPF_RESP;
	case IB_QPT_XRC_TGT:
		return opflags & SHCA_OPF_REQ;
	default:
		return true;
	}
}

/*
 * The queue of @qp a packet with @opcode goes to, or NULL if @qp does not
 * take it.  Context: any.
 */
static struct sk_buff_head *shca_rx_queue_of(struct shca_qp *qp, u8 opcode)
{
	u32 opflags = shca_opcode_info(opcode)->flags;

	if (shca_opcode_transport(opcode) !=
	    shca_qp_transport(qp->ibqp.qp_type) ||
	    !shca_rx_role_ok(qp, opflags))
		return NULL;
	return opflags & SHCA_OPF_RESP ? &qp->comp_queue : &qp->rx_queue;
}

/**
 * shca_rx_queue_req - queue a request on its QP for rq_work
 * @qp: the destination, referenced; the reference goes with @skb
 * @skb: a request shca_rx_enqueue() (or shca_rx_direct()) accepted, or
 *	 a raw frame a flow rule steered to @qp (flow.c)
 *
 * Context: any.
 */
void shca_rx_queue_req(struct shca_qp *qp, struct sk_buff *skb)
{
	kref_get(&qp->ref);	/* rq_work's, before the skb's may go */
	skb_queue_tail(&qp->rx_queue, skb);	/* the skb owns its ref */
	shca_qp_queue_held(qp, &qp->rq_work);
}

/*
 * Queue a response for the SQ engine.  A response that the engine's own
 * run brought about (@own: delivered by the thread of that run,
 * shca_sq_run(), from within one of its steps: on the direct path, or a
 * wire packet caught while the run transmits) is consumed by the run
 * before it ends (shca_engine_loop()), so it needs no sq_work; a softirq
 * that interrupts the run anywhere else is not that run.  Context: any.
 */
static void shca_rx_queue_resp(struct shca_qp *qp, struct sk_buff *skb,
			       bool own)
{
	kref_get(&qp->ref);	/* sq_work's, before the skb's may go */
	skb_queue_tail(&qp->comp_queue, skb);	/* the skb owns its ref */
	atomic_inc(&qp->comp_queued);
	if (own && READ_ONCE(qp->sq_runner) == current) {
		qp->sq_owed = true;	/* that run's own thread: no race */
		shca_qp_put(qp);	/* the run holds the QP */
	} else {
		shca_qp_queue_held(qp, &qp->sq_work);
	}
}

/**
 * shca_rx_path_ok - does a packet come from @qp's peer?
 * @qp: the destination QP
 * @skb: a packet of the wire or of the direct path (its IP header at the
 *	network header: the direct path's carries the addresses a wire
 *	packet would)
 *
 * A connected QP takes only packets from the address of its primary
 * path's remote GID to that of its local GID (path_logic.h): anybody
 * else who knows its QPN, a host on the wire or a local user with a UDP
 * socket, is not its peer.  UD and GSI QPs take datagrams from anyone
 * (the Q_Key decides).  The path is read as modify_qp published it
 * (qp->av_lock).
 * Context: softirq, or BHs disabled (the direct path).
 * Return: true if @qp may take @skb.
 */
static bool shca_rx_path_ok(struct shca_qp *qp, struct sk_buff *skb)
{
	bool ipv4 = ip_hdr(skb)->version == 4;
	const void *saddr, *daddr;
	unsigned int seq;
	bool ok;

	if (!shca_qp_is_conn(qp->ibqp.qp_type))
		return true;
	if (ipv4) {
		saddr = &ip_hdr(skb)->saddr;
		daddr = &ip_hdr(skb)->daddr;
	} else {
		saddr = &ipv6_hdr(skb)->saddr;
		daddr = &ipv6_hdr(skb)->daddr;
	}
	do {
		seq = read_seqbegin(&qp->av_lock);
		ok = shca_path_addrs_match(&qp->av.addrs, ipv4, saddr, daddr);
	} while (read_seqretry(&qp->av_lock, seq));
	return ok;
}

/*
 * Check that @qp takes @skb; return its queue, or NULL with the stat to
 * count in @stat and the reference dropped.  A packet that is not from
 * its peer (shca_rx_path_ok()) counts in rx_bad_path, and not as an
 * arrival of the peer's wire packets.
 */
static struct sk_buff_head *shca_rx_admit(struct shca_qp *qp,
					  struct sk_buff *skb, int *stat)
{
	struct sk_buff_head *queue;

	queue = shca_rx_queue_of(qp, shca_rx_cb(skb)->opcode);
	if (queue && !shca_rx_path_ok(qp, skb)) {
		*stat = SHCA_STAT_RX_BAD_PATH;
		shca_qp_put(qp);
		return NULL;
	}
	/* a wire packet's arrival, dropped here or not (see shca_qp) */
	if (queue && shca_rx_cb(skb)->icrc_due)
		atomic_inc(queue == &qp->rx_queue ? &qp->wire_req_in :
						    &qp->wire_resp_in);
	if (!queue)
		*stat = SHCA_STAT_RX_MALFORMED;
	else if (skb_queue_len(queue) >= SHCA_RX_QUEUE_MAX)
		*stat = SHCA_STAT_RX_DROPPED;
	else
		return queue;
	shca_qp_put(qp);
	return NULL;
}

/*
 * Leave a request in @inl for its sender, which holds at most one: one
 * already there goes to its queue first, so that it is not overtaken by
 * a later request of the same QP (the sender's inline run would find
 * that one queued and queue its own behind it).
 */
static void shca_rx_leave(struct shca_rx_inline *inl, struct shca_qp *qp,
			  struct sk_buff *skb)
{
	if (inl->qp)
		shca_rx_queue_req(inl->qp, inl->skb);
	inl->qp = qp;
	inl->skb = skb;
}

/*
 * Queue a checked packet on @qp (referenced; the reference goes with
 * @skb).  @own: delivered by the thread of the engine run that sent what
 * brought it about (the direct path, shca_rx_direct(), or a caught wire
 * packet); then, with @inl, a request is left in @inl for its sender to
 * run instead of being queued.  Return: -1 if taken, else the stat to
 * count; then the reference is dropped and the caller frees @skb.
 * Context: softirq, or BHs disabled (the direct path).
 */
static int shca_rx_to_qp(struct shca_qp *qp, struct sk_buff *skb,
			 bool own, struct shca_rx_inline *inl)
{
	struct sk_buff_head *queue;
	int stat;

	queue = shca_rx_admit(qp, skb, &stat);
	if (!queue)
		return stat;
	if (queue != &qp->rx_queue) {
		shca_rx_queue_resp(qp, skb, own);
		return -1;
	}
	/* the responses that arrived before it go first: shca_sq_catch_up() */
	shca_rx_cb(skb)->comp_mark = atomic_read(&qp->comp_queued);
	if (inl)
		shca_rx_leave(inl, qp, skb);
	else
		shca_rx_queue_req(qp, skb);
	return -1;
}

/*
 * A sender watching its wire packets come back up through this host's
 * IP stack in its own thread, on this CPU (shca_rx_catch_begin()).
 */
struct shca_rx_catch {
	struct task_struct *task;	/* NULL: nobody watches */
	bool want_req;			/* leave a request in @inl */
	struct shca_rx_inline inl;
};

static DEFINE_PER_CPU(struct shca_rx_catch, shca_rx_catch);

/**
 * shca_rx_catch_begin - watch for the packets a transmit brings back
 * @want_req: leave a request to the caller (an SQ engine run that may
 *	call shca_rq_inline()); else only responses are caught
 *
 * Between this and shca_rx_catch_end() the caller transmits one packet
 * with BHs enabled; the softirqs that run in its thread meanwhile (as
 * the IP stack re-enables BHs: a veth or loopback peer on this host)
 * deliver as the direct path does (shca_rx_to_qp()'s @own).  Whatever
 * else such a softirq receives is caught as well, which is as correct:
 * the caller is inside an engine step, and shca_rq_inline() keeps the
 * order of each QP's requests.
 * Context: process, not in a BH-disabled section; disables preemption
 * until shca_rx_catch_end(); no nesting.
 */
void shca_rx_catch_begin(bool want_req)
{
	struct shca_rx_catch *c;

	preempt_disable();
	c = this_cpu_ptr(&shca_rx_catch);
	c->want_req = want_req;
	c->inl.qp = NULL;
	c->inl.skb = NULL;
	/*
	 * A softirq at an interrupt's exit may catch as soon as @task is
	 * set: the catch is empty before (else it found a stale request, or
	 * left one half cleared: a QP with no skb).  Same CPU: a compiler
	 * barrier orders it.
	 */
	barrier();
	WRITE_ONCE(c->task, current);
}

/**
 * shca_rx_catch_end - stop watching
 * @inl: out: a request left to the caller (inl->qp NULL if none), to be
 *	passed to shca_rq_inline()
 *
 * Context: after shca_rx_catch_begin(), which it pairs with.
 */
void shca_rx_catch_end(struct shca_rx_inline *inl)
{
	struct shca_rx_catch *c = this_cpu_ptr(&shca_rx_catch);

	/* nothing is caught once @task is clear: what is there is all */
	WRITE_ONCE(c->task, NULL);
	barrier();
	*inl = c->inl;
	preempt_enable();
}

/*
 * The catch of the thread this softirq serves, or NULL.  A softirq run
 * at a hard interrupt's exit while the thread watches is caught too (see
 * shca_rx_catch_begin()).  Context: softirq.
 */
static struct shca_rx_catch *shca_rx_caught(void)
{
	struct shca_rx_catch *c = this_cpu_ptr(&shca_rx_catch);

	return READ_ONCE(c->task) == current && in_serving_softirq() ? c : NULL;
}

/**
 * shca_rx_enqueue - queue a checked packet on its QP
 * @qp: the destination, referenced; the reference goes with @skb
 * @skb: checked and parsed (skb->cb)
 *
 * Context: softirq.
 * Return: -1 if queued, else the stat to count; then the reference is
 * dropped and the caller frees @skb.
 */
int shca_rx_enqueue(struct shca_qp *qp, struct sk_buff *skb)
{
	return shca_rx_to_qp(qp, skb, false, NULL);
}

/*
 * Hand a checked packet to its QP, or to every QP of its multicast
 * group; return the stat to count or -1.  A multicast packet is checked
 * here, once, rather than by each QP that gets a clone of it.  @own and
 * @inl as for shca_rx_to_qp().
 */
static int shca_rx_deliver(struct shca_dev *sdev, struct sk_buff *skb,
			   u32 dqpn, bool own, struct shca_rx_inline *inl)
{
	struct shca_qp *qp;
	int stat;

	if (dqpn == SHCA_MCAST_QPN) {
		stat = shca_rx_icrc_due(skb);
		return stat >= 0 ? stat : shca_mcast_rx(sdev, skb);
	}
	qp = shca_qp_get(sdev, dqpn);
	if (!qp)
		return SHCA_STAT_RX_NO_QP;
	return shca_rx_to_qp(qp, skb, own, inl);
}

/**
 * shca_rcv - receive one RoCE v2 datagram
 * @skb: from the UDP tunnel socket; data at the UDP header
 *
 * Context: softirq.  Always consumes @skb.
 */
void shca_rcv(struct sk_buff *skb)
{
	struct shca_dev *sdev = shca_rx_dev(skb);
	struct shca_rx_catch *c;
	u32 bth_off, blen, dqpn;
	int stat, bad;

	if (!sdev) {
		kfree_skb(skb);
		return;
	}
	stat = shca_rx_check(skb, &bth_off, &blen);
	if (stat < 0) {
		stat = shca_rx_parse(skb, bth_off, blen, &dqpn);
		/* its consumer checks the ICRC: shca_rx_verify() */
		shca_rx_cb(skb)->icrc_due = true;
		if (stat < 0) {
			c = shca_rx_caught();
			trace_shca_pkt(sdev, (struct shca_bth *)(skb->data + bth_off),
				       blen, false,
				       c && c->want_req ? SHCA_TRACE_INLINE :
							  SHCA_TRACE_WIRE);
			stat = shca_rx_deliver(sdev, skb, dqpn, c,
					       c && c->want_req ? &c->inl :
								  NULL);
		}
		if (stat >= 0) {
			/* dropped: a packet that is not intact counts as such */
			bad = shca_rx_icrc_due(skb);
			if (bad >= 0)
				stat = bad;
		}
	}
	if (stat >= 0) {
		trace_shca_drop(sdev, stat);
		shca_stat_inc(sdev, stat);
		kfree_skb(skb);
	}
	ib_device_put(&sdev->ibdev);
}

/**
 * shca_rx_direct - receive one packet of the same-host direct path
 * @sdev: the destination device, referenced by the caller
 * @skb: from shca_direct_xmit(): IP and UDP headers in place (the network
 *	and transport headers set), no ICRC
 * @seg: the sender's segment size for RC/UC packets, 0 for the path MTU
 * @inl: NULL, or where to leave a request for the sender to run inline
 *
 * The packet was built by shca itself, so only the transport headers are
 * parsed (the packet is still checked like any other one there); then it
 * is delivered like a wire packet, but that a request is left in @inl,
 * with its QP reference, if @inl is given: the caller then owns it and
 * passes it to shca_rq_inline().
 * Context: BHs disabled.  Always consumes @skb (or leaves it in @inl).
 */
void shca_rx_direct(struct shca_dev *sdev, struct sk_buff *skb, u32 seg,
		    struct shca_rx_inline *inl)
{
	struct udphdr *uh = udp_hdr(skb);
	u32 bth_off, blen, dqpn;
	int stat = SHCA_STAT_RX_MALFORMED;

	__skb_pull(skb, skb_transport_offset(skb));
	bth_off = sizeof(*uh);
	blen = ntohs(uh->len);
	if (blen >= sizeof(*uh) && blen <= skb->len) {
		blen -= sizeof(*uh);
		stat = shca_rx_parse(skb, bth_off, blen, &dqpn);
	}
	if (stat < 0) {
		trace_shca_pkt(sdev, (struct shca_bth *)(skb->data + bth_off),
			       blen, false,
			       inl ? SHCA_TRACE_INLINE : SHCA_TRACE_DIRECT);
		shca_rx_cb(skb)->seg = seg;
		shca_stat_inc(sdev, SHCA_STAT_RX_DIRECT_PACKETS);
		stat = shca_rx_deliver(sdev, skb, dqpn, true, inl);
	}
	if (stat >= 0) {
		trace_shca_drop(sdev, stat);
		shca_stat_inc(sdev, stat);
		kfree_skb(skb);
	}
}
