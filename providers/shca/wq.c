// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive work queues (ibv_create_wq, IBV_WQT_RQ), RSS indirection tables
 * and RSS QPs (ibv_create_qp_ex() with IBV_QP_INIT_ATTR_IND_TABLE and
 * IBV_QP_INIT_ATTR_RX_HASH).
 *
 * A WQ's ring is in the RQ's format (struct shca_create_wq_resp in
 * shca-abi.h); ibv_post_wq_recv() writes straight into it, with no system
 * call while the WQ is ready.  Receives posted while it is in the error
 * state are flushed by the kernel on its next look at the WQ; so that
 * they complete promptly, such a post is followed by an ERR -> ERR
 * ibv_modify_wq() command (the "doorbell", replaceable by the unit
 * tests).  The state we go by is ibv_wq.state, which libibverbs keeps from
 * every successful modify.
 *
 * An RSS QP has no queue of its own: its frames land in the WQs of its
 * table, so the kernel gives it no ring, and posting to it fails.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

DECLARE_DRV_CMD(ushca_create_wq, IB_USER_VERBS_EX_CMD_CREATE_WQ,
		shca_create_wq_req, shca_create_wq_resp);
DECLARE_DRV_CMD(ushca_create_qp_ex, IB_USER_VERBS_EX_CMD_CREATE_QP,
		shca_create_qp_req, shca_create_qp_resp);

#define SHCA_WQ_FLAGS_KNOWN                                                    \
	(IBV_WQ_FLAGS_CVLAN_STRIPPING | IBV_WQ_FLAGS_SCATTER_FCS |             \
	 IBV_WQ_FLAGS_DELAY_DROP | IBV_WQ_FLAGS_PCI_WRITE_END_PADDING)
/*
 * Stripped frames complete with ibv_wc_read_cvlan() set (cq.c); with
 * DELAY_DROP the kernel holds a frame that finds no WQE for a while.
 */
#define SHCA_WQ_FLAGS_SUPPORTED                                                \
	(IBV_WQ_FLAGS_CVLAN_STRIPPING | IBV_WQ_FLAGS_DELAY_DROP)

/**
 * shca_wq_check_attr - validate the attributes of ibv_create_wq()
 * @attr: the caller's attributes
 *
 * Return: 0; EINVAL for an unknown comp_mask or flag bit, a missing PD or
 * CQ, or no work request; EOPNOTSUPP for a type other than IBV_WQT_RQ or
 * a creation flag other than IBV_WQ_FLAGS_CVLAN_STRIPPING and
 * IBV_WQ_FLAGS_DELAY_DROP.
 */
int shca_wq_check_attr(const struct ibv_wq_init_attr *attr)
{
	if (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS)
		return EINVAL;
	if (attr->wq_type != IBV_WQT_RQ)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) {
		if (attr->create_flags & ~(uint32_t)SHCA_WQ_FLAGS_KNOWN)
			return EINVAL;
		if (attr->create_flags & ~(uint32_t)SHCA_WQ_FLAGS_SUPPORTED)
			return EOPNOTSUPP;
	}
	if (!attr->pd || !attr->cq || !attr->max_wr)
		return EINVAL;
	return 0;
}

/* ERR -> ERR: the kernel flushes what was posted in the error state. */
static int shca_rwq_doorbell(struct shca_rwq *rwq)
{
	struct ibv_wq_attr attr = {
		.attr_mask = IBV_WQ_ATTR_STATE,
		.wq_state = IBV_WQS_ERR,
	};
	struct ibv_modify_wq cmd;

	return ibv_cmd_modify_wq(&rwq->ibv_wq, &attr, &cmd, sizeof(cmd));
}

/**
 * shca_post_wq_recv - ibv_wq.post_recv
 * @ibwq: the WQ
 * @wr: the work requests
 * @bad_wr: set to the first one not posted
 *
 * Return: 0; EINVAL for too many SGEs, ENOMEM when the ring is full, EIO
 * if it is not mapped; what the doorbell returns in the error state.
 */
