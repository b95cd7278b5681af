/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: responder internals shared by rc_resp.c (sequencing, ACKs and
 * NAKs, the responses sent, holds) and rc_resp_ops.c (the operations and
 * the receive WQEs they consume).  Everything here runs in RQ engine runs
 * only (qp->rq_engine held).
 */
#ifndef SHCA_RC_RESP_PRIV_H
#define SHCA_RC_RESP_PRIV_H

#include "shca.h"
#include "wire.h"

enum shca_resp_verdict {
	SHCA_RV_DONE,		/* executed: advance ePSN */
	SHCA_RV_DROP,		/* ignored, nothing changes */
	SHCA_RV_RNR,		/* no receive WQE */
	SHCA_RV_NAK_INV,	/* invalid request */
	SHCA_RV_NAK_ACC,	/* remote access error */
	SHCA_RV_NAK_OP,		/* remote operational error */
};

/* One request packet as the handlers see it. */
struct shca_resp_pkt {
	struct shca_wire_pkt w;
	u32 flags;		/* opcode flags */
	u8 *payload;
	u32 npkts;		/* PSNs used (READ: response packets) */
	u32 mtu;		/* its segment size: the path MTU, or direct */
	bool direct;		/* it came on the same-host path */
	bool local_err;		/* a receive WQE completed in error */
	bool rq_broken;		/* the receive ring is broken */
};

static inline struct shca_dev *shca_resp_sdev(struct shca_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

static inline void shca_resp_res_clear(struct shca_resp_res *res)
{
	memset(res, 0, sizeof(*res));
}

/* rc_resp_ops.c */
enum shca_resp_verdict shca_resp_dispatch(struct shca_qp *qp,
					  struct shca_resp_pkt *p);
void shca_resp_abort_msg(struct shca_qp *qp);
void shca_resp_complete_err(struct shca_qp *qp, enum ib_wc_status status);
u32 shca_resp_next_msn(struct shca_resp *resp);
int shca_resp_rkey_check(struct shca_qp *qp, u32 rkey, u64 va, u32 len,
			 int access);

#endif /* SHCA_RC_RESP_PRIV_H */
