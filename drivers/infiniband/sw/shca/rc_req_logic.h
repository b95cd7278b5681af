/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the pure decisions of the RC/UC requester (rc_req.c,
 * rc_req_comp.c) - retransmit and RNR timeouts, retry budgets, ACK
 * ranges, AETH syndromes, segmentation, the adaptive send window, the
 * round-trip estimate and early resends (adaptive retransmission), and
 * where the next shadow WQE comes from.  No device state, no locks;
 * kunit/shca_kunit_rc.c tests these exact functions.
 */
#ifndef SHCA_RC_REQ_LOGIC_H
#define SHCA_RC_REQ_LOGIC_H

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/types.h>

#include "psn.h"
#include "wire.h"

#define SHCA_REQ_MAX_UNACKED	128	/* PSNs in flight, at most */
#define SHCA_REQ_MIN_WIN	8	/* the send window never shrinks below */
#define SHCA_REQ_RNR_INFINITE	7	/* rnr_retry value: retry forever */

/* Shadow slots added for internal operations on a QP that takes them. */
#define SHCA_REQ_IOP_SLOTS	16

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

/* Where the next shadow WQE comes from (shca_req_fetch_src()). */
enum shca_req_src {
	SHCA_REQ_SRC_NONE,	/* no free shadow slot, or nothing may come */
	SHCA_REQ_SRC_IOP,	/* the oldest queued internal operation */
	SHCA_REQ_SRC_USER,	/* the SQ ring, if anything is posted there */
};

/*
 * Each retransmit timeout without progress doubles the next wait, up to
 * 2^SHCA_RC_RTO_BACKOFF_MAX times the QP's local ACK timeout.
 */
#define SHCA_RC_RTO_BACKOFF_MAX 4

/**
 * shca_rc_rto_ns - local ACK timeout for the QP attribute "timeout"
 * @timeout: 5-bit attribute; 0 means no timer
 *
 * Return: 4.096 us * 2^@timeout in ns, 0 for no timeout.
 */
static inline u64 shca_rc_rto_ns(u8 timeout)
{
	if (!timeout)
		return 0;
	return 4096ULL << min_t(u8, timeout, 31);
}

/**
 * shca_rc_rto_backoff_ns - the retransmit wait after timeouts
 * @timeout: 5-bit QP attribute; 0 means no timer
 * @backoff: timeouts in a row since the PSNs last advanced
 *
 * The IBTA value is the shortest the timer may be.  Waiting longer after
 * each timeout that brought no progress lets a peer that is slow, not dead
 * (a loaded host, an emulated CPU), answer before retry_cnt runs out,
 * while the first retransmission still comes after the QP's own timeout.
 *
 * Return: shca_rc_rto_ns(@timeout) * 2^min(@backoff,
 * SHCA_RC_RTO_BACKOFF_MAX), 0 for no timeout.
 */
static inline u64 shca_rc_rto_backoff_ns(u8 timeout, u8 backoff)
{
	return shca_rc_rto_ns(timeout) <<
	       min_t(u8, backoff, SHCA_RC_RTO_BACKOFF_MAX);
}

/*
 * Adaptive retransmission: a requester whose peer is on another host
 * resends from the oldest unacknowledged PSN once no acknowledgment has
 * come for its smoothed round trip plus four deviations (at least
 * SHCA_RC_PROBE_MIN_US), before the QP's local ACK timeout expires: a
 * lost tail (the last packets of a burst, or a go-back's first packet
 * lost again, after which the responder stays silent) costs a few round
 * trips instead of the whole timeout.  Up to SHCA_RC_PROBES_MAX such
 * probes per timeout period, each twice as late as the one before;
 * they consume no retry_cnt (only a timeout does), and the responder
 * answers a duplicate with an ACK, so a spurious probe costs bandwidth,
 * never correctness.  A probe is only sent while it comes at most half
 * way through the timeout.
 */
#define SHCA_RC_PROBE_MIN_US	10000
#define SHCA_RC_PROBES_MAX	2

/**
 * struct shca_rc_rtt - a requester's round-trip estimate
 * @srtt_us: smoothed round trip (7/8 old, 1/8 sample); 0: no sample yet
 * @var_us: its mean deviation (3/4 old, 1/4 sample)
 */
struct shca_rc_rtt {
	u32 srtt_us;
	u32 var_us;
};