int shca_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct shca_rwq *rwq = to_shca_rwq(ibwq);
	int ret, db;

	ret = shca_wq_post_recv(&rwq->wq, wr, bad_wr);
	if ((ret && *bad_wr == wr) ||
	    __atomic_load_n(&ibwq->state, __ATOMIC_RELAXED) != IBV_WQS_ERR)
		return ret;
	db = rwq->doorbell(rwq);
	return ret ? ret : db;
}

/* Does the kernel's answer fit the WQ we asked for? */
static int shca_rwq_setup(struct shca_rwq *rwq, struct ibv_context *ctx,
			  const struct ibv_wq_init_attr *attr,
			  const struct shca_create_wq_resp *resp)
{
	int ret = EPROTO;

	if ((resp->comp_mask & SHCA_CREATE_WQ_RESP_CMASK_RING) &&
	    resp->wqn == rwq->ibv_wq.wq_num)
		ret = shca_wq_map(&rwq->wq.ring, &resp->ring, ctx->cmd_fd,
				  attr->max_wr, sizeof(struct shca_recv_wqe),
				  attr->max_sge, 0);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx), "WQ %u: bad response from kernel\n",
			  rwq->ibv_wq.wq_num);
		return ret;
	}
	rwq->wq.max_sge = attr->max_sge;
	return 0;
}

struct ibv_wq *shca_create_wq(struct ibv_context *ctx,
			      struct ibv_wq_init_attr *attr)
{
	struct ushca_create_wq_resp resp = {};
	struct ushca_create_wq cmd = {};
	struct shca_rwq *rwq;
	int ret;

	ret = shca_wq_check_attr(attr);
	if (ret)
		goto err;
	ret = ENOMEM;
	rwq = calloc(1, sizeof(*rwq));
	if (!rwq)
		goto err;
	pthread_spin_init(&rwq->wq.lock, PTHREAD_PROCESS_PRIVATE);
	rwq->doorbell = shca_rwq_doorbell;
	ret = ibv_cmd_create_wq(ctx, attr, &rwq->ibv_wq, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = shca_rwq_setup(rwq, ctx, attr, &resp.drv_payload);
	if (ret)
		goto err_destroy;
	rwq->ibv_wq.state = IBV_WQS_RESET;
	rwq->ibv_wq.post_recv = shca_post_wq_recv;
	return &rwq->ibv_wq;

err_destroy:
	ibv_cmd_destroy_wq(&rwq->ibv_wq);
err_free:
	pthread_spin_destroy(&rwq->wq.lock);
	free(rwq);
err:
	errno = ret;
	return NULL;
}

int shca_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct ibv_modify_wq cmd;

	return ibv_cmd_modify_wq(ibwq, attr, &cmd, sizeof(cmd));
}

