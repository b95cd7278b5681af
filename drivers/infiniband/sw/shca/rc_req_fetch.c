// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the requester's fetch: the next posted WQE (from the SQ ring) or
 * internal operation, copied into its private shadow and validated there,
 * once (opcode for the QP type, SGE count, inline length, atomics).
 *
 * What the ring holds is the producer's and may change under us: the
 * checks run on the shadow only.  rc_req.c is the only caller, in SQ
 * engine runs (qp->sq_engine held).
 */
#include "rc_req_priv.h"
#include "rq_logic.h"
#include "wire.h"

static bool shca_req_op_ok(enum ib_qp_type type, u8 op)
{
	switch (op) {
	case SHCA_OP_SEND:
	case SHCA_OP_SEND_WITH_IMM:
	case SHCA_OP_RDMA_WRITE:
	case SHCA_OP_RDMA_WRITE_WITH_IMM:
	case SHCA_OP_BIND_MW:
	case SHCA_OP_LOCAL_INV:
	case SHCA_OP_REG_MR:
		return true;
	case SHCA_OP_SEND_WITH_INV:
	case SHCA_OP_RDMA_READ:
	case SHCA_OP_ATOMIC_CMP_AND_SWP:
	case SHCA_OP_ATOMIC_FETCH_AND_ADD:
		return shca_qp_is_reliable(type);
	case SHCA_OP_ATOMIC_WRITE:	/* XRC has no ATOMIC WRITE opcode */
		return type == IB_QPT_RC;
	case SHCA_OP_FLUSH:		/* nor FLUSH; 6.1 has no FLUSH */
		return type == IB_QPT_RC && SHCA_FLUSH_SUPPORTED;
	default:
		return false;
	}
}

