// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation maps the SQ and RQ rings the kernel describes.
 * Which rings a QP has depends on its type (see struct
 * shca_create_qp_resp): XRC initiators (XRC_SEND) have an SQ only, XRC
 * targets (XRC_RECV, created here or opened with ibv_open_qp()) none.
 *
 * Posting writes WQEs into the mapped rings; see shca_post_send().  The
 * ibv_qp_ex work request API (qp_ex.c) shares the helpers at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

/* Which queues a QP of @type has; see struct shca_create_qp_resp. */
static bool shca_qp_type_has_sq(enum ibv_qp_type type)
{
	return type != IBV_QPT_XRC_RECV;
}

static bool shca_qp_type_has_rq(enum ibv_qp_type type)
{
	return type != IBV_QPT_XRC_SEND && type != IBV_QPT_XRC_RECV;
}

/* A QP being created has an RQ of its own: no SRQ, and not XRC. */
static bool shca_qp_has_rq(const struct ibv_qp_init_attr_ex *attr)
{
	return !attr->srq && shca_qp_type_has_rq(attr->qp_type);
}

/**
 * shca_qp_check_attr - validate the attributes of ibv_create_qp_ex()
 * @attr: the caller's attributes
 *
 * XRC_RECV QPs are created in an XRC domain and send nothing; every other
 * type needs a PD and a send CQ, and all but XRC_SEND a receive CQ (even
 * with an SRQ).
 *
 * Return: 0; EOPNOTSUPP for an attribute, creation flag or QP type shca
 * does not offer; EINVAL for a missing PD, CQ or XRC domain, or for send
 * operations that the QP type cannot carry (see shca_qp_ex_check()).
 */