/**
 * shca_rc_rtt_sample - fold one round trip into the estimate
 * @r: estimate
 * @us: from a packet's first transmission to the ACK that covered it
 *	(never a retransmitted packet's: which copy was acknowledged is not
 *	known), microseconds
 */
static inline void shca_rc_rtt_sample(struct shca_rc_rtt *r, u32 us)
{
	u32 dev;

	us = max_t(u32, us, 1);
	if (!r->srtt_us) {
		r->srtt_us = us;
		r->var_us = us / 2;
		return;
	}
	dev = us > r->srtt_us ? us - r->srtt_us : r->srtt_us - us;
	r->var_us = r->var_us - r->var_us / 4 + dev / 4;
	r->srtt_us = max_t(u32, r->srtt_us - r->srtt_us / 8 + us / 8, 1);
}

/**
 * shca_rc_probe_ns - the wait before an early resend
 * @r: estimate
 * @probes: early resends already made in this timeout period
 * @rto_ns: the QP's local ACK timeout (shca_rc_rto_ns()); 0: no timer
 *
 * Return: (srtt + 4 * var, at least SHCA_RC_PROBE_MIN_US) * 2^@probes in
 * ns, counted from the period's start for the first probe and from the
 * previous probe for the next; 0 for no probe (no estimate yet, no
 * timer, SHCA_RC_PROBES_MAX made, or the wait is more than half of
 * @rto_ns).
 */
static inline u64 shca_rc_probe_ns(const struct shca_rc_rtt *r, u8 probes,
				   u64 rto_ns)
{
	u64 ns;

	if (!r->srtt_us || !rto_ns || probes >= SHCA_RC_PROBES_MAX)
		return 0;
	ns = max_t(u64, (u64)r->srtt_us + 4ULL * r->var_us,
		   SHCA_RC_PROBE_MIN_US) * NSEC_PER_USEC << probes;
	return ns <= rto_ns / 2 ? ns : 0;
}

/**
 * shca_rc_rnr_ns - the RNR wait of an RNR NAK's timer field
 * @code: 5-bit timer code (0 = 655.36 ms, 1 = 0.01 ms ... 31 = 491.52 ms)
 *
 * Return: nanoseconds.
 */
static inline u64 shca_rc_rnr_ns(u8 code)
{
	/* IBTA RNR NAK timer field encoding, in units of 10 us */
	static const u32 rnr_10us[32] = {
		65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768, 49152,
	};

	return (u64)rnr_10us[code & 31] * 10 * NSEC_PER_USEC;
}

/**
 * shca_rc_retry_init_cnt - the timeout retry budget of a QP
 * @r: budget to (re)load
 * @retry_cnt: the QP attribute; every value, 7 included, is a count
 */
static inline void shca_rc_retry_init_cnt(struct shca_rc_retry *r,
					  u8 retry_cnt)
{
	r->left = retry_cnt;
	r->infinite = false;
}

/**
 * shca_rc_retry_init_rnr - the RNR NAK retry budget of a QP
 * @r: budget to (re)load
 * @rnr_retry: the QP attribute; SHCA_REQ_RNR_INFINITE (7) retries forever
 */
static inline void shca_rc_retry_init_rnr(struct shca_rc_retry *r,
					  u8 rnr_retry)
{
	r->left = rnr_retry;
	r->infinite = rnr_retry == SHCA_REQ_RNR_INFINITE;
}

/**
 * shca_rc_retry_take - consume one retry if any is left
 * @r: budget; @r->left is decremented on success unless @r->infinite
 *
 * Return: true to retry, false when the retries are exhausted.
 */
static inline bool shca_rc_retry_take(struct shca_rc_retry *r)
{
	if (r->infinite)
		return true;
	if (!r->left)
		return false;
	r->left--;
	return true;
}

/**
 * shca_rc_ack_classify - what an ACK of every PSN up to @psn means
 * @psn: PSN in the AETH-carrying response
 * @una: oldest unacknowledged PSN
 * @next_psn: one past the newest PSN sent
 *
 * Return: NEW if @psn is in [@una, @next_psn), DUP if it is older than
 * @una, INVALID if it was never sent.
 */
static inline enum shca_rc_ack_class shca_rc_ack_classify(u32 psn, u32 una,
							  u32 next_psn)
{
	if (shca_psn_in_window(psn, una, shca_psn_mask(next_psn - una)))
		return SHCA_RC_ACK_NEW;
	if (shca_psn_before(psn, una))
		return SHCA_RC_ACK_DUP;
	return SHCA_RC_ACK_INVALID;
}