/* Atomics: one 8-byte SGE, 8-byte aligned remote address. */
static enum ib_wc_status shca_req_check_atomic(const struct shca_req_wqe *w)
{
	if (w->hdr.flags & SHCA_WQE_F_INLINE)
		return IB_WC_LOC_QP_OP_ERR;
	if (w->hdr.num_sge != 1 || w->sge[0].length != 8)
		return IB_WC_LOC_LEN_ERR;
	if (w->hdr.atomic.remote_addr & 7)
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/* ATOMIC WRITE: 8 inline bytes, 8-byte aligned remote address. */
static enum ib_wc_status
shca_req_check_atomic_write(const struct shca_req_wqe *w)
{
	if (!(w->hdr.flags & SHCA_WQE_F_INLINE))
		return IB_WC_LOC_QP_OP_ERR;
	if (w->hdr.inline_len != SHCA_ATOMIC_WRITE_LEN)
		return IB_WC_LOC_LEN_ERR;
	if (w->hdr.rdma.remote_addr & 7)
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/* The WQE's FLUSH type and level go into the FETH as they are. */
static_assert(SHCA_FLUSH_GLOBAL == SHCA_FETH_PLT_GLOBAL);
static_assert(SHCA_FLUSH_PERSISTENT == SHCA_FETH_PLT_PERSISTENT);
static_assert(SHCA_FLUSH_RANGE == SHCA_FETH_SEL_RANGE);
static_assert(SHCA_FLUSH_MR == SHCA_FETH_SEL_MR);

/*
 * FLUSH: no SGEs or inline data (nothing is read back), a known type and
 * level, a range the RETH can carry (shca_req_flush_check()).
 */
static enum ib_wc_status shca_req_check_flush(const struct shca_req_wqe *w)
{
	const struct shca_wqe_flush *f = &w->hdr.flush;

	if ((w->hdr.flags & SHCA_WQE_F_INLINE) || w->hdr.num_sge)
		return IB_WC_LOC_QP_OP_ERR;
	switch (shca_req_flush_check(f->type, f->level, f->length)) {
	case 0:
		return IB_WC_SUCCESS;
	case -EMSGSIZE:
		return IB_WC_LOC_LEN_ERR;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/*
 * Copy the payload description of a WQE from @data (the SGEs or inline
 * bytes after its header, at most @max_inline of the latter); returns
 * its total length.
 */
static enum ib_wc_status shca_req_copy_data(struct shca_qp *qp,
					    struct shca_req_wqe *w,
					    const void *data, u32 max_inline,
					    u64 *total)
{
	if (w->hdr.flags & SHCA_WQE_F_INLINE) {
		if (w->hdr.inline_len > max_inline)
			return IB_WC_LOC_LEN_ERR;
		memcpy(w->inl, data, w->hdr.inline_len);
		*total = w->hdr.inline_len;
		return IB_WC_SUCCESS;
	}
	if (w->hdr.num_sge > qp->sq.max_sge)
		return IB_WC_LOC_LEN_ERR;
	memcpy(w->sge, data, w->hdr.num_sge * sizeof(w->sge[0]));
	if (shca_sge_total(w->sge, w->hdr.num_sge, total))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/*
 * Validate the WQE whose header is in @w and copy its payload description
 * from @data, once (@max_inline: see shca_req_copy_data()).
 * Context: SQ engine.
 */
static enum ib_wc_status shca_req_copy(struct shca_qp *qp,
				       struct shca_req_wqe *w,
				       const void *data, u32 max_inline)
{
	enum ib_wc_status st;
	u64 total = 0;

	w->started = false;
	w->len = 0;
	if (!shca_req_op_ok(qp->ibqp.qp_type, w->hdr.opcode))
		return IB_WC_LOC_QP_OP_ERR;
	/* an XRC SRQ number is 24 bits; other QP types ignore the field */
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI &&
	    (w->hdr.xrc_remote_srqn & ~SHCA_WIRE_24BIT))
		return IB_WC_LOC_QP_OP_ERR;
	if (shca_req_is_local(w))
		return w->hdr.num_sge || (w->hdr.flags & SHCA_WQE_F_INLINE) ?
		       IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
	st = shca_req_copy_data(qp, w, data, max_inline, &total);
	if (st != IB_WC_SUCCESS)
		return st;
	if (total > (1ULL << 31))
		return IB_WC_LOC_LEN_ERR;
	w->len = total;
	if (w->hdr.opcode == SHCA_OP_ATOMIC_CMP_AND_SWP ||
	    w->hdr.opcode == SHCA_OP_ATOMIC_FETCH_AND_ADD)
		return shca_req_check_atomic(w);
	if (w->hdr.opcode == SHCA_OP_ATOMIC_WRITE)
		return shca_req_check_atomic_write(w);
	if (w->hdr.opcode == SHCA_OP_FLUSH)
		return shca_req_check_flush(w);
	if (w->hdr.opcode == SHCA_OP_RDMA_READ &&
	    (w->hdr.flags & SHCA_WQE_F_INLINE))
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/*
 * Copy the next posted user WQE into the shadow @w.  The producer index
 * is hostile: it must lie within the ring's entries from kcons and not
 * behind what was copied already, so no more user WQEs are ever copied
 * than the ring has entries.
 * Return: false if there is none (or the ring is broken: QP fatal).
 * Context: SQ engine.
 */
static bool shca_req_fetch_user(struct shca_qp *qp, struct shca_req_wqe *w)
{
	struct shca_ring *ring = &qp->sq.ring;
	struct shca_req *req = &qp->req;
	const void *slot;
	u32 prod;

	/* pairs with the producer's release of prod after writing WQEs */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (prod == req->ufetch)
		return false;
	if (!shca_ring_idx_valid(prod, ring->kcons, ring->entries) ||
	    shca_ring_count(prod, ring->kcons) <
	    shca_ring_count(req->ufetch, ring->kcons)) {
		ibdev_err_ratelimited(qp->ibqp.device, "qp %u: broken SQ\n",
				      qp->ibqp.qp_num);
		shca_qp_fatal(qp);
		return false;
	}
	slot = shca_ring_entry(ring, req->ufetch);
	memcpy(&w->hdr, slot, sizeof(w->hdr));
	w->iop = NULL;
	w->status = shca_req_copy(qp, w, slot + sizeof(w->hdr),
				  qp->cap.max_inline_data);
	req->ufetch++;
	return true;
}

/* Flags an internal operation may carry; the others are ignored. */
#define SHCA_REQ_IOP_FLAGS	(SHCA_WQE_F_FENCE | SHCA_WQE_F_INLINE | \
				 SHCA_WQE_F_SOLICITED)

/* Copy and validate internal operation @iop into the shadow @w. */
static enum ib_wc_status shca_req_copy_iop(struct shca_qp *qp,
					   struct shca_req_wqe *w,
					   const struct shca_req_iop *iop)
{
	BUILD_BUG_ON(SHCA_REQ_IOP_MAX_SGE != SHCA_MAX_SGE);
	BUILD_BUG_ON(SHCA_REQ_IOP_MAX_INLINE > SHCA_MAX_INLINE);
	w->hdr = iop->hdr;
	w->hdr.flags &= SHCA_REQ_IOP_FLAGS;
	if (w->hdr.opcode != SHCA_OP_SEND &&
	    w->hdr.opcode != SHCA_OP_RDMA_READ) {
		w->started = false;
		w->len = 0;
		return IB_WC_LOC_QP_OP_ERR;
	}
	return shca_req_copy(qp, w, iop->sge,
			     min_t(u32, qp->cap.max_inline_data,
				   sizeof(iop->inl)));
}

/*
 * Is an internal operation queued?  A lockless hint: shca_req_post_iop()
 * queues sq_work after it adds one.
 */
bool shca_req_iop_queued(struct shca_req *req)
{
	return req->iop_cap && !list_empty(&req->iops);
}

/*
 * Take the oldest queued internal operation into the shadow @w.
 * Return: false if there is none.  Context: SQ engine.
 */
static bool shca_req_fetch_iop(struct shca_qp *qp, struct shca_req_wqe *w)
{
	struct shca_req *req = &qp->req;
	struct shca_req_iop *iop;
	unsigned long flags;

	spin_lock_irqsave(&req->iop_lock, flags);
	iop = list_first_entry_or_null(&req->iops, struct shca_req_iop, node);
	if (iop)
		list_del_init(&iop->node);
	spin_unlock_irqrestore(&req->iop_lock, flags);
	if (!iop)
		return false;
	w->iop = iop;
	w->status = shca_req_copy_iop(qp, w, iop);
	return true;
}

/* Where the next shadow comes from (shca_req_fetch_src()). */
enum shca_req_src shca_req_src(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	return shca_req_fetch_src(shca_ring_count(req->fetch, req->head),
				  req->nwqes, shca_req_iop_queued(req),
				  shca_ring_count(req->ufetch, qp->sq.ring.kcons),
				  qp->sq.ring.entries);
}

/*
 * Copy the next internal operation or posted WQE into the next shadow
 * (RTS only: SQD and the other states take no new WQEs).
 * Return: the shadow, or NULL if there is none.
 * Context: SQ engine.
 */
struct shca_req_wqe *shca_req_fetch(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	struct shca_req_wqe *w = shca_req_wqe_at(qp, req->fetch);
	bool fetched = false;

	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return NULL;
	switch (shca_req_src(qp)) {
	case SHCA_REQ_SRC_IOP:
		fetched = shca_req_fetch_iop(qp, w);
		break;
	case SHCA_REQ_SRC_USER:
		fetched = shca_req_fetch_user(qp, w);
		break;
	case SHCA_REQ_SRC_NONE:
		break;
	}
	if (!fetched)
		return NULL;
	req->fetch++;
	return w;
}
