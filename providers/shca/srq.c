// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues, basic, XRC and tag matching.  The kernel hands
 * out a ring in the RQ's format (see struct shca_create_srq_resp in
 * shca-abi.h); receives are written straight into it and need no system
 * call, whatever the SRQ's type.  An XRC SRQ also has a number, the one
 * XRC initiators name in their sends (ibv_get_srq_num()).  A tag-matching
 * SRQ also has a ring of tag list operations and its tag handles (tm.c);
 * its ordinary ring takes the unexpected messages.
 *
 * Resizing (ibv_modify_srq() with IBV_SRQ_MAX_WR) swaps the ring: the
 * kernel moves the posted receives to a new ring at the same indices and
 * describes it; we map it, switch over and unmap the old one, with the
 * posting lock held throughout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

#define SHCA_SRQ_INIT_ATTR_KNOWN                                               \
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |                       \
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM)

/**
 * shca_srq_check_attr - validate the attributes of ibv_create_srq_ex()
 * @attr: the caller's attributes
 *
 * Return: 0; EINVAL for an unknown comp_mask bit, an unknown type or a
 * missing PD (every type), XRC domain or CQ (XRC), CQ or TM caps (TM:
 * at least one tag and one operation).
 */
int shca_srq_check_attr(const struct ibv_srq_init_attr_ex *attr)
{
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	uint32_t mask = attr->comp_mask;

	if (mask & ~(uint32_t)SHCA_SRQ_INIT_ATTR_KNOWN)
		return EINVAL;
	if (mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	switch (type) {
	case IBV_SRQT_BASIC:
		break;
	case IBV_SRQT_XRC:
		if (!(mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
		    !(mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq)
			return EINVAL;
		break;
	case IBV_SRQT_TM:
		if (!(mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq ||
		    !(mask & IBV_SRQ_INIT_ATTR_TM) ||
		    !attr->tm_cap.max_num_tags || !attr->tm_cap.max_ops)
			return EINVAL;
		break;
	default:
		return EINVAL;
	}
	if (!(mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	return 0;
}

/*
 * Check what the kernel returned and map the ring.  An XRC SRQ's number
 * in our response must be the one ib_core reported (vsrq.srq_num).
 */
static int shca_srq_setup(struct shca_srq *srq, struct ibv_context *ctx,
			  const struct ibv_srq_attr *want,
			  const struct ibv_srq_attr *got,
			  const struct shca_create_srq_resp *resp)
{
	bool xrc = srq->vsrq.srq_type == IBV_SRQT_XRC;
	int ret = EPROTO;

	if ((resp->comp_mask & SHCA_CREATE_SRQ_RESP_CMASK_RING) &&
	    got->max_wr >= want->max_wr && got->max_sge >= want->max_sge &&
	    (!xrc || (resp->srqn == srq->vsrq.srq_num &&
		      resp->srqn <= SHCA_XRC_SRQN_MAX)))
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

static struct shca_srq *shca_srq_alloc(void)
{
	struct shca_srq *srq = calloc(1, sizeof(*srq));

	if (srq)
		pthread_spin_init(&srq->wq.lock, PTHREAD_PROCESS_PRIVATE);
	return srq;
}

static void shca_srq_free(struct shca_srq *srq)
{
	shca_tm_destroy(srq);
	pthread_spin_destroy(&srq->wq.lock);
	free(srq);
}

struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct ushca_create_srq_resp resp = {};
	struct ushca_create_srq cmd = {};
	struct ibv_srq_attr want = attr->attr;
	struct shca_srq *srq;
	int ret = ENOMEM;

	srq = shca_srq_alloc();
	if (!srq)
		goto err;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = shca_srq_setup(srq, pd->context, &want, &attr->attr,
			     &resp.drv_payload);
	if (ret)
		goto err_destroy;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	shca_srq_free(srq);
err:
	errno = ret;
	return NULL;
}

/*
 * The TM part of a TM SRQ's response: the operation ring and the handles.
 * The caps granted go back to the caller, never less than asked for.
 */
static int shca_srq_setup_tm(struct shca_srq *srq, struct ibv_context *ctx,
			     struct ibv_srq_init_attr_ex *attr,
			     const struct ibv_tm_cap *want,
			     const struct shca_create_srq_resp *resp)
{
	int ret;

	ret = shca_tm_create(srq, to_shca_cq(attr->cq), want, resp,
			     ctx->cmd_fd);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx),
			  "TM SRQ %u: bad response from kernel\n", resp->srqn);
		return ret;
	}
	attr->tm_cap.max_num_tags = resp->tm_max_tags;
	attr->tm_cap.max_ops = resp->tm_max_ops;
	return 0;
}

/*
 * ibv_create_srq_ex(): libibverbs sends plain basic SRQs to
 * shca_create_srq(); the rest (XRC, TM, or basic with more attributes)
 * come here.  The driver data is the same for every type; a TM SRQ asks
 * for its operation ring's size (ib_core passes max_num_tags itself).
 */
struct ibv_srq *shca_create_srq_ex(struct ibv_context *ctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct ushca_create_xsrq_resp resp = {};
	struct ushca_create_xsrq cmd = {};
	struct ibv_srq_attr want = attr->attr;
	struct ibv_tm_cap want_tm = attr->tm_cap;
	struct shca_srq *srq;
	bool tm;
	int ret;

	ret = shca_srq_check_attr(attr);
	if (ret)
		goto err;
	tm = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type == IBV_SRQT_TM;
	if (tm) {
		cmd.drv_payload.comp_mask = SHCA_CREATE_SRQ_REQ_CMASK_TM;
		cmd.drv_payload.tm_max_ops = want_tm.max_ops;
	}
	ret = ENOMEM;
	srq = shca_srq_alloc();
	if (!srq)
		goto err;
	ret = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = shca_srq_setup(srq, ctx, &want, &attr->attr, &resp.drv_payload);
	if (ret)
		goto err_destroy;
	if (tm) {
		ret = shca_srq_setup_tm(srq, ctx, attr, &want_tm,
					&resp.drv_payload);
		if (ret)
			goto err_unmap;
		shca_cq_add_tm_srq(srq->tm->cq, srq);
	}
	/* ibv_create_srq() fills these in itself; this path does not */
	srq->vsrq.srq.srq_context = attr->srq_context;
	srq->vsrq.srq.pd = attr->pd;
	return &srq->vsrq.srq;

err_unmap:
	shca_ring_unmap(&srq->wq.ring);
err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	shca_srq_free(srq);
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
	if (srq->tm)
		shca_cq_del_tm_srq(srq->tm->cq, srq);
	shca_ring_unmap(&srq->wq.ring);
	shca_srq_free(srq);
	return 0;
}

/* Only XRC SRQs have a number that means anything to a peer. */
int shca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->srqn;
	return 0;
}

/*
 * Does @ring carry on where ours stops?  The kernel moved the pending
 * receives keeping their indices, so the new ring must show our producer
 * index and a consumer index at most a ring behind it.
 */
static bool shca_srq_ring_continues(const struct shca_ring *ring,
				    uint32_t prod)
{
	uint32_t cons = __atomic_load_n(&ring->ctl->cons, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&ring->ctl->prod, __ATOMIC_RELAXED) == prod &&
	       prod - cons <= ring->mask + 1;
}

/**
 * shca_srq_switch_ring - move the SRQ to the ring a resize handed out
 * @srq: the SRQ, wq.lock held
 * @info: the new ring as the kernel described it
 * @max_wr: the number of receives asked for
 * @cmd_fd: the uverbs file to map it from
 *
 * The old ring is unmapped in every case: the kernel no longer consumes
 * from it.  If the new one cannot be used the SRQ is left without a ring,
 * so every later post fails instead of writing where nobody reads.  The
 * producer index is ours and stays as it is.
 *
 * Return: 0, EPROTO for a ring that is not what the kernel promised, or
 * the mmap(2) error.
 */
int shca_srq_switch_ring(struct shca_srq *srq,
			 const struct shca_ring_info *info, uint32_t max_wr,
			 int cmd_fd)
{
	struct shca_ring ring;
	int ret;

	ret = shca_wq_map(&ring, info, cmd_fd, max_wr,
			  sizeof(struct shca_recv_wqe), srq->wq.max_sge, 0);
	if (!ret && !shca_srq_ring_continues(&ring, srq->wq.prod)) {
		shca_ring_unmap(&ring);
		ret = EPROTO;
	}
	shca_ring_unmap(&srq->wq.ring);
	if (ret) {
		memset(&srq->wq.ring, 0, sizeof(srq->wq.ring));
		return ret;
	}
	srq->wq.ring = ring;
	return 0;
}

/*
 * Resize: the kernel writes the new ring's description to @info (the
 * legacy command has no response).  Nobody may post between its move of
 * the WQEs and our switch, so wq.lock is held across the call.  An error
 * from the kernel leaves the SRQ as it was.
 */
static int shca_srq_resize(struct shca_srq *srq, struct ibv_srq_attr *attr,
			   int attr_mask)
{
	struct ibv_context *ctx = srq->vsrq.srq.context;
	struct shca_ring_info info = {};
	struct ushca_modify_srq cmd = {};
	int ret;

	cmd.drv_payload.comp_mask = SHCA_MODIFY_SRQ_REQ_CMASK_RING_INFO;
	cmd.drv_payload.ring_info_len = sizeof(info);
	cmd.drv_payload.ring_info_va = (uintptr_t)&info;
	pthread_spin_lock(&srq->wq.lock);
	ret = ibv_cmd_modify_srq(&srq->vsrq.srq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (!ret) {
		ret = shca_srq_switch_ring(srq, &info, attr->max_wr,
					   ctx->cmd_fd);
		if (ret)
			verbs_err(verbs_get_ctx(ctx),
				  "SRQ %u: bad ring after resize, SRQ unusable\n",
				  srq->srqn);
	}
	pthread_spin_unlock(&srq->wq.lock);
	return ret;
}

/* The kernel arms the limit; a resize also swaps the ring. */
int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return shca_srq_resize(to_shca_srq(ibsrq), attr, attr_mask);
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
