/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shca: receive WQEs as the RX engines (rq.c, rc_resp.c) take them. */
#ifndef SHCA_RQ_H
#define SHCA_RQ_H

#include "shca.h"

/* A private copy of one receive WQE. */
struct shca_rwqe {
	struct shca_recv_wqe hdr;
	struct shca_sge sge[SHCA_MAX_SGE];
};

int shca_rq_pop(struct shca_qp *qp, struct shca_rwqe *w);

#endif /* SHCA_RQ_H */
