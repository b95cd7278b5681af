// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the reorder holds: whether an RC packet that arrived after a gap
 * (a request at the responder, a response at the requester) may wait for
 * the packet that fills the gap, and whether an expired retransmit timer
 * should wait for packets still on their way on this host.
 *
 * Both apply to the wire as to the direct path: a peer QP of this host
 * (direct.c, shca_direct_peer_qp()) is the only one whose packets this
 * host may have reordered.  The decisions themselves are pure
 * (hold_logic.h); this file looks at the queues, backlogs and counters
 * they are made on.
 */
#include <linux/netdevice.h>

#include "shca.h"
#include "direct.h"
#include "hold.h"

/**
 * shca_rx_backlog_busy - are packets waiting in some CPU's receive backlog?
 *
 * netif_rx() (a veth's, loopback's) leaves them there until the NET_RX
 * softirq, or ksoftirqd under load, takes them.  A lockless look: a hint,
 * not a count.
 * Context: any.
 */
static bool shca_rx_backlog_busy(void)
{
	struct softnet_data *sd;
	int cpu;

	for_each_online_cpu(cpu) {
		sd = &per_cpu(softnet_data, cpu);
		if (skb_queue_len_lockless(&sd->input_pkt_queue) ||
		    skb_queue_len_lockless(&sd->process_queue))
			return true;
	}
	return false;
}

/**
 * shca_direct_dest_holds - do @qp's packets wait at its destination on
 *	this host?
 * @qp: RC/XRC initiator QP whose retransmit timer expired
 *
 * When @qp talks to a QP of this host (shca_direct_peer_qp()): requests
 * in that QP's rx_queue, its RQ engine queued (a READ's later responses)
 * or running, packets in its device's tx queue (the responses on their
 * way back, on the wire) or in a CPU's receive backlog (the wire's
 * packets either way, before the softirq takes them), mean that what @qp
 * sent arrived or is on its way and waits for a CPU (a host with more
 * runnable engines than CPUs), not that anything was lost.  Packets still
 * in this device's own tx queue are in the same case, as TCP does not
 * resend a segment still in its host's queues.
 * Context: SQ engine (process).
 * Return: true if the timeout should wait for them.
 */
bool shca_direct_dest_holds(struct shca_qp *qp)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_dev *peer;
	struct shca_qp *dqp;
	bool holds;

	if (atomic_read(&sdev->tx_inflight))
		return true;
	dqp = shca_direct_peer_qp(qp, &peer);
	if (!dqp)
		return false;
	holds = !skb_queue_empty(&dqp->rx_queue) ||
		work_pending(&dqp->rq_work) ||
		mutex_is_locked(&dqp->rq_engine) ||
		atomic_read(&peer->tx_inflight) || shca_rx_backlog_busy();
	shca_qp_put(dqp);
	ib_device_put(&peer->ibdev);
	return holds;
}

/* For tests, which cannot make the host reorder at will. */
static unsigned int shca_hold_any_ms;
module_param_named(rc_hold_any_ms, shca_hold_any_ms, uint, 0644);
MODULE_PARM_DESC(rc_hold_any_ms,
		 "tests: hold any RC wire packet after a gap for this many ms, whatever its peer and the receive backlogs (default: 0, hold only while this host may have reordered it)");

/*
 * May a hold start for a wire packet after a gap?  Only while @qp's peer
 * is a QP of this host (shca_direct_peer_qp()), whose packets may be
 * overtaken on the way: in the receive backlogs, or while a CPU's softirq
 * delivers a GSO datagram's segments.  The rc_hold_any_ms test parameter
 * holds for its time whatever the peer.
 * Context: SQ or RQ engine (process).
 * Return: true if it may (@t set up), false to act on the gap now.
 */
static bool shca_reorder_hold_start(struct shca_qp *qp,
				    struct shca_hold_time *t)
{
	u32 ms = READ_ONCE(shca_hold_any_ms);

