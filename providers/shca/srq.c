// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues (basic).  The kernel hands out a ring in the RQ's
 * format (see struct shca_create_srq_resp in shca-abi.h); receives are
 * written straight into it and need no system call.  XRC and tag-matching
 * SRQs are not offered: without a create_srq_ex op libibverbs reports
 * EOPNOTSUPP for them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

/* Check what the kernel returned and map the ring. */
static int shca_srq_setup(struct shca_srq *srq, struct ibv_context *ctx,
			  const struct ibv_srq_attr *want,
			  const struct ibv_srq_attr *got,
			  const struct shca_create_srq_resp *resp)
{
	int ret = EPROTO;

	if ((resp->comp_mask & SHCA_CREATE_SRQ_RESP_CMASK_RING) &&
	    got->max_wr >= want->max_wr && got->max_sge >= want->max_sge)
		ret = shca_wq_map(&srq->wq.ring, &resp->ring, ctx->cmd_fd,
				  got->max_wr, sizeof(struct shca_recv_wqe),
				  got->max_sge, 0);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx), "SRQ %u: bad response from kernel\n",
			  resp->srqn);
		return ret;
	}
	srq->wq.max_sge = got->max_sge;
	srq->srqn = resp->srqn;
	return 0;
}

struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct ushca_create_srq_resp resp = {};
	struct ushca_create_srq cmd = {};
	struct ibv_srq_attr want = attr->attr;
	struct shca_srq *srq;
	int ret = ENOMEM;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		goto err;
	pthread_spin_init(&srq->wq.lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = shca_srq_setup(srq, pd->context, &want, &attr->attr,
			     &resp.drv_payload);
	if (ret)
		goto err_destroy;
	return &srq->ibv_srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	pthread_spin_destroy(&srq->wq.lock);
	free(srq);
err:
	errno = ret;
	return NULL;
}

/* Fails (EBUSY, from ib_core) while a QP still uses the SRQ. */
int shca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	shca_ring_unmap(&srq->wq.ring);
	pthread_spin_destroy(&srq->wq.lock);
	free(srq);
	return 0;
}

/* The kernel arms the limit; resizing is refused there. */
int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int shca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

/* Receives need no doorbell: the kernel takes them as packets arrive. */
int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	return shca_wq_post_recv(&to_shca_srq(ibsrq)->wq, wr, bad_wr);
}