/**
 * shca_rc_aeth_kind - decode an AETH syndrome
 * @syndrome: the 8-bit syndrome
 *
 * Return: ACK (0b000xxxxx), RNR NAK (0b001xxxxx), one of the four NAK
 * codes (0b011000xx), or BAD for reserved encodings.
 */
static inline enum shca_rc_aeth_kind shca_rc_aeth_kind(u8 syndrome)
{
	switch (syndrome >> 5) {
	case 0:
		return SHCA_RC_AETH_ACK;
	case 1:
		return SHCA_RC_AETH_RNR;
	case 3:
		break;
	default:
		return SHCA_RC_AETH_BAD;
	}
	switch (syndrome & 0x1f) {
	case 0:
		return SHCA_RC_AETH_NAK_SEQ;
	case 1:
		return SHCA_RC_AETH_NAK_INV;
	case 2:
		return SHCA_RC_AETH_NAK_ACCESS;
	case 3:
		return SHCA_RC_AETH_NAK_OP;
	default:
		return SHCA_RC_AETH_BAD;
	}
}

/**
 * shca_rc_npkts - PSNs a message of @len bytes consumes
 * @len: payload bytes
 * @mtu: path MTU in bytes
 * @read: RDMA READ (one PSN per response packet)
 *
 * Return: max(1, ceil(@len / @mtu)); the same for READ and other messages.
 */
static inline u32 shca_rc_npkts(u32 len, u32 mtu, bool read)
{
	return len ? DIV_ROUND_UP(len, mtu) : 1;
}

/**
 * shca_rc_read_seg_end() - where the next READ request of a WQE ends
 * @k: the response PSN it starts at (the WQE's PSNs sent so far)
 * @end: end of the last request sent, 0 before the first
 * @acked: response PSNs received, in order
 * @npkts: response PSNs of the whole READ
 * @win: the send window, in PSNs
 *
 * A READ is asked for a window at a time; the next request goes once
 * every response to the last one arrived; a resend (@k inside the last
 * request, after a go-back) asks for the rest of that request only.
 *
 * Return: the end of the request to send, or @k if it must wait.
 */
static inline u32 shca_rc_read_seg_end(u32 k, u32 end, u32 acked,
				       u32 npkts, u32 win)
{
	if (k < end)
		return end;
	if (acked < k)
		return k;
	return k + min(npkts - k, max(win, 1U));
}

/**
 * shca_rc_read_last_ok() - may READ response @k carry the LAST flag?
 * @k: the response's index in the WQE
 * @sent: the WQE's response PSNs asked for so far
 * @npkts: response PSNs of the whole READ
 * @last: whether it carries LAST
 *
 * A response's bytes depend on its PSN alone.  The WQE's last packet ends
 * a response; another may only at the end of the request sent last, and
 * need not (a response to an earlier, longer request, overtaken by a
 * go-back).
 *
 * Return: true if the flag is where it may be.
 */
static inline bool shca_rc_read_last_ok(u32 k, u32 sent, u32 npkts,
					bool last)
{
	if (k == npkts - 1)
		return last;
	return !last || k + 1 == sent;
}

/* Largest FLUSH range a WQE may name: the RETH's DMA length, as a message. */
#define SHCA_REQ_FLUSH_MAX	BIT_ULL(31)

/**
 * shca_req_flush_check() - are a FLUSH WQE's parameters valid?
 * @type: placement type, SHCA_FETH_PLT_* bits (the IBV_FLUSH_* values)
 * @level: selectivity level, SHCA_FETH_SEL_RANGE or SHCA_FETH_SEL_MR
 * @length: range length (used at SHCA_FETH_SEL_RANGE only)
 *
 * Return: 0; -EINVAL for no placement type, an unknown type bit or an
 * unknown level; -EMSGSIZE for a range longer than SHCA_REQ_FLUSH_MAX.
 */
static inline int shca_req_flush_check(u8 type, u8 level, u64 length)
{
	if (!type || (type & ~(SHCA_FETH_PLT_GLOBAL |
			       SHCA_FETH_PLT_PERSISTENT)))
		return -EINVAL;
	if (level != SHCA_FETH_SEL_RANGE && level != SHCA_FETH_SEL_MR)
		return -EINVAL;
	if (level == SHCA_FETH_SEL_RANGE && length > SHCA_REQ_FLUSH_MAX)
		return -EMSGSIZE;
	return 0;
}