	t->start = ktime_get_ns();
	if (ms) {
		t->len = (u64)min(ms, 60000U) * NSEC_PER_MSEC;
		t->min = t->len;
		return true;
	}
	if (!shca_direct_peer_is_local(qp))
		return false;
	t->min = SHCA_REORDER_MIN_NS;
	t->len = SHCA_REORDER_HOLD_NS;
	return true;
}

/**
 * shca_reorder_hold - may a wire packet after a gap wait for it to fill?
 * @qp: RC/XRC QP that received it (a request or a response)
 * @ht: @qp's hold, started here if none is @running
 * @held: packets @qp holds already
 * @running: a hold is running (packets are held, or being handled again)
 * @nak_sent: (responder) a NAK went out since ePSN last moved
 *
 * Joins the running hold unless it was ended (shca_hold_ok(): a hold runs
 * out only at the end of a run, shca_reorder_hold_keep()), or starts one
 * where shca_reorder_hold_start() allows.
 * Context: SQ or RQ engine (process).
 * Return: true to hold the packet (the caller arms its timer when it
 * started the hold), false to act on the gap now.
 */
bool shca_reorder_hold(struct shca_qp *qp, struct shca_hold_time *ht,
		       u32 held, bool running, bool nak_sent)
{
	struct shca_hold_time t;
	bool may_start = false;

	if (!running && !nak_sent)
		may_start = shca_reorder_hold_start(qp, &t);
	if (!shca_hold_ok(held, nak_sent, running, may_start,
			  running && shca_hold_over(ht)))
		return false;
	if (!running)
		*ht = t;
	return true;
}

/*
 * Are wire packets of @qp's peer on this host on their way to @qp: sent
 * (shca_qp.wire_req_out, wire_resp_out) and not arrived?  They may be
 * where no queue shows them: a CPU's softirq delivering a backlog's
 * packet or a GSO datagram's segments, on a virtual CPU its host does
 * not run for a while.  @requests: those the responder of @qp waits for
 * (else the responses its requester waits for).  With @give_up, or if
 * more arrived than were counted, the arrival count is brought up to the
 * sent one: what is still on its way counts as lost from now on (a
 * packet dropped on the way, by a qdisc or netem, never arrives).
 * Context: SQ or RQ engine (process).
 */
static bool shca_reorder_in_transit(struct shca_qp *qp, bool requests,
				    bool give_up)
{
	struct shca_dev *peer;
	struct shca_qp *dqp;
	atomic_t *in;
	s32 n;

	dqp = shca_direct_peer_qp(qp, &peer);
	if (!dqp)
		return false;
	in = requests ? &qp->wire_req_in : &qp->wire_resp_in;
	n = shca_hold_transit(atomic_read(requests ? &dqp->wire_req_out :
						     &dqp->wire_resp_out),
			      atomic_read(in));
	if (n < 0 || (n > 0 && give_up))
		atomic_add(n, in);
	shca_qp_put(dqp);
	ib_device_put(&peer->ibdev);
	return n > 0;
}

/**
 * shca_reorder_hold_keep - should a running hold go on?
 * @qp: RC/XRC QP holding
 * @ht: the hold
 * @queue: @qp's queue of packets still to handle: rx_queue for the
 *	   responder's hold, comp_queue for the requester's
 *
 * shca_hold_keep(): its minimum, then while a packet may still bring the
 * gap's: in @queue, in a CPU's receive backlog, or counted sent by @qp's
 * peer and not arrived (shca_reorder_in_transit()).  When it says no,
 * what is still counted on its way is given up on.
 * Context: SQ or RQ engine (process).
 */
bool shca_reorder_hold_keep(struct shca_qp *qp,
			    const struct shca_hold_time *ht,
			    struct sk_buff_head *queue)
{
	bool busy = !skb_queue_empty(queue) || shca_rx_backlog_busy();
	u64 now = ktime_get_ns();
	bool expired;

	if (shca_hold_keep(ht, now, busy))
		return true;
	expired = shca_hold_expired(ht, now);
	return shca_reorder_in_transit(qp, queue == &qp->rx_queue, expired) &&
	       !expired;
}
