// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ibv_qp_ex work request API (ibv_wr_start ... ibv_wr_complete).
 *
 * wr_start takes sq.lock and remembers the producer index.  Each
 * ibv_wr_<opcode>() call claims the next SQ slot and writes a WQE header
 * in exactly the format shca_post_send() writes; the wr_set_*() calls
 * that follow fill in its data and address (UD: the AH; XRC_SEND: the
 * target SRQ, which stays 0 if never set).  Nothing is visible to the
 * kernel until wr_complete publishes prod and rings the doorbell the way
 * post_send does; wr_abort (or an error anywhere in the batch) rewinds
 * prod so the written slots are simply reused.
 *
 * The calls return nothing, so the first error is latched in qp->wr_err,
 * every later call of the batch is ignored, and wr_complete returns it.
 */
#include <errno.h>
#include <string.h>

#include "shca.h"

/* What this provider implements, per transport. */
#define SHCA_OPS_UD	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define SHCA_OPS_UC	(SHCA_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE |            \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
#define SHCA_OPS_RC	(SHCA_OPS_UC | IBV_QP_EX_WITH_RDMA_READ |             \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                  \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |                \
			 IBV_QP_EX_WITH_SEND_WITH_INV |                       \
			 IBV_QP_EX_WITH_ATOMIC_WRITE | SHCA_OPS_FLUSH)
#define SHCA_OPS_MEM	(IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)
/* XRC initiators: the RC operations, but no ATOMIC WRITE or FLUSH. */
#define SHCA_OPS_XRC	(SHCA_OPS_RC &                                        \
			 ~((uint64_t)IBV_QP_EX_WITH_ATOMIC_WRITE |            \
			   SHCA_OPS_FLUSH))

static uint64_t shca_ops_of(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return SHCA_OPS_RC | SHCA_OPS_MEM;
	case IBV_QPT_UC:
		return SHCA_OPS_UC | SHCA_OPS_MEM;
	case IBV_QPT_UD:
		return SHCA_OPS_UD;
	case IBV_QPT_XRC_SEND:
		return SHCA_OPS_XRC | SHCA_OPS_MEM;
	default:
		return 0;
	}
}

/**
 * shca_qp_ex_check - validate IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
 * @type: the QP type
 * @send_ops: enum ibv_qp_create_send_ops_flags bits requested
 *
 * Return: 0; EOPNOTSUPP for an operation shca never implements (TSO,
 * unknown bits); EINVAL for one that exists but not on this transport
 * (e.g. RDMA READ on UD).
 */
int shca_qp_ex_check(enum ibv_qp_type type, uint64_t send_ops)
{
	if (send_ops & ~(uint64_t)(SHCA_OPS_RC | SHCA_OPS_MEM))
		return EOPNOTSUPP;
	if (send_ops & ~shca_ops_of(type))
		return EINVAL;
	return 0;
}

static struct shca_qp *qpx_to_shca(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct shca_qp, vqp.qp_ex);
}

