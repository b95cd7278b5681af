/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: tag matching SRQs (IBV_SRQT_TM), owned by tm.c.
 *
 * A TM SRQ is a basic SRQ (its ring holds the ordinary receive WQEs that
 * unexpected messages land in) plus a tag list (tm_logic.h) and a ring of
 * list operations that the provider fills and the kernel executes when
 * the provider rings the doorbell (see shca-abi.h).
 *
 * Locking: the tag list is srq->lock's, like the SRQ ring, so that a
 * message's match, or its fall-back to an ordinary WQE and the count of
 * unexpected messages, is atomic with respect to list operations.
 * tm->ops_lock (mutex) serialises doorbells: ops_lock -> srq->lock.
 */
#ifndef SHCA_TM_H
#define SHCA_TM_H

#include "tm_logic.h"

#define SHCA_TM_MAX_TAGS	1024
#define SHCA_TM_MAX_OPS		1024
#define SHCA_TM_MAX_RNDV_HDR	64
#define SHCA_TM_OP_ENTRY_SHIFT	7

static_assert(sizeof(struct shca_tm_op_wqe) +
	      SHCA_TM_MAX_SGE * sizeof(struct shca_sge) <=
	      (1U << SHCA_TM_OP_ENTRY_SHIFT));

struct shca_tm {
	struct shca_tm_list list;	/* srq->lock */
	struct shca_tm_tag *tags;	/* the list's entries */
	struct mutex ops_lock;		/* one doorbell at a time */
	struct shca_ring ops;		/* provider produces, doorbell consumes */
};

/* What the message in progress on a QP of a TM SRQ is (resp->tm_kind). */
enum shca_tm_rx_kind {
	SHCA_TM_RX_NONE,	/* not a TM SRQ message (or none) */
	SHCA_TM_RX_PLAIN,	/* malformed: an ordinary IB_WC_RECV */
	SHCA_TM_RX_NO_TAG,	/* NO_TAG or FIN: IBV_WC_TM_NO_TAG */
	SHCA_TM_RX_UNEXP,	/* tagged, matched nothing */
	SHCA_TM_RX_EAGER,	/* eager, into a tag's buffer */
};

struct shca_qp;
struct shca_srq;
struct shca_cqe;
struct shca_rwqe;
struct shca_create_srq_resp;
struct ib_srq_init_attr;
struct ib_udata;

int shca_tm_create(struct shca_srq *srq, struct ib_srq_init_attr *init,
		   u32 max_ops, struct ib_udata *udata);
void shca_tm_fill_resp(struct shca_srq *srq,
		       struct shca_create_srq_resp *resp);
void shca_tm_destroy(struct shca_srq *srq);
int shca_tm_doorbell(struct shca_srq *srq);

/* Receive side, for rc_resp.c.  Context: qp->rq_work. */
int shca_tm_rx_first(struct shca_qp *qp, struct shca_srq *srq,
		     const u8 *payload, u32 len, bool only);
void shca_tm_rx_complete(struct shca_qp *qp, struct shca_cqe *cqe);
void shca_tm_rx_rndv_go(struct shca_qp *qp);

#endif /* SHCA_TM_H */