/**
 * shca_req_flush_dma_len() - the RETH DMA length of a FLUSH
 * @level: selectivity level, checked by shca_req_flush_check()
 * @length: the WQE's range length
 *
 * Return: @length for a range; 0 for a whole region, whose length the
 * responder takes from the region itself.
 */
static inline u32 shca_req_flush_dma_len(u8 level, u64 length)
{
	return level == SHCA_FETH_SEL_RANGE ? (u32)length : 0;
}

/**
 * shca_rc_win_reset - the window of a fresh connection: fully open
 * @win: window
 */
static inline void shca_rc_win_reset(struct shca_rc_win *win)
{
	win->cur = SHCA_REQ_MAX_UNACKED;
	win->ssthresh = SHCA_REQ_MAX_UNACKED;
	win->acc = 0;
}

/**
 * shca_rc_win_grow - @acked more PSNs were acknowledged
 * @win: window
 * @acked: newly acknowledged PSNs
 *
 * Below ssthresh the window grows by @acked (doubling per round trip),
 * above it by one PSN per full window acknowledged; never beyond
 * SHCA_REQ_MAX_UNACKED.
 */
static inline void shca_rc_win_grow(struct shca_rc_win *win, u32 acked)
{
	if (win->cur >= SHCA_REQ_MAX_UNACKED)
		return;
	if (win->cur < win->ssthresh) {
		win->cur = min3(win->cur + acked, win->ssthresh,
				(u32)SHCA_REQ_MAX_UNACKED);
		return;
	}
	win->acc += acked;
	while (win->acc >= win->cur && win->cur < SHCA_REQ_MAX_UNACKED) {
		win->acc -= win->cur;
		win->cur++;
	}
}

/**
 * shca_rc_win_loss - a loss was detected
 * @win: window
 * @timeout: by the retransmit timer (else by a sequence NAK)
 *
 * ssthresh becomes half the window; a NAK continues from there, a
 * timeout restarts from SHCA_REQ_MIN_WIN.
 */
static inline void shca_rc_win_loss(struct shca_rc_win *win, bool timeout)
{
	win->ssthresh = max_t(u32, win->cur / 2, SHCA_REQ_MIN_WIN);
	win->cur = timeout ? SHCA_REQ_MIN_WIN : win->ssthresh;
	win->acc = 0;
}

/**
 * shca_req_shadow_entries() - slots of a QP's shadow queue
 * @sq_entries: entries of the SQ ring (a power of two)
 * @iops: the QP takes internal operations
 *
 * Return: @sq_entries, or with @iops the power of two that also holds
 * SHCA_REQ_IOP_SLOTS internal operations.
 */
static inline u32 shca_req_shadow_entries(u32 sq_entries, bool iops)
{
	return iops ? roundup_pow_of_two(sq_entries + SHCA_REQ_IOP_SLOTS) :
		      sq_entries;
}

/**
 * shca_req_fetch_src() - where the next shadow WQE comes from
 * @shadows: shadows in use (fetched, not retired)
 * @nwqes: slots of the shadow queue
 * @iop_queued: an internal operation is queued
 * @user_shadows: shadows that hold user WQEs
 * @user_entries: entries of the SQ ring
 *
 * Internal operations go first while a slot is free.  The SQ ring is
 * asked when a slot is free, and also when it has all its entries in
 * shadows: then nothing can be copied from it (shca_req_fetch_user()
 * refuses a producer index beyond them), but a hostile producer index is
 * noticed there as it always was.
 *
 * Return: SHCA_REQ_SRC_IOP, SHCA_REQ_SRC_USER or SHCA_REQ_SRC_NONE.
 */
static inline enum shca_req_src shca_req_fetch_src(u32 shadows, u32 nwqes,
						   bool iop_queued,
						   u32 user_shadows,
						   u32 user_entries)
{
	bool room = shadows < nwqes;

	if (room && iop_queued)
		return SHCA_REQ_SRC_IOP;
	if (room || user_shadows >= user_entries)
		return SHCA_REQ_SRC_USER;
	return SHCA_REQ_SRC_NONE;
}

#endif /* SHCA_RC_REQ_LOGIC_H */