int shca_qp_check_attr(const struct ibv_qp_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;

	if (mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
		     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
		     IBV_QP_INIT_ATTR_CREATE_FLAGS))
		return EOPNOTSUPP;
	/* no creation flag is supported; asking for none is fine */
	if ((mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
		return EOPNOTSUPP;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_RAW_PACKET:
		if (!(mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
		    !attr->send_cq || (!attr->recv_cq &&
				       shca_qp_type_has_rq(attr->qp_type)))
			return EINVAL;
		break;
	case IBV_QPT_XRC_RECV:
		if (!(mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
		    (mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
			return EINVAL;
		return 0;
	default:
		return EOPNOTSUPP;
	}
	if (!(mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return 0;
	return shca_qp_ex_check(attr->qp_type, attr->send_ops_flags);
}

/*
 * The kernel may round capabilities up, never down.  Without an RQ of
 * its own (SRQ, XRC_SEND) the receive caps are ignored (ibv_create_qp(3))
 * and come back as 0.
 */
static int shca_qp_check_caps(const struct ibv_qp_init_attr_ex *attr,
			      const struct ibv_qp_cap *want,
			      const struct shca_create_qp_resp *resp)
{
	const struct ibv_qp_cap *got = &attr->cap;
	bool rq = shca_qp_has_rq(attr);

	if (!rq && (got->max_recv_wr || got->max_recv_sge))
		return EPROTO;
	if (got->max_send_wr < want->max_send_wr ||
	    (rq && got->max_recv_wr < want->max_recv_wr) ||
	    got->max_send_sge < want->max_send_sge ||
	    (rq && got->max_recv_sge < want->max_recv_sge) ||
	    got->max_inline_data < want->max_inline_data ||
	    resp->max_inline_data < want->max_inline_data)
		return EPROTO;
	return 0;
}

/**
 * shca_qp_check_rings - do the rings of a create response fit the QP?
 * @attr: the creation attributes, with the caps the kernel granted
 * @resp_comp_mask: the response's enum shca_create_qp_resp_cmask bits
 *
 * A queue the QP has must come with a ring if it holds any work request;
 * a queue it does not have (XRC_SEND's RQ, XRC_RECV's SQ and RQ, the RQ
 * of a QP with an SRQ) must come with none.
 *
 * Return: 0 or EPROTO.
 */
int shca_qp_check_rings(const struct ibv_qp_init_attr_ex *attr,
			uint32_t resp_comp_mask)
{
	bool sq = resp_comp_mask & SHCA_CREATE_QP_RESP_CMASK_SQ;
	bool rq = resp_comp_mask & SHCA_CREATE_QP_RESP_CMASK_RQ;

	if (shca_qp_type_has_sq(attr->qp_type)) {
		if (attr->cap.max_send_wr && !sq)
			return EPROTO;
	} else if (sq) {
		return EPROTO;
	}
	if (shca_qp_has_rq(attr)) {
		if (attr->cap.max_recv_wr && !rq)
			return EPROTO;
	} else if (rq) {
		return EPROTO;
	}
	return 0;
}

/*
 * Map one work queue ring.  It must hold @wr entries, each big enough for
 * @hdr bytes of header plus @nsge scatter/gather elements or @inl bytes of
 * inline data.
 */
int shca_wq_map(struct shca_ring *ring, const struct shca_ring_info *info,
		int cmd_fd, uint32_t wr, size_t hdr, uint32_t nsge, uint32_t inl)
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

/* Map the rings of a response that shca_qp_check_rings() accepted. */
static int shca_qp_map_rings(struct shca_qp *qp, struct ibv_qp_init_attr_ex *attr,
			     const struct shca_create_qp_resp *resp, int cmd_fd)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	int ret;

	if (resp->comp_mask & SHCA_CREATE_QP_RESP_CMASK_SQ) {
		ret = shca_wq_map(&qp->sq.ring, &resp->sq, cmd_fd, cap->max_send_wr,
				  sizeof(struct shca_send_wqe),
				  cap->max_send_sge, resp->max_inline_data);
		if (ret)
			return ret;
	}
	if (resp->comp_mask & SHCA_CREATE_QP_RESP_CMASK_RQ) {
		ret = shca_wq_map(&qp->rq.ring, &resp->rq, cmd_fd, cap->max_recv_wr,
				  sizeof(struct shca_recv_wqe),
				  cap->max_recv_sge, 0);
		if (ret) {
			shca_ring_unmap(&qp->sq.ring);
			return ret;
		}
	}
	return 0;
}

/*
 * ib_core creates an XRC target without passing our udata to the driver:
 * its response is all zero (no rings), and it has no caps worth checking.
 * Every other QP's response names it.
 */
static int shca_qp_check_resp(const struct shca_qp *qp,
			      const struct ibv_qp_init_attr_ex *attr,
			      const struct ibv_qp_cap *want,
			      const struct shca_create_qp_resp *resp)
{
	int ret;

	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		if (resp->qpn != qp->vqp.qp.qp_num)
			return EPROTO;
		ret = shca_qp_check_caps(attr, want, resp);
		if (ret)
			return ret;
	}
	return shca_qp_check_rings(attr, resp->comp_mask);
}

static int shca_qp_setup(struct shca_qp *qp, struct ibv_context *ctx,
			 struct ibv_qp_init_attr_ex *attr,
			 const struct ibv_qp_cap *want,
			 const struct shca_create_qp_resp *resp)
{
	int ret;

	ret = shca_qp_check_resp(qp, attr, want, resp);
	if (!ret)
		ret = shca_qp_map_rings(qp, attr, resp, ctx->cmd_fd);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx), "QP %u: bad response from kernel\n",
			  qp->vqp.qp.qp_num);
		return ret;
	}
	qp->max_inline_data = resp->max_inline_data;
	qp->sq.max_sge = attr->cap.max_send_sge;
	qp->rq.max_sge = attr->cap.max_recv_sge;
	if (attr->qp_type == IBV_QPT_RAW_PACKET)
		qp->raw_send_flags = shca_raw_send_flags(ctx);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		shca_qp_ex_init(qp, attr->send_ops_flags);
	return 0;
}

/*
 * ibv_cmd_create_qp_ex() takes every QP type, XRC ones included (the XRC
 * domain of an XRC_RECV QP goes where the PD would), in both rdma-core
 * releases we build for.  It refuses IBV_QP_INIT_ATTR_CREATE_FLAGS with
 * EINVAL; shca_qp_check_attr() let it through only with no flag set,
 * which asks the kernel for nothing, so the bit is dropped for the
 * command.
 */
static int shca_cmd_create_qp(struct ibv_context *ctx, struct shca_qp *qp,
			      struct ibv_qp_init_attr_ex *attr,
			      struct ushca_create_qp *cmd,
			      struct ushca_create_qp_resp *resp)
{
	uint32_t comp_mask = attr->comp_mask;
	int ret;

	attr->comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex(ctx, &qp->vqp, attr, &cmd->ibv_cmd,
				   sizeof(*cmd), &resp->ibv_resp, sizeof(*resp));
	attr->comp_mask = comp_mask;
	return ret;
}

static struct shca_qp *shca_qp_alloc(void)
{
	struct shca_qp *qp = calloc(1, sizeof(*qp));

	if (!qp)
		return NULL;
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	return qp;
}

static void shca_qp_free(struct shca_qp *qp)
{
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	free(qp);
}

static struct shca_qp *shca_qp_create(struct ibv_context *ctx,
				      struct ibv_qp_init_attr_ex *attr)
{
	struct ushca_create_qp_resp resp = {};
	struct ushca_create_qp cmd = {};
	struct ibv_qp_cap want = attr->cap;
	struct shca_qp *qp;
	int ret;

	ret = shca_qp_check_attr(attr);
	if (ret)
		goto err;
	/* a kernel without FLUSH (6.1) says so in the ucontext response */
	ret = EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & SHCA_OPS_FLUSH) &&
	    !(to_shca_ctx(ctx)->limits.comp_mask &
	      SHCA_UCONTEXT_RESP_CMASK_FLUSH))
		goto err;
	ret = ENOMEM;
	qp = shca_qp_alloc();
	if (!qp)
		goto err;
	ret = shca_cmd_create_qp(ctx, qp, attr, &cmd, &resp);
	if (ret)
		goto err_free;
	ret = shca_qp_setup(qp, ctx, attr, &want, &resp.drv_payload);
	if (ret)
		goto err_destroy;
	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	shca_qp_free(qp);
