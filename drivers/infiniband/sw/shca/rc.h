/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: RC/UC engine interfaces.
 *
 * Split of work:
 *  - rc_req.c  requester (its fetch in rc_req_fetch.c) and rc_req_comp.c
 *    completer (struct shca_req in rc_req.h).  They run only inside SQ
 *    engine runs (sq_engine.c: qp->sq_work, a user doorbell in the
 *    posting thread, rq_work catching up), serialised by qp->sq_engine:
 *    new WQEs from the SQ ring, response packets from qp->comp_queue
 *    (ACK, NAK, READ responses, atomic ACKs) and timer expiries (timers
 *    only set a flag and queue sq_work) are all handled there, so the
 *    requester state needs no other lock but for the queue of internal
 *    operations (req.iop_lock).
 *  - rc_resp.c responder, its operations in rc_resp_ops.c (struct
 *    shca_resp in rc_resp.h).  They run only inside RQ engine runs
 *    (rx_engine.c: qp->rq_work, or a same-host sender executing its
 *    request inline), serialised by qp->rq_engine, on request packets
 *    from qp->rx_queue; the responder owns the RQ consumer index and
 *    sends ACKs, NAKs, READ responses and atomic ACKs itself.
 *
 * Packet steering (rx_demux.c, softirq or the direct path): a packet whose
 * opcode is not of the QP's transport is dropped; SHCA_OPF_RESP opcodes
 * go to comp_queue and kick sq_work, everything else to rx_queue and
 * kicks rq_work.  Every
 * queued skb holds a QP reference, dropped by whoever consumes it.
 *
 * The QP hooks below are called from qp.c:
 *  - *_init at create (process, may sleep; RC/UC only), may fail;
 *  - *_modify after the attributes and the new state are stored, with
 *    qp->state_lock held (process, may sleep);
 *  - shca_req_stop at destroy after qp->dying is set and before the QP
 *    waits for its last reference: stops the timers (and drops their
 *    references);
 *  - *_fini at destroy after the last reference is gone: frees memory.
 */
#ifndef SHCA_RC_H
#define SHCA_RC_H

struct shca_qp;
struct shca_path;
struct sk_buff;
struct ib_qp_attr;

/* QP types run by the RC/UC engines: RC, UC and XRC (both ends). */
static inline bool shca_qp_is_conn(enum ib_qp_type type)
{
	return type == IB_QPT_RC || type == IB_QPT_UC ||
	       type == IB_QPT_XRC_INI || type == IB_QPT_XRC_TGT;
}

/* Reliable types: acknowledged, READ and atomics (RC, XRC). */
static inline bool shca_qp_is_reliable(enum ib_qp_type type)
{
	return type == IB_QPT_RC || type == IB_QPT_XRC_INI ||
	       type == IB_QPT_XRC_TGT;
}

/* rc_req.c */
int shca_req_init(struct shca_qp *qp);
void shca_req_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		     int mask);
void shca_req_stop(struct shca_qp *qp);
void shca_req_fini(struct shca_qp *qp);
bool shca_req_pass(struct shca_qp *qp, u32 *passes);
bool shca_req_pending(struct shca_qp *qp);
void shca_req_take_responses(struct shca_qp *qp);
bool shca_req_resumes(struct shca_qp *qp);

/* Passes of one sq_work run of an RC/UC QP before it yields the worker. */
#define SHCA_REQ_PASSES		4

/* rc_resp.c */
int shca_resp_init(struct shca_qp *qp);
int shca_resp_prepare(struct shca_qp *qp, const struct ib_qp_attr *attr,
		      int mask);
void shca_resp_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		      int mask);
void shca_resp_stop(struct shca_qp *qp);
void shca_resp_fini(struct shca_qp *qp);
bool shca_resp_rx(struct shca_qp *qp, struct sk_buff *skb);

#endif /* SHCA_RC_H */