/* The kernel refuses (EBUSY) while a table uses the WQ: nothing changes. */
int shca_destroy_wq(struct ibv_wq *ibwq)
{
	struct shca_rwq *rwq = to_shca_rwq(ibwq);
	int ret;

	ret = ibv_cmd_destroy_wq(ibwq);
	if (ret)
		return ret;
	shca_ring_unmap(&rwq->wq.ring);
	pthread_spin_destroy(&rwq->wq.lock);
	free(rwq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Indirection tables                                                 */
/* ------------------------------------------------------------------ */

struct ibv_rwq_ind_table *
shca_create_rwq_ind_table(struct ibv_context *ctx,
			  struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp = {};
	struct ibv_rwq_ind_table *tbl;
	int ret;

	/* the command is built on the stack: bound it before the kernel does */
	if (attr->comp_mask || !attr->ind_tbl ||
	    attr->log_ind_tbl_size > IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	tbl = calloc(1, sizeof(*tbl));
	if (!tbl) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_rwq_ind_table(ctx, attr, tbl, &resp, sizeof(resp));
	if (ret) {
		free(tbl);
		errno = ret;
		return NULL;
	}
	return tbl;
}

/* The kernel refuses (EBUSY) while an RSS QP uses the table. */
int shca_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl)
{
	int ret = ibv_cmd_destroy_rwq_ind_table(tbl);

	if (ret)
		return ret;
	free(tbl);
	return 0;
}

/* ------------------------------------------------------------------ */
/* RSS QPs                                                            */
/* ------------------------------------------------------------------ */

#define SHCA_RSS_INIT_ATTR_KNOWN                                               \
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |                 \
	 IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH)

/**
 * shca_rss_check_attr - validate ibv_create_qp_ex() for an RSS QP
 * @attr: the caller's attributes, IND_TABLE or RX_HASH in comp_mask
 *
 * The kernel checks the hash fields' combinations; we check what keeps
 * the command well formed.
 *
 * Return: 0; EOPNOTSUPP for a creation flag or the IPSEC_SPI or INNER
 * fields; EINVAL for anything else: not a RAW_PACKET QP, no PD, table or
 * hash configuration, a function other than Toeplitz, a key that is not
 * SHCA_RX_HASH_KEY_LEN bytes, unknown fields, or queues, CQs or an SRQ.
 */
int shca_rss_check_attr(const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;
	const struct ibv_qp_cap *cap = &attr->cap;
	uint32_t mask = attr->comp_mask;

	if ((mask & ~(uint32_t)SHCA_RSS_INIT_ATTR_KNOWN) ||
	    !(mask & IBV_QP_INIT_ATTR_IND_TABLE) ||
	    !(mask & IBV_QP_INIT_ATTR_RX_HASH) ||
	    !(mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    !attr->rwq_ind_tbl || attr->qp_type != IBV_QPT_RAW_PACKET)
		return EINVAL;
	if ((mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
		return EOPNOTSUPP;
	if (attr->send_cq || attr->recv_cq || attr->srq || cap->max_send_wr ||
	    cap->max_recv_wr || cap->max_send_sge || cap->max_recv_sge ||
	    cap->max_inline_data)
		return EINVAL;
	if (h->rx_hash_fields_mask &
	    (IBV_RX_HASH_IPSEC_SPI | IBV_RX_HASH_INNER))
		return EOPNOTSUPP;
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ ||
	    h->rx_hash_key_len != SHCA_RX_HASH_KEY_LEN || !h->rx_hash_key ||
	    (h->rx_hash_fields_mask & ~(uint64_t)SHCA_RX_HASH_FIELDS))
		return EINVAL;
	return 0;
}

/* The driver part of the create command: the hash configuration. */
void shca_rss_fill_req(struct shca_create_qp_req *req,
		       const struct ibv_rx_hash_conf *h)
{
	memset(req, 0, sizeof(*req));
	req->comp_mask = SHCA_CREATE_QP_REQ_CMASK_RX_HASH;
	req->rx_hash_fields_mask = h->rx_hash_fields_mask;
	req->rx_hash_function = h->rx_hash_function;
	req->rx_hash_key_len = h->rx_hash_key_len;
	memcpy(req->rx_hash_key, h->rx_hash_key, SHCA_RX_HASH_KEY_LEN);
}

struct ibv_qp *shca_rss_create_qp(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct ushca_create_qp_ex_resp resp = {};
	struct ushca_create_qp_ex cmd = {};
	struct shca_qp *qp;
	int ret;

	ret = shca_rss_check_attr(attr);
	if (ret)
		goto err;
	ret = ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		goto err;
	/* shca_destroy_qp() frees it like any QP */
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	shca_rss_fill_req(&cmd.drv_payload, &attr->rx_hash_conf);
	ret = ibv_cmd_create_qp_ex2(ctx, &qp->vqp, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	if (resp.drv_payload.comp_mask ||
	    resp.drv_payload.qpn != qp->vqp.qp.qp_num) {
		verbs_err(verbs_get_ctx(ctx), "QP %u: bad response from kernel\n",
			  qp->vqp.qp.qp_num);
		ret = EPROTO;
		goto err_destroy;
	}
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	free(qp);
err:
	errno = ret;
	return NULL;
}