err:
	errno = ret;
	return NULL;
}

struct ibv_qp *shca_create_qp_ex(struct ibv_context *ctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct shca_qp *qp;

	/* an RSS QP (wq.c) */
	if (attr->comp_mask &
	    (IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH))
		return shca_rss_create_qp(ctx, attr);
	qp = shca_qp_create(ctx, attr);

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

/*
 * ibv_open_qp(): another handle on an XRC target QP, perhaps created by
 * another process.  ib_core does it all, the driver is not involved; like
 * a target created here the QP has no rings.
 */
struct ibv_qp *shca_open_qp(struct ibv_context *ctx,
			    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct shca_qp *qp;
	int ret = EINVAL;

	if ((attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE) &&
	    attr->qp_type != IBV_QPT_XRC_RECV)
		goto err;
	ret = ENOMEM;
	qp = shca_qp_alloc();
	if (!qp)
		goto err;
	ret = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		shca_qp_free(qp);
		goto err;
	}
	return &qp->vqp.qp;

err:
	errno = ret;
	return NULL;
}

/*
 * Drop the unpolled completions of a QP from its CQs.  An XRC initiator
 * has no receive CQ (ib_core ignored any given), and an XRC target's
 * receives complete on the CQs of the XRC SRQs, which may belong to
 * another process: those are left alone.
 */
static void shca_qp_clean_cqs(struct ibv_qp *ibqp)
{
	struct ibv_cq *rcq = ibqp->recv_cq;
	struct ibv_cq *scq = ibqp->send_cq;

	if (ibqp->qp_type == IBV_QPT_XRC_RECV)
		return;
	if (ibqp->qp_type == IBV_QPT_XRC_SEND)
		rcq = NULL;
	if (rcq)
		shca_cq_clean(to_shca_cq(rcq), ibqp->qp_num);
	if (scq && scq != rcq)
		shca_cq_clean(to_shca_cq(scq), ibqp->qp_num);
}

/*
 * A QP moved to RESET leaves nothing behind: the kernel has stopped
 * producing its completions when the command returns, and the ones not
 * polled yet are removed from its CQs (as hardware providers do), so a
 * QP brought back up does not report the flush errors of its past.
 */
int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE) ||
	    attr->qp_state != IBV_QPS_RESET)
		return ret;
	shca_qp_clean_cqs(ibqp);
	return 0;
}

int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

/* UD multicast membership is kept by the kernel (mcast.c). */
int shca_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid)
{
	return ibv_cmd_attach_mcast(ibqp, gid, lid);
}

int shca_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid)
{
	return ibv_cmd_detach_mcast(ibqp, gid, lid);
}

/*
 * Fails (EBUSY, from the kernel) while the QP is attached to a group.  An
 * XRC target, created or opened, has no ring to unmap.
 */
