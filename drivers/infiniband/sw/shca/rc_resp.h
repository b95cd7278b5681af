/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: RC/UC responder state (owned by rc_resp.c and rc_resp_ops.c).
 *
 * Everything but the handover block is touched only by the RQ engine
 * (qp->rq_engine held: rq_work, or a same-host sender running it inline).
 * shca_resp_modify() (state_lock, process) fills the handover block and
 * sets @reset with release semantics when the QP enters RTR; the engine
 * applies it (acquire) before it looks at the next packet, so the engine
 * state is never written from two contexts.
 */
#ifndef SHCA_RC_RESP_H
#define SHCA_RC_RESP_H

#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <linux/types.h>

#include "hold_logic.h"

struct shca_dev;
struct shca_qp;
struct shca_rwqe;
struct shca_srq;
struct shca_tm_rndv;
struct ib_pd;

enum shca_resp_res_type {
	SHCA_RES_NONE,
	SHCA_RES_READ,
	SHCA_RES_ATOMIC,
};

/* A responder resource: one RDMA READ or atomic, kept for duplicates. */
struct shca_resp_res {
	u8 type;		/* enum shca_resp_res_type */
	bool pending;		/* responses still to be sent */
	u32 psn;		/* PSN of the request */
	u32 npkts;		/* PSNs the request used */
	u32 msn;		/* MSN once the request completed */
	u32 rkey;
	u64 va;			/* READ: first byte */
	u32 len;		/* READ: bytes */
	u64 orig;		/* atomic: value before the operation */
	u32 srqn;		/* XRC: the SRQ whose PD READ responses use */
	u64 srq_uid;		/* ... that very SRQ (shca_srq.uid) */
	u32 mtu;		/* READ: bytes per response packet */
	bool direct;		/* the request came on the same-host path */
	bool flush;		/* a FLUSH's: a READ response of nothing */
	/* READ transmit cursor */
	u32 tx_idx;		/* response packets sent */
};

/*
 * The READ/atomic resource ring of one connection, sized at the move to
 * RTR by its max_dest_rd_atomic (at least 1).
 */
struct shca_resp_res_ring {
	u32 n;
	struct shca_resp_res res[];
};

struct shca_resp {
	u32 epsn;		/* next expected PSN */
	u32 msn;		/* messages completed, 24 bits */
	u32 mtu;		/* path MTU in bytes */
	bool direct;		/* the last request came on the same-host path */
	u32 unacked;		/* packets executed since the last ACK */
	bool ack_due;		/* send an ACK once responses are out */
	bool nak_seq_sent;	/* a PSN sequence NAK went out for the gap */
	bool nak_seq_due;	/* ... and it is still to be sent */
	/*
	 * The delayed ACK of the wire: armed (with a QP reference) at the end
	 * of a batch that leaves packets unacknowledged with no ACK asked for;
	 * when it expires it sets bit 0 of @ack_timed and runs rq_work.
	 */
	struct hrtimer ack_timer;
	unsigned long ack_timed;
	/*
	 * Requests after a gap, held in PSN order while the packet that
	 * fills it may still be on its way (rc_resp.c, "Reordering"); they
	 * gave up their QP references.  @hold_time says how long the hold
	 * lasts (shca_hold_keep()); @hold_timer (armed with a QP reference)
	 * runs rq_work to look again meanwhile.
	 */
	struct sk_buff_head held;
	struct shca_hold_time hold_time;
	struct hrtimer hold_timer;

	/* the SEND or WRITE message in progress */
	u32 msg_kind;		/* SHCA_OPF_SEND/_WRITE, 0 if none */
	struct shca_rwqe *wqe;	/* receive WQE copy (allocated at init) */
	bool wqe_valid;		/* @wqe was taken from the RQ */
	u32 sge_idx;		/* scatter cursor in @wqe */
	u32 sge_off;
	u32 rcv_len;		/* SEND bytes received so far */
	u32 rkey;		/* WRITE: R_Key, looked up per packet */
	u64 va;			/* WRITE: first byte */
	u32 dma_len;		/* WRITE: RETH length */
	u32 wr_done;		/* WRITE: bytes written so far */
	u32 msg_srqn;		/* XRC: the SRQ the message is for */
	u64 msg_srq_uid;	/* ... that very SRQ (shca_srq.uid) */

	/* TM SRQ (tm.c): what the message in progress is */
	u8 tm_kind;		/* enum shca_tm_rx_kind */
	u8 tm_skip;		/* header bytes not scattered (the TMH) */
	bool tm_match_sent;	/* the match was reported on its own */
	bool tm_sync_req;	/* unexpected: ask software for a SYNC */
	u16 tm_handle;		/* the matched tag */
	struct shca_tm_rndv *tm_rndv;	/* rendezvous to start after the ACK */
	u32 tm_app_ctx;		/* TMH of the matched message */
	u64 tm_tag;

	/*
	 * XRC target: the SRQ the packet (or response) in hand names,
	 * referenced until it is done with; NULL if none of its domain.
	 */
	struct shca_srq *xsrq;

	/* READ and atomic resources: a ring of @nres entries (@ring's) */
	struct shca_resp_res_ring *ring;
	struct shca_resp_res *res;
	u32 nres;
	u32 res_tx;		/* oldest entry with responses pending */
	u32 npending;		/* entries with responses pending */

	/* handover from shca_resp_modify() */
	unsigned long reset;	/* bit 0: apply the init_* values */
	u32 init_epsn;
	u32 init_mtu;
	/*
	 * The next connection's resource ring, handed over by xchg(): the
	 * engine takes it (and frees the old one) when it applies the RTR
	 * handover; a later RTR before that frees it and hands over its own.
	 */
	struct shca_resp_res_ring *init_ring;
	/* allocated by shca_resp_prepare(), state_lock held, for the modify */
	struct shca_resp_res_ring *prep_ring;
};

/* rc_resp.c: end of an RQ engine run; true if rq_work must run again. */
bool shca_resp_batch_end(struct shca_qp *qp);

#endif /* SHCA_RC_RESP_H */