static void shca_wr_fail(struct shca_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/*
 * Claim the next slot for a WQE of @op (an IBV_QP_EX_WITH_* bit and the
 * matching SHCA_OP_*); NULL after an error.  sq.lock held (wr_start).
 */
static struct shca_send_wqe *shca_wr_begin(struct ibv_qp_ex *qpx,
					   uint64_t op_bit, uint8_t opcode)
{
	struct shca_qp *qp = qpx_to_shca(qpx);
	struct shca_send_wqe *wqe;

	if (qp->wr_err)
		return NULL;
	if (!(qp->send_ops & op_bit)) {
		shca_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (!shca_wq_has_room(&qp->sq)) {
		shca_wr_fail(qp, ENOMEM);
		return NULL;
	}
	wqe = shca_wq_slot(&qp->sq, qp->sq.prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = qpx->wr_id;
	wqe->opcode = opcode;
	wqe->flags = shca_send_flags(qpx->wr_flags);
	qp->sq.prod++;
	qp->wr_cur = wqe;
	return wqe;
}

/* The WQE the wr_set_*() calls apply to; NULL (and an error) if none. */
static struct shca_send_wqe *shca_wr_cur(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_shca(qpx);

	if (qp->wr_err)
		return NULL;
	if (!qp->wr_cur)
		shca_wr_fail(qp, EINVAL);
	return qp->wr_cur;
}

/* ------------------------------------------------------------------ */
/* Opcodes                                                            */
/* ------------------------------------------------------------------ */

static void shca_wr_send(struct ibv_qp_ex *qpx)
{
	shca_wr_begin(qpx, IBV_QP_EX_WITH_SEND, SHCA_OP_SEND);
}

static void shca_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct shca_send_wqe *wqe;

	wqe = shca_wr_begin(qpx, IBV_QP_EX_WITH_SEND_WITH_IMM,
			    SHCA_OP_SEND_WITH_IMM);
	if (wqe)
		wqe->ex = (uint32_t)imm_data;
}

static void shca_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct shca_send_wqe *wqe;

	wqe = shca_wr_begin(qpx, IBV_QP_EX_WITH_SEND_WITH_INV,
			    SHCA_OP_SEND_WITH_INV);
	if (wqe)
		wqe->ex = invalidate_rkey;
}

static void shca_wr_rdma(struct ibv_qp_ex *qpx, uint64_t op_bit,
			 uint8_t opcode, uint32_t rkey, uint64_t remote_addr,
			 uint32_t ex)
{
	struct shca_send_wqe *wqe = shca_wr_begin(qpx, op_bit, opcode);

	if (!wqe)
		return;
	wqe->ex = ex;
	wqe->rdma.remote_addr = remote_addr;
	wqe->rdma.rkey = rkey;
}

static void shca_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	shca_wr_rdma(qpx, IBV_QP_EX_WITH_RDMA_WRITE, SHCA_OP_RDMA_WRITE,
		     rkey, remote_addr, 0);
}

static void shca_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	shca_wr_rdma(qpx, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		     SHCA_OP_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		     (uint32_t)imm_data);
}

static void shca_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	shca_wr_rdma(qpx, IBV_QP_EX_WITH_RDMA_READ, SHCA_OP_RDMA_READ,
		     rkey, remote_addr, 0);
}

static void shca_wr_atomic(struct ibv_qp_ex *qpx, uint64_t op_bit,
			   uint8_t opcode, uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct shca_send_wqe *wqe = shca_wr_begin(qpx, op_bit, opcode);

	if (!wqe)
		return;
	wqe->atomic.remote_addr = remote_addr;
	wqe->atomic.compare_add = compare_add;
	wqe->atomic.swap = swap;
	wqe->atomic.rkey = rkey;
}

static void shca_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	shca_wr_atomic(qpx, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
		       SHCA_OP_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		       swap);
}

static void shca_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	shca_wr_atomic(qpx, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		       SHCA_OP_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

static void shca_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct shca_send_wqe *wqe;

	/* type 1 windows are bound with ibv_bind_mw() only */
	if (!mw || mw->type != IBV_MW_TYPE_2) {
		if (!qpx_to_shca(qpx)->wr_err)
			shca_wr_fail(qpx_to_shca(qpx), EINVAL);
		return;
	}
	wqe = shca_wr_begin(qpx, IBV_QP_EX_WITH_BIND_MW, SHCA_OP_BIND_MW);
	if (wqe)
		shca_wqe_set_bind(wqe, mw, rkey, bind_info);
	qpx_to_shca(qpx)->wr_cur = NULL;	/* takes no data */
}

static void shca_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct shca_send_wqe *wqe;

	wqe = shca_wr_begin(qpx, IBV_QP_EX_WITH_LOCAL_INV, SHCA_OP_LOCAL_INV);
	if (wqe)
		wqe->ex = invalidate_rkey;
	qpx_to_shca(qpx)->wr_cur = NULL;	/* takes no data */
}

