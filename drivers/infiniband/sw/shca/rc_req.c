// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RC/UC requester and completer.  See rc.h for the contract.
 */
#include "shca.h"

int shca_req_init(struct shca_qp *qp)
{
	return 0;
}

void shca_req_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		     int mask)
{
	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_SQ_PSN)
		qp->req.psn = attr->sq_psn & 0xffffff;
}

void shca_req_stop(struct shca_qp *qp)
{
}

void shca_req_fini(struct shca_qp *qp)
{
}

/* Context: qp->sq_work. */
void shca_req_work(struct shca_qp *qp)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&qp->comp_queue))) {
		kfree_skb(skb);
		shca_qp_put(qp);
	}
}
