/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: RC/UC requester state: the requester (rc_req.c, rc_req_fetch.c)
 * and its completer (rc_req_comp.c).
 */
#ifndef SHCA_RC_REQ_H
#define SHCA_RC_REQ_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/shca-abi.h>

#include "hold_logic.h"
#include "rc_req_logic.h"

#define SHCA_DEV_WIRE_BUDGET	1024	/* wire PSNs in flight, all QPs */
#define SHCA_REQ_ACKREQ_EVERY	16	/* AckReq at least every N packets */

/* Bits of shca_req.events, set by the timers for sq_work. */
enum shca_req_event {
	SHCA_REQ_EV_RTO,
	SHCA_REQ_EV_RNR,
	SHCA_REQ_EV_HOLD,	/* look at the held responses again */
};

/* SGEs of an internal operation: SHCA_MAX_SGE (shca.h, checked at build) */
#define SHCA_REQ_IOP_MAX_SGE	12
#define SHCA_REQ_IOP_MAX_INLINE	64	/* its inline bytes */

struct shca_qp;
struct shca_req_wqe;
struct shca_req_iop;

typedef void (*shca_req_iop_done_t)(struct shca_qp *qp,
				    struct shca_req_iop *iop,
				    enum ib_wc_status status);

/*
 * An internal operation (SHCA_OP_RDMA_READ or SHCA_OP_SEND): executed by
 * the requester in send-queue order, with no user WQE and no user CQE.
 *
 * shca_req_post_iop() queues it; the requester copies it into a shadow
 * WQE when a shadow slot is free (queued operations go before the user's
 * SQ ring), sends it like a user WQE (PSNs, go-back-N, retries, window,
 * max_rd_atomic, FENCE) and, where a user WQE would post its send
 * completion, calls @done exactly once: IB_WC_SUCCESS, the error it
 * failed with, or IB_WC_WR_FLUSH_ERR when the QP is in the error state or
 * destroyed.  @done runs in process context, in an SQ engine run
 * (qp->sq_engine held) or in destroy_qp (shca_req_stop()); it may free
 * the operation and may call shca_req_post_iop().  The caller owns the
 * memory and must leave it alone from posting until @done.
 */
struct shca_req_iop {
	struct list_head node;		/* private to rc_req.c */
	struct shca_send_wqe hdr;	/* opcode, flags (FENCE, INLINE), num_sge,
					 * inline_len, rdma.remote_addr/rkey
					 */
	union {
		struct shca_sge sge[SHCA_REQ_IOP_MAX_SGE];
		u8 inl[SHCA_REQ_IOP_MAX_INLINE];
	};
	struct ib_pd *pd;		/* PD of the local SGEs; NULL: the QP's */
	shca_req_iop_done_t done;
};

/* Context: any, with a QP reference; does not sleep. */
int shca_req_post_iop(struct shca_qp *qp, struct shca_req_iop *iop);

/*
 * Requester state.  Everything but @events, the timers themselves and
 * the queue of internal operations (@iops and @iop_closed, under
 * @iop_lock) is touched only inside an SQ engine run (and by
 * shca_req_init(), by shca_req_modify() before the QP reaches RTS and by
 * shca_req_stop() at destroy).
 *
 * The shadow queue has its own free-running indices, head <= cur <=
 * fetch, over @nwqes slots: [head, cur) are fully sent and wait for
 * acknowledgment, cur is being sent, [cur, fetch) are copied but not
 * (re)started.  A shadow is a user WQE (copied from the SQ ring at
 * @ufetch) or an internal operation.  The user WQEs among them are
 * [ring.kcons, ufetch) of the SQ ring, in the same order, so there are
 * never more of them than the ring has entries.
 */
struct shca_req {
	struct shca_req_wqe *wqes;	/* the shadow queue */
	u32 nwqes;		/* its slots: a power of two */
	u32 wstride;		/* bytes a slot takes (shca_req_wqe_at()) */
	u32 head;		/* shadow index of the oldest unretired WQE */
	u32 fetch;		/* next shadow index to fill */
	u32 cur;		/* shadow index of the WQE being sent */
	u32 ufetch;		/* next SQ ring index to copy */
	u32 psn;		/* next PSN to send */
	u32 next_psn;		/* one past the newest PSN ever sent */
	u32 una;		/* oldest unacknowledged PSN */
	u32 since_ackreq;	/* packets sent since the last AckReq */
	u32 rnr_psn;		/* where to resume after the RNR wait */
	u32 gb_psn;		/* last go-back-N target (while gb_armed) */
	u32 wire_end;		/* one past the last PSN sent on the wire */
	u32 wire_charge;	/* counted in sdev->wire_inflight */
	struct shca_rc_win win;	/* adaptive send window (PSNs) */
	unsigned long rto_start; /* jiffies: retransmit timer (re)started */
	/*
	 * Adaptive retransmission (rc_req_logic.h): the round trip of one
	 * wire packet at a time is timed, from its first transmission to the
	 * ACK that covers it; @probes early resends were made in this
	 * timeout period, the last at @probe_start (rto_start before any).
	 */
	struct shca_rc_rtt rtt;
	u64 rtt_sent_ns;	/* ktime_get_ns() when @rtt_psn went out */
	u32 rtt_psn;		/* the PSN being timed, while @rtt_on */
	unsigned long probe_start; /* jiffies */
	u8 probes;
	bool rtt_on;
	unsigned long events;	/* SHCA_REQ_EV_* bits */
	struct shca_rc_retry retry;	/* timeouts, from retry_cnt */
	struct shca_rc_retry rnr;	/* RNR NAKs, from rnr_retry */
	u8 rto_held;		/* expiries held since the PSNs last advanced */
	bool rnr_wait;		/* RNR NAK received, timer running */
	bool gb_armed;		/* suppress repeated go-back to gb_psn */
	bool wire_sent;		/* @wire_end is valid */
	bool iop_cap;		/* takes internal operations (TM SRQ) */
	struct timer_list rto_timer;
	struct timer_list rnr_timer;
	/*
	 * Responses after a gap, held in arrival order while the packet
	 * that fills it may still be on its way (rc_req_comp.c); they gave
	 * up their QP references.  @comp_skb is the response being handled
	 * (NULL once it is held), @hold_rerun is set while the held ones are
	 * handled again.  @hold_time says how long the hold lasts
	 * (shca_hold_keep()); @hold_timer brings the engine back to look
	 * again meanwhile.
	 */
	struct sk_buff_head held;
	struct sk_buff *comp_skb;
	struct shca_hold_time hold_time;
	bool hold_rerun;
	struct timer_list hold_timer;
	/*
	 * Internal operations posted and not yet fetched.  iop_lock
	 * (irqsave) is a leaf lock: shca_req_post_iop() (any context), the
	 * SQ engine (fetch, error flush) and shca_req_stop() take it, and
	 * call nothing under it.
	 */
	spinlock_t iop_lock;
	struct list_head iops;		/* struct shca_req_iop, iop_lock */
	bool iop_closed;		/* destroy: no more posts, iop_lock */
};

/*
 * Expiries of the retransmit timer in a row, without progress, that may
 * be held because the packets wait at their destination on this host
 * (shca_direct_dest_holds()); the next one is a timeout whatever holds.
 */
#define SHCA_RC_RTO_HELD_MAX	8

bool shca_req_wants_iops(const struct shca_qp *qp);

#endif /* SHCA_RC_REQ_H */