/*
 * ATOMIC WRITE: the 8 bytes at @atomic_wr travel inline in the WQE; the
 * kernel checks the length and the alignment of @remote_addr.
 */
static void shca_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct shca_send_wqe *wqe;

	wqe = shca_wr_begin(qpx, IBV_QP_EX_WITH_ATOMIC_WRITE,
			    SHCA_OP_ATOMIC_WRITE);
	if (!wqe)
		return;
	wqe->rdma.remote_addr = remote_addr;
	wqe->rdma.rkey = rkey;
	memcpy(wqe + 1, atomic_wr, SHCA_ATOMIC_WRITE_LEN);
	wqe->inline_len = SHCA_ATOMIC_WRITE_LEN;
	wqe->flags |= SHCA_WQE_F_INLINE;
}

#if SHCA_RDMA_CORE_VERSION_CODE >= 4500
/*
 * FLUSH (rdma-core 45.0 on, and only where the kernel executes it:
 * shca_qp_create() grants IBV_QP_EX_WITH_FLUSH then only): no data
 * follows; the kernel checks @type, @level and the range's length and
 * completes a bad one with an error.
 */
static void shca_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct shca_send_wqe *wqe;

	wqe = shca_wr_begin(qpx, IBV_QP_EX_WITH_FLUSH, SHCA_OP_FLUSH);
	if (wqe) {
		wqe->flush.remote_addr = remote_addr;
		wqe->flush.rkey = rkey;
		wqe->flush.type = type;
		wqe->flush.level = level;
		wqe->flush.length = len;
	}
	qpx_to_shca(qpx)->wr_cur = NULL;	/* takes no data */
}
#endif

/* ------------------------------------------------------------------ */
/* Data and address setters                                           */
/* ------------------------------------------------------------------ */

static void shca_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct shca_send_wqe *wqe = shca_wr_cur(qpx);
	struct shca_qp *qp = qpx_to_shca(qpx);
	struct shca_sge *dst;
	size_t i;

	if (!wqe)
		return;
	/* an ATOMIC WRITE carries its 8 bytes already */
	if (num_sge > qp->sq.max_sge || wqe->opcode == SHCA_OP_ATOMIC_WRITE) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	dst = (struct shca_sge *)(wqe + 1);
	for (i = 0; i < num_sge; i++) {
		dst[i].addr = sg_list[i].addr;
		dst[i].length = sg_list[i].length;
		dst[i].lkey = sg_list[i].lkey;
	}
	wqe->num_sge = (uint8_t)num_sge;
	wqe->flags &= ~SHCA_WQE_F_INLINE;
	wqe->inline_len = 0;
}

static void shca_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	shca_wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data only makes sense where the payload goes out with the WQE. */
static bool shca_opcode_takes_inline(uint8_t opcode)
{
	return opcode != SHCA_OP_RDMA_READ &&
	       opcode != SHCA_OP_ATOMIC_CMP_AND_SWP &&
	       opcode != SHCA_OP_ATOMIC_FETCH_AND_ADD &&
	       opcode != SHCA_OP_ATOMIC_WRITE;
}

static void shca_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct shca_send_wqe *wqe = shca_wr_cur(qpx);
	struct shca_qp *qp = qpx_to_shca(qpx);
	uint8_t *p;
	size_t i, len = 0;

	if (!wqe)
		return;
	if (!shca_opcode_takes_inline(wqe->opcode)) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	p = (uint8_t *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->max_inline_data - len) {
			shca_wr_fail(qp, EINVAL);
			return;
		}
		memcpy(p + len, buf_list[i].addr, buf_list[i].length);
		len += buf_list[i].length;
	}
	wqe->inline_len = (uint32_t)len;
	wqe->flags |= SHCA_WQE_F_INLINE;
	wqe->num_sge = 0;
}

