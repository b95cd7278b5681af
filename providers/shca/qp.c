// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation maps the SQ and RQ rings the kernel describes.
 *
 * Posting is not implemented yet (datapath: issue #3).  post_send and
 * post_recv are left NULL in the ops table, where libibverbs' defaults
 * answer EOPNOTSUPP, and the ibv_qp_ex work request API is refused at
 * creation time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

struct shca_create_qp_cmd {
	struct ibv_create_qp ibv_cmd;
	struct shca_create_qp_req drv;
};

struct shca_create_qp_cmd_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct shca_create_qp_resp drv;
};

static_assert(sizeof(struct shca_create_qp_cmd_resp) ==
	      sizeof(struct ib_uverbs_create_qp_resp) +
	      sizeof(struct shca_create_qp_resp), "implicit padding");

static int shca_qp_check_attr(const struct ibv_qp_init_attr_ex *attr)
{
	/* IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (ibv_wr_*) is datapath: issue #3 */
	if (attr->comp_mask & ~IBV_QP_INIT_ATTR_PD)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		return 0;
	default:
		return EOPNOTSUPP;
	}
}

/* The kernel may round capabilities up, never down. */
static int shca_qp_check_caps(const struct ibv_qp_cap *want,
			      const struct ibv_qp_cap *got,
			      const struct shca_create_qp_resp *resp)
{
	if (got->max_send_wr < want->max_send_wr ||
	    got->max_recv_wr < want->max_recv_wr ||
	    got->max_send_sge < want->max_send_sge ||
	    got->max_recv_sge < want->max_recv_sge ||
	    got->max_inline_data < want->max_inline_data ||
	    resp->max_inline_data < want->max_inline_data)
		return EPROTO;
	return 0;
}

/*
 * Map one work queue ring.  It must hold @wr entries, each big enough for
 * @hdr bytes of header plus @nsge scatter/gather elements or @inl bytes of
 * inline data.
 */
static int shca_wq_map(struct shca_ring *ring, const struct shca_ring_info *info,
		       int cmd_fd, uint32_t wr, size_t hdr, uint32_t nsge,
		       uint32_t inl)
{
	size_t body = (size_t)nsge * sizeof(struct shca_sge);
	int ret;

	if (inl > body)
		body = inl;
	ret = shca_ring_map(ring, info, hdr + body, cmd_fd);
	if (ret)
		return ret;
	if ((uint64_t)ring->mask + 1 < wr) {
		shca_ring_unmap(ring);
		return EPROTO;
	}
	return 0;
}

static int shca_qp_map_rings(struct shca_qp *qp, struct ibv_qp_init_attr_ex *attr,
			     const struct shca_create_qp_resp *resp, int cmd_fd)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	bool need_rq = !attr->srq && cap->max_recv_wr;
	int ret;

	if ((cap->max_send_wr && !(resp->comp_mask & SHCA_CREATE_QP_RESP_CMASK_SQ)) ||
	    (need_rq && !(resp->comp_mask & SHCA_CREATE_QP_RESP_CMASK_RQ)))
		return EPROTO;

	if (resp->comp_mask & SHCA_CREATE_QP_RESP_CMASK_SQ) {
		ret = shca_wq_map(&qp->sq, &resp->sq, cmd_fd, cap->max_send_wr,
				  sizeof(struct shca_send_wqe),
				  cap->max_send_sge, resp->max_inline_data);
		if (ret)
			return ret;
	}
	if (resp->comp_mask & SHCA_CREATE_QP_RESP_CMASK_RQ) {
		ret = shca_wq_map(&qp->rq, &resp->rq, cmd_fd, cap->max_recv_wr,
				  sizeof(struct shca_recv_wqe),
				  cap->max_recv_sge, 0);
		if (ret) {
			shca_ring_unmap(&qp->sq);
			return ret;
		}
	}
	return 0;
}

static int shca_qp_setup(struct shca_qp *qp, struct ibv_context *ctx,
			 struct ibv_qp_init_attr_ex *attr,
			 const struct ibv_qp_cap *want,
			 const struct shca_create_qp_resp *resp)
{
	int ret;

	ret = shca_qp_check_caps(want, &attr->cap, resp);
	if (!ret)
		ret = shca_qp_map_rings(qp, attr, resp, ctx->cmd_fd);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx), "QP %u: bad response from kernel\n",
			  resp->qpn);
		return ret;
	}
	qp->max_inline_data = resp->max_inline_data;
	return 0;
}

static struct shca_qp *shca_qp_create(struct ibv_context *ctx,
				      struct ibv_qp_init_attr_ex *attr)
{
	struct shca_create_qp_cmd_resp resp = {};
	struct shca_create_qp_cmd cmd = {};
	struct ibv_qp_cap want = attr->cap;
	struct shca_qp *qp;
	int ret;

	ret = shca_qp_check_attr(attr);
	if (ret)
		goto err;
	ret = ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		goto err;
	ret = ibv_cmd_create_qp_ex(ctx, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = shca_qp_setup(qp, ctx, attr, &want, &resp.drv);
	if (ret)
		goto err_destroy;
	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
err:
	errno = ret;
	return NULL;
}

struct ibv_qp *shca_create_qp_ex(struct ibv_context *ctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct shca_qp *qp = shca_qp_create(ctx, attr);

	return qp ? &qp->vqp.qp : NULL;
}

struct ibv_qp *shca_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct shca_qp *qp;

	qp = shca_qp_create(pd->context, &attr_ex);
	if (!qp)
		return NULL;
	attr->cap = attr_ex.cap;
	return &qp->vqp.qp;
}

int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int shca_destroy_qp(struct ibv_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	shca_ring_unmap(&qp->rq);
	shca_ring_unmap(&qp->sq);
	free(qp);
	return 0;
}
