/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: receive WQEs as their consumers take them from an RQ, an SRQ or
 * a WQ (rwqe.c).
 */
#ifndef SHCA_RWQE_H
#define SHCA_RWQE_H

#include "shca.h"
#include "rq_logic.h"

/**
 * shca_rwqe_grant - the stride of a receive queue asked for @max_sge SGEs
 * @max_sge: the SGEs asked (checked against SHCA_MAX_SGE by the caller);
 *	     set to all that the stride holds, the SGEs granted
 *
 * What QP, SRQ and WQ creation share (rq_logic.h: shca_wqe_shift()).
 * Context: any.
 * Return: log2 of the stride, for shca_ring_alloc().
 */
static inline u32 shca_rwqe_grant(u32 *max_sge)
{
	const u32 hdr = sizeof(struct shca_recv_wqe);
	u32 shift = shca_wqe_shift(hdr, *max_sge, 0, SHCA_RQ_ENTRY_SHIFT);

	*max_sge = shca_wqe_sges(shift, hdr, SHCA_MAX_SGE);
	return shift;
}

/* A private copy of one receive WQE. */
struct shca_rwqe {
	struct shca_recv_wqe hdr;
	struct shca_sge sge[SHCA_MAX_SGE];
};

int shca_rwqe_pop(struct shca_ring *ring, struct shca_rwqe *w, u32 *left,
		  u32 max_sge);
int shca_rwqe_push(struct shca_ring *ring, const struct ib_recv_wr *wr,
		   u32 max_sge);
struct shca_srq *shca_rq_srq(struct shca_qp *qp);
int shca_rq_pop(struct shca_qp *qp, struct shca_rwqe *w);
struct shca_cq *shca_rq_cq(struct shca_qp *qp);
void shca_rq_broken(struct shca_qp *qp);
struct ib_pd *shca_rq_pd(struct shca_qp *qp);
int shca_srq_pop(struct shca_srq *srq, struct shca_rwqe *w);
int shca_srq_pop_locked(struct shca_srq *srq, struct shca_rwqe *w, int *ev);
void shca_srq_raise(struct shca_srq *srq, int ev);

#endif /* SHCA_RWQE_H */