static void shca_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	shca_wr_set_inline_data_list(qpx, 1, &buf);
}

static void shca_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct shca_send_wqe *wqe = shca_wr_cur(qpx);
	struct shca_qp *qp = qpx_to_shca(qpx);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	wqe->ud.ah_handle = to_shca_ah(ah)->ah_handle;
	wqe->ud.remote_qpn = remote_qpn;
	wqe->ud.remote_qkey = remote_qkey;
}

/*
 * The target XRC SRQ of the current request; only XRC initiators have
 * one, so on any other QP the call fails the batch, as wr_set_ud_addr
 * does off UD.
 */
static void shca_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct shca_send_wqe *wqe = shca_wr_cur(qpx);
	struct shca_qp *qp = qpx_to_shca(qpx);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND ||
	    remote_srqn > SHCA_XRC_SRQN_MAX) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	wqe->xrc_remote_srqn = remote_srqn;
}

/* ------------------------------------------------------------------ */
/* Batch control                                                      */
/* ------------------------------------------------------------------ */

static void shca_wr_start(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_shca(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_start_prod = qp->sq.prod;
	qp->wr_err = qp->sq.ring.map ? shca_qp_send_state(&qp->vqp.qp) :
		     shca_qp_no_sq_err(&qp->vqp.qp);
	qp->wr_cur = NULL;
}

/* Forget the unpublished WQEs and end the batch; sq.lock held. */
static void shca_wr_end(struct shca_qp *qp)
{
	qp->sq.prod = qp->wr_start_prod;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static int shca_wr_complete(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = qpx_to_shca(qpx);
	int err = qp->wr_err;
	bool posted;

	if (err) {
		shca_wr_end(qp);
		return err;
	}
	posted = qp->sq.prod != qp->wr_start_prod;
	if (posted)
		shca_wq_publish(&qp->sq);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	/* outside the lock: other posters do not wait for our system call */
	if (posted)
		shca_sq_doorbell(qp);
	return 0;
}

static void shca_wr_abort(struct ibv_qp_ex *qpx)
{
	shca_wr_end(qpx_to_shca(qpx));
}

/**
 * shca_qp_ex_init - install the ibv_qp_ex operations
 * @qp: a QP whose creation asked for IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
 * @send_ops: the granted operations (checked by shca_qp_ex_check())
 *
 * Every operation gets a function so a call to one that was not granted
 * fails the batch with EINVAL instead of jumping through NULL.  Must run
 * after ibv_cmd_create_qp_ex(), which resets vqp.comp_mask.
 */
void shca_qp_ex_init(struct shca_qp *qp, uint64_t send_ops)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->send_ops = send_ops;
	qp->vqp.comp_mask |= VERBS_QP_EX;
	qpx->wr_start = shca_wr_start;
	qpx->wr_complete = shca_wr_complete;
	qpx->wr_abort = shca_wr_abort;
	qpx->wr_set_sge = shca_wr_set_sge;
	qpx->wr_set_sge_list = shca_wr_set_sge_list;
	qpx->wr_set_inline_data = shca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = shca_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = shca_wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = shca_wr_set_xrc_srqn;
	qpx->wr_send = shca_wr_send;
	qpx->wr_send_imm = shca_wr_send_imm;
	qpx->wr_send_inv = shca_wr_send_inv;
	qpx->wr_rdma_write = shca_wr_rdma_write;
	qpx->wr_rdma_write_imm = shca_wr_rdma_write_imm;
	qpx->wr_rdma_read = shca_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = shca_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = shca_wr_atomic_fetch_add;
	qpx->wr_bind_mw = shca_wr_bind_mw;
	qpx->wr_local_inv = shca_wr_local_inv;
	qpx->wr_atomic_write = shca_wr_atomic_write;
#if SHCA_RDMA_CORE_VERSION_CODE >= 4500
	qpx->wr_flush = shca_wr_flush;
#endif
}
