// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RC/UC responder.  See rc.h for the contract.
 */
#include "shca.h"

int shca_resp_init(struct shca_qp *qp)
{
	return 0;
}

void shca_resp_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		      int mask)
{
	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_RQ_PSN)
		qp->resp.epsn = attr->rq_psn & 0xffffff;
}

void shca_resp_fini(struct shca_qp *qp)
{
}

/* Context: qp->rq_work.  Consumes nothing: the caller frees @skb. */
void shca_resp_rx(struct shca_qp *qp, struct sk_buff *skb)
{
	shca_stat_inc(to_sdev(qp->ibqp.device), SHCA_STAT_RX_DROPPED);
}