int shca_destroy_qp(struct ibv_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	shca_ring_unmap(&qp->rq.ring);
	shca_ring_unmap(&qp->sq.ring);
	shca_qp_free(qp);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Posting                                                            */
/* ------------------------------------------------------------------ */

void *shca_wq_slot(struct shca_wq *wq, uint32_t idx)
{
	return wq->ring.entries + ((size_t)(idx & wq->ring.mask) <<
				   wq->ring.entry_shift);
}

/*
 * The verbs take receives from INIT on and sends from RTS on; in SQD, SQE
 * and ERR posting is still allowed (the kernel holds or flushes the work).
 * ibv_modify_qp() keeps ibqp->state current, and a new QP is in RESET.
 * Posting earlier is the caller's error: EINVAL, nothing is written.
 */
int shca_qp_send_state(const struct ibv_qp *ibqp)
{
	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return EINVAL;
	default:
		return 0;
	}
}

int shca_qp_recv_state(const struct ibv_qp *ibqp)
{
	return ibqp->state == IBV_QPS_RESET ? EINVAL : 0;
}

/*
 * Posting sends to a QP without an SQ: an XRC target never has one, which
 * is the caller's error; any other QP was created without one.
 */
int shca_qp_no_sq_err(const struct ibv_qp *ibqp)
{
	return ibqp->qp_type == IBV_QPT_XRC_RECV ? EINVAL : EOPNOTSUPP;
}

/* Room for one more WQE?  The kernel publishes cons with release. */
bool shca_wq_has_room(struct shca_wq *wq)
{
	uint32_t cons = __atomic_load_n(&wq->ring.ctl->cons, __ATOMIC_ACQUIRE);

	return wq->prod - cons < wq->ring.mask + 1;
}

/* Publish our producer index: WQEs are written before prod. */
void shca_wq_publish(struct shca_wq *wq)
{
	__atomic_store_n(&wq->ring.ctl->prod, wq->prod, __ATOMIC_RELEASE);
}

static int shca_send_inline(struct shca_qp *qp, const struct ibv_send_wr *wr,
			    struct shca_send_wqe *wqe)
{
	uint8_t *p = (uint8_t *)(wqe + 1);
	uint32_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		uint32_t n = wr->sg_list[i].length;

		if (n > qp->max_inline_data - len)
			return EINVAL;
		memcpy(p + len, (void *)(uintptr_t)wr->sg_list[i].addr, n);
		len += n;
	}
	wqe->inline_len = len;
	wqe->flags |= SHCA_WQE_F_INLINE;
	return 0;
}

uint8_t shca_send_flags(unsigned int flags)
{
	return (flags & IBV_SEND_SIGNALED ? SHCA_WQE_F_SIGNALED : 0) |
	       (flags & IBV_SEND_SOLICITED ? SHCA_WQE_F_SOLICITED : 0) |
	       (flags & IBV_SEND_FENCE ? SHCA_WQE_F_FENCE : 0);
}

/* Copy a work request's scatter list into a WQE's SGE array. */
void shca_wqe_put_sges(struct shca_sge *dst, const struct ibv_sge *src,
		       int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
}

/*
 * An XRC initiator takes what an RC QP takes; a RAW_PACKET QP only SEND,
 * whose data is the whole Ethernet frame.
 */
static int shca_wqe_opcode(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	bool rc = type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;

	if (type == IBV_QPT_RAW_PACKET)
		return op == IBV_WR_SEND ? (int)op : -1;

	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return op;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_UD ? -1 : (int)op;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return rc ? (int)op : -1;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		return type == IBV_QPT_UD ? -1 : (int)op;
	default:
		return -1;
	}
}

/*
 * A BIND_MW WQE: bind @mw with the new R_Key @rkey.  The kernel names the
 * window by the index in @rkey and checks the rest when it executes.
 */
void shca_wqe_set_bind(struct shca_send_wqe *wqe, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	wqe->bind.addr = info->addr;
	wqe->bind.length = info->length;
	wqe->bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->bind.mw_rkey = mw->rkey;
	wqe->bind.rkey = rkey;
	wqe->bind.access = info->mw_access_flags;
}

