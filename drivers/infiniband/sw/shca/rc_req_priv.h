/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: requester internals shared by rc_req.c (sending, timers, WQE
 * life cycle), rc_req_fetch.c (copying WQEs into shadows) and
 * rc_req_comp.c (the completer).  Everything here runs in SQ engine runs
 * only (qp->sq_engine held).
 */
#ifndef SHCA_RC_REQ_PRIV_H
#define SHCA_RC_REQ_PRIV_H

#include "shca.h"

/*
 * Kernel-private copy of one SQ WQE or internal operation (a shadow),
 * taken once when it is fetched, so that userspace cannot change a WQE
 * in flight.  Payload offsets of a packet are (psn - first_psn) * mtu;
 * on the direct path @mtu is the direct segment size (direct.h).
 */
struct shca_req_wqe {
	struct shca_send_wqe hdr;
	u32 len;		/* payload bytes (READ: bytes to read) */
	u32 mtu;		/* path MTU in bytes when started */
	u32 first_psn;
	u32 npkts;		/* PSNs the message consumes */
	u32 sent;		/* PSNs sent in the current pass */
	u32 seg_end;		/* READ: end of the last request sent */
	u32 acked;		/* READ/atomic: response PSNs received */
	/* the internal operation it executes, NULL for a user WQE */
	struct shca_req_iop *iop;
	u8 status;		/* enum ib_wc_status it failed with */
	bool started;		/* first_psn/npkts are valid (kept on resend) */
	bool direct;		/* started on the same-host path (kept too) */
	/*
	 * The payload description, as much as one SQ entry holds (the
	 * stride the QP's caps asked for: req->wstride sizes the slot).
	 */
	union {
		DECLARE_FLEX_ARRAY(struct shca_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inl);
	};
};

/* The shadow at free-running shadow index @idx. */
static inline struct shca_req_wqe *shca_req_wqe_at(struct shca_qp *qp,
						   u32 idx)
{
	return (void *)qp->req.wqes +
	       (size_t)shca_ring_slot(idx, qp->req.nwqes) * qp->req.wstride;
}

static inline bool shca_req_is_rd_atomic(const struct shca_req_wqe *w)
{
	return w->hdr.opcode == SHCA_OP_RDMA_READ ||
	       w->hdr.opcode == SHCA_OP_ATOMIC_CMP_AND_SWP ||
	       w->hdr.opcode == SHCA_OP_ATOMIC_FETCH_AND_ADD ||
	       w->hdr.opcode == SHCA_OP_FLUSH;
}

/* BIND_MW, LOCAL_INV, REG_MR: executed locally, no packets. */
static inline bool shca_req_is_local(const struct shca_req_wqe *w)
{
	return w->hdr.opcode == SHCA_OP_BIND_MW ||
	       w->hdr.opcode == SHCA_OP_LOCAL_INV ||
	       w->hdr.opcode == SHCA_OP_REG_MR;
}

static inline u32 shca_req_last_psn(const struct shca_req_wqe *w)
{
	return (w->first_psn + w->npkts - 1) & 0xffffff;
}

/* Were all packets of @w sent at least once (before @next_psn)? */
static inline bool shca_req_all_sent(const struct shca_req_wqe *w,
				     u32 next_psn)
{
	u32 end = (w->first_psn + w->npkts) & 0xffffff;

	return ((next_psn - end) & 0xffffff) < 0x800000;
}

/* rc_req.c */
void shca_req_retire(struct shca_qp *qp, enum ib_wc_status status);
void shca_req_fail(struct shca_qp *qp, struct shca_req_wqe *w,
		   enum ib_wc_status status);
void shca_req_advance(struct shca_qp *qp, u32 una);
bool shca_req_go_back(struct shca_qp *qp, u32 psn, bool guarded);
void shca_req_rnr_wait(struct shca_qp *qp, u32 psn, u8 code);
void shca_req_arm_hold(struct shca_qp *qp);
void shca_req_disarm_hold(struct shca_qp *qp);
int shca_req_cursor_at(struct shca_qp *qp, const struct shca_req_wqe *w,
		       u64 off, struct shca_sge_cursor *cur);

/* rc_req_fetch.c */
bool shca_req_iop_queued(struct shca_req *req);
enum shca_req_src shca_req_src(struct shca_qp *qp);
struct shca_req_wqe *shca_req_fetch(struct shca_qp *qp);

/* rc_req_comp.c */
bool shca_comp_rx(struct shca_qp *qp, struct sk_buff *skb);
void shca_comp_rerun(struct shca_qp *qp);
void shca_comp_hold_check(struct shca_qp *qp);
void shca_comp_hold_drop(struct shca_qp *qp);

#endif /* SHCA_RC_REQ_PRIV_H */
