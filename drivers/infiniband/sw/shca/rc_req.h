/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shca: RC/UC requester and completer state (owned by rc_req.c). */
#ifndef SHCA_RC_REQ_H
#define SHCA_RC_REQ_H

#include <linux/timer.h>
#include <linux/types.h>

#define SHCA_REQ_MAX_UNACKED	128	/* PSNs in flight, at most */
#define SHCA_REQ_MIN_WIN	8	/* the send window never shrinks below */
#define SHCA_REQ_ACKREQ_EVERY	16	/* AckReq at least every N packets */
#define SHCA_REQ_RNR_INFINITE	7	/* rnr_retry value: retry forever */

/* Bits of shca_req.events, set by the timers for sq_work. */
enum shca_req_event {
	SHCA_REQ_EV_RTO,
	SHCA_REQ_EV_RNR,
};

struct shca_req_wqe;

/*
 * A retry budget loaded from a QP attribute: shca_rc_retry_init_cnt()
 * for retry_cnt (transport retries after a local ACK timeout; 7 is seven
 * retries), shca_rc_retry_init_rnr() for rnr_retry (retries after an RNR
 * NAK; 7 means forever).
 */
struct shca_rc_retry {
	u8 left;		/* retries left, unless @infinite */
	bool infinite;		/* never exhausted */
};

/*
 * Adaptive send window, in PSNs.  Go-back-N resends everything in flight
 * after a loss, so the window halves on every sequence NAK and falls to
 * SHCA_REQ_MIN_WIN on a timeout; it doubles per round trip below
 * @ssthresh and then grows by one PSN per window acknowledged.
 */
struct shca_rc_win {
	u32 cur;		/* PSNs that may be unacknowledged */
	u32 ssthresh;		/* end of the doubling phase */
	u32 acc;		/* PSNs acknowledged towards the next +1 */
};

/*
 * Requester state.  Everything but @events and the timers themselves is
 * touched only inside qp->sq_work (and by shca_req_modify() before the
 * QP reaches RTS).  SQ ring indices: kcons (in the ring) <= cur <= fetch.
 * [kcons, cur) are fully sent and wait for acknowledgment, cur is being
 * sent, [cur, fetch) are copied but not (re)started.
 */
struct shca_req {
	struct shca_req_wqe *wqes;	/* shadow of every SQ slot */
	u32 psn;		/* next PSN to send */
	u32 next_psn;		/* one past the newest PSN ever sent */
	u32 una;		/* oldest unacknowledged PSN */
	u32 fetch;		/* next SQ index to copy into its shadow */
	u32 cur;		/* SQ index of the WQE being sent */
	u32 since_ackreq;	/* packets sent since the last AckReq */
	u32 rnr_psn;		/* where to resume after the RNR wait */
	u32 gb_psn;		/* last go-back-N target (while gb_armed) */
	struct shca_rc_win win;	/* adaptive send window (PSNs) */
	unsigned long rto_start; /* jiffies: retransmit timer (re)started */
	unsigned long events;	/* SHCA_REQ_EV_* bits */
	struct shca_rc_retry retry;	/* timeouts, from retry_cnt */
	struct shca_rc_retry rnr;	/* RNR NAKs, from rnr_retry */
	bool rnr_wait;		/* RNR NAK received, timer running */
	bool gb_armed;		/* suppress repeated go-back to gb_psn */
	struct timer_list rto_timer;
	struct timer_list rnr_timer;
};

/* Pure decisions of the requester, exercised by kunit/shca_kunit_rc.c. */
enum shca_rc_ack_class {
	SHCA_RC_ACK_NEW,	/* acknowledges PSNs not yet acknowledged */
	SHCA_RC_ACK_DUP,	/* stale or duplicate */
	SHCA_RC_ACK_INVALID,	/* names a PSN never sent */
};

enum shca_rc_aeth_kind {
	SHCA_RC_AETH_ACK,
	SHCA_RC_AETH_RNR,
	SHCA_RC_AETH_NAK_SEQ,
	SHCA_RC_AETH_NAK_INV,
	SHCA_RC_AETH_NAK_ACCESS,
	SHCA_RC_AETH_NAK_OP,
	SHCA_RC_AETH_BAD,
};

/*
 * Each retransmit timeout without progress doubles the next wait, up to
 * 2^SHCA_RC_RTO_BACKOFF_MAX times the QP's local ACK timeout.
 */
#define SHCA_RC_RTO_BACKOFF_MAX 4

u64 shca_rc_rto_ns(u8 timeout);
u64 shca_rc_rto_backoff_ns(u8 timeout, u8 backoff);
u64 shca_rc_rnr_ns(u8 code);
void shca_rc_retry_init_cnt(struct shca_rc_retry *r, u8 retry_cnt);
void shca_rc_retry_init_rnr(struct shca_rc_retry *r, u8 rnr_retry);
bool shca_rc_retry_take(struct shca_rc_retry *r);
enum shca_rc_ack_class shca_rc_ack_classify(u32 psn, u32 una, u32 next_psn);
enum shca_rc_aeth_kind shca_rc_aeth_kind(u8 syndrome);
u32 shca_rc_npkts(u32 len, u32 mtu, bool read);
u32 shca_rc_read_seg_end(u32 k, u32 end, u32 acked, u32 npkts, u32 win);
bool shca_rc_read_last_ok(u32 k, u32 sent, u32 npkts, bool last);
void shca_rc_win_reset(struct shca_rc_win *win);
void shca_rc_win_grow(struct shca_rc_win *win, u32 acked);
void shca_rc_win_loss(struct shca_rc_win *win, bool timeout);

#endif /* SHCA_RC_REQ_H */