/* The transport part of a send WQE: AH for UD, remote memory for RC/UC. */
static int shca_wqe_remote(struct shca_qp *qp, const struct ibv_send_wr *wr,
			   struct shca_send_wqe *wqe)
{
	switch (wqe->opcode) {
	case SHCA_OP_RDMA_WRITE:
	case SHCA_OP_RDMA_WRITE_WITH_IMM:
	case SHCA_OP_RDMA_READ:
		wqe->rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->rdma.rkey = wr->wr.rdma.rkey;
		return 0;
	case SHCA_OP_ATOMIC_CMP_AND_SWP:
	case SHCA_OP_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->atomic.swap = wr->wr.atomic.swap;
		wqe->atomic.rkey = wr->wr.atomic.rkey;
		return 0;
	case SHCA_OP_BIND_MW:
		/* post_send binds type 2 windows; type 1 use ibv_bind_mw */
		if (!wr->bind_mw.mw || wr->bind_mw.mw->type != IBV_MW_TYPE_2)
			return EINVAL;
		shca_wqe_set_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
		return 0;
	case SHCA_OP_LOCAL_INV:
		return 0;
	default:
		break;
	}
	if (qp->vqp.qp.qp_type != IBV_QPT_UD)
		return 0;
	if (!wr->wr.ud.ah)
		return EINVAL;
	wqe->ud.ah_handle = to_shca_ah(wr->wr.ud.ah)->ah_handle;
	wqe->ud.remote_qpn = wr->wr.ud.remote_qpn;
	wqe->ud.remote_qkey = wr->wr.ud.remote_qkey;
	return 0;
}

/*
 * The target XRC SRQ of an XRC initiator's request; 0 (what the memset
 * left) on any other QP, whatever the caller put in wr->qp_type.
 */
static uint32_t shca_wqe_xrc_srqn(const struct shca_qp *qp,
				  const struct ibv_send_wr *wr)
{
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND)
		return 0;
	return wr->qp_type.xrc.remote_srqn;
}

/*
 * The WQE flags of @send_flags.  A RAW_PACKET QP takes only the flags
 * shca_raw_send_flags() granted it (IP_CSUM where the kernel offers it);
 * the others ignore IBV_SEND_IP_CSUM, as before.
 */
static int shca_wqe_set_flags(const struct shca_qp *qp,
			      unsigned int send_flags,
			      struct shca_send_wqe *wqe)
{
	wqe->flags = shca_send_flags(send_flags);
	if (qp->vqp.qp.qp_type != IBV_QPT_RAW_PACKET)
		return 0;
	if (send_flags & ~qp->raw_send_flags)
		return EINVAL;
	if (send_flags & IBV_SEND_IP_CSUM)
		wqe->flags |= SHCA_WQE_F_IP_CSUM;
	return 0;
}

/* Write one send WQE at our producer index; sq.lock held. */
static int shca_post_one_send(struct shca_qp *qp, const struct ibv_send_wr *wr)
{
	int opcode = shca_wqe_opcode(qp->vqp.qp.qp_type, wr->opcode);
	uint32_t srqn = shca_wqe_xrc_srqn(qp, wr);
	struct shca_send_wqe *wqe;
	int ret;

	if (opcode < 0 || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->sq.max_sge || srqn > SHCA_XRC_SRQN_MAX)
		return EINVAL;
	if (!shca_wq_has_room(&qp->sq))
		return ENOMEM;
	wqe = shca_wq_slot(&qp->sq, qp->sq.prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = opcode;
	ret = shca_wqe_set_flags(qp, wr->send_flags, wqe);
	if (ret)
		return ret;
	wqe->xrc_remote_srqn = srqn;
	/* ex only carries something for these; never stale user bytes */
	if (opcode == SHCA_OP_SEND_WITH_INV || opcode == SHCA_OP_LOCAL_INV)
		wqe->ex = wr->invalidate_rkey;
	else if (opcode == SHCA_OP_SEND_WITH_IMM ||
		 opcode == SHCA_OP_RDMA_WRITE_WITH_IMM)
		wqe->ex = (uint32_t)wr->imm_data;
	ret = shca_wqe_remote(qp, wr, wqe);
	if (ret || opcode == SHCA_OP_BIND_MW || opcode == SHCA_OP_LOCAL_INV)
		return ret;	/* no data */
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    opcode != SHCA_OP_RDMA_READ &&
	    opcode != SHCA_OP_ATOMIC_CMP_AND_SWP &&
	    opcode != SHCA_OP_ATOMIC_FETCH_AND_ADD)
		return shca_send_inline(qp, wr, wqe);
	wqe->num_sge = wr->num_sge;
	shca_wqe_put_sges((struct shca_sge *)(wqe + 1), wr->sg_list,
			  wr->num_sge);
	return 0;
}

/*
 * Ring the doorbell unless the kernel's SQ engine is already running.
 * Called after sq.lock is dropped, so that other threads posting to the
 * QP do not spin through our system call: each poster publishes its own
 * prod, then the full barrier here orders that store before its read of
 * the flag, against the engine's clear-barrier-reread of prod.  Whoever
 * reads the flag clear rings; nobody's WQEs are left unseen.
 */
void shca_sq_doorbell(struct shca_qp *qp)
{
	struct ibv_send_wr *bad;

	/* prod is visible before we look at the engine's flag */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&qp->sq.ring.ctl->flags, __ATOMIC_RELAXED) &
	    SHCA_RING_F_ENGINE_ACTIVE)
		return;
	ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	uint32_t start;
	bool posted;
	int ret = 0;

	if (!qp->sq.ring.map) {
		*bad_wr = wr;
		return shca_qp_no_sq_err(ibqp);
	}
	ret = shca_qp_send_state(ibqp);
	if (ret) {
		*bad_wr = wr;
		return ret;
	}
	pthread_spin_lock(&qp->sq.lock);
	start = qp->sq.prod;
	for (; wr; wr = wr->next) {
		ret = shca_post_one_send(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		qp->sq.prod++;
	}
	posted = qp->sq.prod != start;
	if (posted)
		shca_wq_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);
	if (posted)
		shca_sq_doorbell(qp);
	return ret;
}

/**
 * shca_bind_mw - ibv_bind_mw() of a type 1 window
 * @ibqp: the QP whose SQ carries the bind
 * @mw: a type 1 window (libibverbs checked type and PD)
 * @mw_bind: the range, access and send flags
 *
 * Posts a BIND_MW work request with the next R_Key (ibv_inc_rkey) and,
 * once posted, hands that key to the application in mw->rkey, as the
 * verbs API wants.  Errors of the bind itself come as a completion.
 *
 * Return: 0 or an errno value.
 */
int shca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct shca_send_wqe *wqe;
	int ret = 0;

	if (!qp->sq.ring.map)
		return shca_qp_no_sq_err(ibqp);
	if (ibqp->qp_type == IBV_QPT_UD)
		return EINVAL;
	pthread_spin_lock(&qp->sq.lock);
	if (!shca_wq_has_room(&qp->sq)) {
		ret = ENOMEM;
		goto out;
	}
	wqe = shca_wq_slot(&qp->sq, qp->sq.prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = mw_bind->wr_id;
	wqe->opcode = SHCA_OP_BIND_MW;
	wqe->flags = shca_send_flags(mw_bind->send_flags);
	shca_wqe_set_bind(wqe, mw, rkey, &mw_bind->bind_info);
	qp->sq.prod++;
	shca_wq_publish(&qp->sq);
	mw->rkey = rkey;
out:
	pthread_spin_unlock(&qp->sq.lock);
	if (!ret)
		shca_sq_doorbell(qp);
	return ret;
}

/* Write one receive WQE at our producer index; wq->lock held. */
static int shca_post_one_recv(struct shca_wq *wq, const struct ibv_recv_wr *wr)
{
	struct shca_recv_wqe *wqe;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge)
		return EINVAL;
	if (!shca_wq_has_room(wq))
		return ENOMEM;
	wqe = shca_wq_slot(wq, wq->prod);
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved_96 = 0;
	shca_wqe_put_sges((struct shca_sge *)(wqe + 1), wr->sg_list,
			  wr->num_sge);
	return 0;
}

/*
 * Post a list of receives into an RQ or an SRQ ring.  The ones before a
 * failing WR are published; *bad_wr names the failing one.  A ring that
 * is not mapped (an SRQ whose resize failed) takes nothing: EIO.
 */
int shca_wq_post_recv(struct shca_wq *wq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	uint32_t start;
	int ret = 0;

	pthread_spin_lock(&wq->lock);
	if (!wq->ring.map) {
		pthread_spin_unlock(&wq->lock);
		*bad_wr = wr;
		return EIO;
	}
	start = wq->prod;
	for (; wr; wr = wr->next) {
		ret = shca_post_one_recv(wq, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		wq->prod++;
	}
	if (wq->prod != start)
		shca_wq_publish(wq);
	pthread_spin_unlock(&wq->lock);
	return ret;
}

/* Receives need no doorbell: the kernel takes them as packets arrive. */
int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	int ret;

	/*
	 * a QP with an SRQ takes its receives from the SRQ, an XRC target
	 * from the XRC SRQ each request names; an XRC initiator takes none
	 */
	if (ibqp->srq || !shca_qp_type_has_rq(ibqp->qp_type)) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (!qp->rq.ring.map) {
		*bad_wr = wr;
		return EOPNOTSUPP;
	}
	ret = shca_qp_recv_state(ibqp);
	if (ret) {
		*bad_wr = wr;
		return ret;
	}
	return shca_wq_post_recv(&qp->rq, wr, bad_wr);
}
