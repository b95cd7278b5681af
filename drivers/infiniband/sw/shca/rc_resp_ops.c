// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the responder's operations: SEND, WRITE, READ, FLUSH and atomics as a
 * request in sequence executes them (shca_resp_dispatch()), and the
 * receive WQEs and completions they consume.
 *
 * rc_resp.c sequences the requests (PSNs, duplicates, holds, ACKs and
 * NAKs) and calls in here for each one in order; nothing here calls back.
 * Everything runs in the RQ engine (qp->rq_engine held), as rc_resp.c.
 */
#include "shca.h"
#include "rwqe.h"
#include "tm.h"
#include "wire.h"
#include "rc_resp_logic.h"
#include "rc_resp_priv.h"

/* ---------------------------------------------------------------- */
/* Receive WQEs and completions                                      */
/* ---------------------------------------------------------------- */

/*
 * Post the completion of the receive WQE in use, to the receive CQ (an
 * XRC SRQ's own for an XRC target; there is none once that SRQ is gone).
 * Context: RQ engine.
 */
static void shca_resp_complete(struct shca_qp *qp, struct shca_cqe *cqe,
			       bool solicited)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_cq *cq = shca_rq_cq(qp);

	cqe->wr_id = resp->wqe->hdr.wr_id;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->src_qp = READ_ONCE(qp->attr.dest_qp_num);
	cqe->port_num = 1;
	if (resp->tm_kind)
		shca_tm_rx_complete(qp, cqe);
	resp->wqe_valid = false;
	if (cq)
		shca_cq_post(cq, cqe, solicited);
}

void shca_resp_complete_err(struct shca_qp *qp, enum ib_wc_status status)
{
	struct shca_cqe cqe = { .status = status, .opcode = IB_WC_RECV };

	shca_resp_complete(qp, &cqe, false);
}

/*
 * The receive WQE just taken is malformed (shca_rwqe_pop() found its SGE
 * count or lengths impossible, and left it no SGEs): it completes with a
 * local QP operation error, the request is NAKed and the QP goes to the
 * error state (p->local_err), whichever ring it came from.
 * Context: RQ engine.
 */
static enum shca_resp_verdict shca_resp_bad_wqe(struct shca_qp *qp,
						struct shca_resp_pkt *p)
{
	qp->resp.wqe_valid = true;
	shca_resp_complete_err(qp, IB_WC_LOC_QP_OP_ERR);
	p->local_err = true;
	return SHCA_RV_NAK_OP;
}

/* Make sure a receive WQE is at hand.  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_take_wqe(struct shca_qp *qp,
						 struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	int err;

	if (resp->wqe_valid)
		return SHCA_RV_DONE;
	err = shca_rq_pop(qp, resp->wqe);
	if (err == -ENOENT)
		return SHCA_RV_RNR;
	if (err == -EBADMSG)
		return shca_resp_bad_wqe(qp, p);
	if (err) {
		p->rq_broken = true;
		return SHCA_RV_NAK_OP;
	}
	resp->wqe_valid = true;
	resp->sge_idx = 0;
	resp->sge_off = 0;
	resp->rcv_len = 0;
	return SHCA_RV_DONE;
}

/*
 * The first packet of a SEND to a TM SRQ: match it, or take an ordinary
 * WQE for it (tm.c).  A matched rendezvous is done with here (@done).
 * Context: RQ engine.
 */
static enum shca_resp_verdict shca_resp_take_tm(struct shca_qp *qp,
						struct shca_resp_pkt *p,
						bool *done)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_srq *srq = shca_rq_srq(qp);
	int ret;

	if (resp->wqe_valid)
		return SHCA_RV_DONE;
	/*
	 * A direct segment above the path MTU is a message the wire would
	 * carry in several packets: it is reported the same way.
	 */
	ret = shca_tm_rx_first(qp, srq, p->payload, p->w.pay_len,
			       (p->flags & SHCA_OPF_ONLY) == SHCA_OPF_ONLY &&
			       p->w.pay_len <= resp->mtu);
	if (ret == -ENOENT || ret == -ENOMEM)
		return SHCA_RV_RNR;
	if (ret == -EBADMSG)
		return shca_resp_bad_wqe(qp, p);
	if (ret < 0) {
		p->rq_broken = true;
		return SHCA_RV_NAK_OP;
	}
	*done = ret > 0;
	resp->wqe_valid = !*done;
	/* a matched rendezvous: acknowledge it before its READ goes out */
	if (*done)
		p->w.hdr.ackreq = true;
	return SHCA_RV_DONE;
}

/* Take the receive WQE of a new SEND message.  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_send_first(struct shca_qp *qp,
						   struct shca_resp_pkt *p,
						   bool *done)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_srq *srq = shca_rq_srq(qp);
	enum shca_resp_verdict v;

	*done = false;
	if (srq && srq->tm)
		v = shca_resp_take_tm(qp, p, done);
	else
		v = shca_resp_take_wqe(qp, p);
	if (v != SHCA_RV_DONE || *done)
		return v;
	/* a UC message dropped half-way leaves its WQE to us */
	resp->sge_idx = 0;
	resp->sge_off = 0;
	resp->rcv_len = 0;
	/* a matched eager message's TMH stays out of the tag's buffer */
	p->payload += resp->tm_skip;
	p->w.pay_len -= resp->tm_skip;
	return SHCA_RV_DONE;
}

/* Scatter SEND payload into the WQE.  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_scatter(struct shca_qp *qp,
						struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_sge_cursor cur = {
		.sdev = shca_resp_sdev(qp),
		.pd = shca_rq_pd(qp),
		.sge = resp->wqe->sge,
		.num_sge = resp->wqe->hdr.num_sge,
		.idx = resp->sge_idx,
		.off = resp->sge_off,
	};
	int err;

	err = shca_cursor_copy(&cur, p->payload, p->w.pay_len, true);
	resp->sge_idx = cur.idx;
	resp->sge_off = cur.off;
	if (!err) {
		resp->rcv_len += p->w.pay_len;
		return SHCA_RV_DONE;
	}
	p->local_err = true;
	if (err == -ENOSPC) {
		shca_resp_complete_err(qp, IB_WC_LOC_LEN_ERR);
		return SHCA_RV_NAK_INV;
	}
	shca_resp_complete_err(qp, IB_WC_LOC_PROT_ERR);
	return SHCA_RV_NAK_OP;
}

/* ---------------------------------------------------------------- */
/* Operations                                                        */
/* ---------------------------------------------------------------- */

/* SEND FIRST/MIDDLE/LAST/ONLY (+ IMM, INV).  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_send(struct shca_qp *qp,
					     struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_cqe cqe = { .opcode = IB_WC_RECV };
	enum shca_resp_verdict v;
	bool done;

	if (!shca_resp_len_ok(p->flags, p->w.pay_len, p->mtu))
		return SHCA_RV_NAK_INV;
	if (p->flags & SHCA_OPF_FIRST) {
		v = shca_resp_send_first(qp, p, &done);
		if (v != SHCA_RV_DONE || done)
			return v;
	}
	v = shca_resp_scatter(qp, p);
	if (v != SHCA_RV_DONE || !(p->flags & SHCA_OPF_LAST))
		return v;
	cqe.byte_len = resp->rcv_len;
	if (p->flags & SHCA_OPF_IMMDT) {
		cqe.flags = SHCA_CQE_F_IMM;
		cqe.imm_data = (__force u32)p->w.hdr.imm;
	} else if (p->flags & SHCA_OPF_IETH) {
		if (shca_invalidate_remote(qp, p->w.hdr.inv_rkey)) {
			shca_resp_complete_err(qp, IB_WC_REM_INV_REQ_ERR);
			p->local_err = true;
			return SHCA_RV_NAK_INV;
		}
		cqe.flags = SHCA_CQE_F_INV;
		cqe.imm_data = p->w.hdr.inv_rkey;
	}
	shca_resp_complete(qp, &cqe, p->w.hdr.se);
	return SHCA_RV_DONE;
}

/*
 * Check that the R_Key allows @access to [@va, @va + @len) now, without
 * keeping the MR: each packet looks it up again.  Context: RQ engine.
 */
int shca_resp_rkey_check(struct shca_qp *qp, u32 rkey, u64 va, u32 len,
			 int access)
{
	struct shca_mr *mr;
	int err;

	if (!len)
		return 0;	/* the R_Key is not checked */
	err = shca_rmr_get(qp, rkey, va, len, access, &mr);
	if (!err)
		shca_mr_put(mr);
	return err;
}

/* RETH of a WRITE FIRST/ONLY: check the target.  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_write_start(struct shca_qp *qp,
						    struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;

	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_WRITE))
		return SHCA_RV_NAK_ACC;
	if (p->w.hdr.dma_len > SHCA_RESP_MAX_MSG)
		return SHCA_RV_NAK_INV;
	resp->rkey = p->w.hdr.rkey;
	resp->va = p->w.hdr.va;
	resp->dma_len = p->w.hdr.dma_len;
	resp->wr_done = 0;
	if (shca_resp_rkey_check(qp, resp->rkey, resp->va, resp->dma_len,
				 IB_ACCESS_REMOTE_WRITE))
		return SHCA_RV_NAK_ACC;
	return SHCA_RV_DONE;
}

/*
 * Place @len bytes of a WRITE at its cursor, under a reference taken for
 * this packet only.  Context: RQ engine.
 */
static int shca_resp_write_data(struct shca_qp *qp, void *data, u32 len)
{
	struct shca_resp *resp = &qp->resp;
	u64 va = resp->va + resp->wr_done;
	struct shca_mr *mr;
	int err;

	err = shca_rmr_get(qp, resp->rkey, va, len, IB_ACCESS_REMOTE_WRITE,
			   &mr);
	if (err)
		return err;
	err = shca_rmr_copy(mr, va, data, len, true);
	shca_mr_put(mr);
	return err;
}

/* The end of a WRITE: complete a WRITE_WITH_IMM. */
static enum shca_resp_verdict shca_resp_write_end(struct shca_qp *qp,
						  struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_cqe cqe = {
		.opcode = IB_WC_RECV_RDMA_WITH_IMM,
		.flags = SHCA_CQE_F_IMM,
		.imm_data = (__force u32)p->w.hdr.imm,
	};

	if (resp->wr_done != resp->dma_len)
		return SHCA_RV_NAK_INV;
	if (p->flags & SHCA_OPF_IMMDT) {
		cqe.byte_len = resp->dma_len;
		shca_resp_complete(qp, &cqe, p->w.hdr.se);
	}
	return SHCA_RV_DONE;
}

/*
 * ATOMIC WRITE: 8 bytes at an 8-byte aligned address, stored at once and
 * acknowledged like a WRITE; a duplicate is re-ACKed, not re-executed.
 * Context: RQ engine.
 */
static enum shca_resp_verdict shca_resp_atomic_write(struct shca_qp *qp,
						     struct shca_resp_pkt *p)
{
	const struct shca_wire_hdr *h = &p->w.hdr;
	struct shca_mr *mr;
	u64 val;
	int err;

	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_WRITE))
		return SHCA_RV_NAK_ACC;
	if (h->dma_len != sizeof(val) || p->w.pay_len != sizeof(val) ||
	    (h->va & (sizeof(val) - 1)))
		return SHCA_RV_NAK_INV;
	err = shca_rmr_get(qp, h->rkey, h->va, sizeof(val),
			   IB_ACCESS_REMOTE_WRITE, &mr);
	if (err)
		return SHCA_RV_NAK_ACC;
	memcpy(&val, p->payload, sizeof(val));
	err = shca_rmr_atomic_write(mr, h->va, val);
	shca_mr_put(mr);
	return err ? SHCA_RV_NAK_ACC : SHCA_RV_DONE;
}

/* RDMA WRITE FIRST/MIDDLE/LAST/ONLY (+ IMM).  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_write(struct shca_qp *qp,
					      struct shca_resp_pkt *p)
{
	struct shca_resp *resp = &qp->resp;
	u32 len = p->w.pay_len;
	enum shca_resp_verdict v;

	if (p->w.hdr.opcode == (SHCA_TR_RC | SHCA_OPC_ATOMIC_WRITE))
		return shca_resp_atomic_write(qp, p);

	if (!shca_resp_len_ok(p->flags, len, p->mtu))
		return SHCA_RV_NAK_INV;
	if (p->flags & SHCA_OPF_FIRST) {
		v = shca_resp_write_start(qp, p);
		if (v != SHCA_RV_DONE)
			return v;
	}
	if (p->flags & SHCA_OPF_IMMDT) {
		/* before any byte lands: an RNR NAK makes this packet retried */
		v = shca_resp_take_wqe(qp, p);
		if (v != SHCA_RV_DONE)
			return v;
	}
	if (len > resp->dma_len - resp->wr_done)
		return SHCA_RV_NAK_INV;
	if (len && shca_resp_write_data(qp, p->payload, len))
		return SHCA_RV_NAK_ACC;
	resp->wr_done += len;
	if (p->flags & SHCA_OPF_LAST)
		return shca_resp_write_end(qp, p);
	return SHCA_RV_DONE;
}

/* The next free resource, or NULL if max_dest_rd_atomic are pending. */
static struct shca_resp_res *shca_resp_res_alloc(struct shca_resp *resp)
{
	struct shca_resp_res *res;

	if (resp->npending >= resp->nres)
		return NULL;
	res = &resp->res[(resp->res_tx + resp->npending) % resp->nres];
	shca_resp_res_clear(res);
	resp->npending++;
	return res;
}

u32 shca_resp_next_msn(struct shca_resp *resp)
{
	return (resp->msn + 1) & SHCA_WIRE_24BIT;
}

/* The QP and region permissions a FLUSH of placement type @plt needs. */
static int shca_resp_flush_access(u8 plt)
{
	return (plt & SHCA_FETH_PLT_GLOBAL ? SHCA_ACCESS_FLUSH_GLOBAL : 0) |
	       (plt & SHCA_FETH_PLT_PERSISTENT ?
		SHCA_ACCESS_FLUSH_PERSISTENT : 0);
}

/*
 * FLUSH (IBTA 1.5): make what earlier requests placed in the region
 * visible at the placement type asked for.  This responder placed every
 * earlier WRITE, ATOMIC WRITE and atomic with the CPU when it executed
 * it, in PSN order, before this request: for global visibility only a
 * store barrier is left to do.  Persistence is never granted (no MR
 * carries FLUSH_PERSISTENT, compat.h), so such a request fails the
 * access check.  It is answered like a READ of nothing, one RDMA READ
 * RESPONSE ONLY without payload, from a responder resource, so that a
 * duplicate is answered again (shca_rc_rewind()) without flushing again.
 * A selectivity level of the whole region ignores the RETH's address and
 * length.  Context: RQ engine.
 */
static enum shca_resp_verdict shca_resp_flush(struct shca_qp *qp,
					      struct shca_resp_pkt *p)
{
	const struct shca_wire_hdr *h = &p->w.hdr;
	struct shca_resp *resp = &qp->resp;
	struct shca_resp_res *res;
	int access, err;

	if (!SHCA_FLUSH_SUPPORTED)
		return SHCA_RV_NAK_INV;
	if (!shca_resp_feth_ok(h->feth_plt, h->feth_sel) ||
	    (h->feth_sel == SHCA_FETH_SEL_RANGE &&
	     h->dma_len > SHCA_RESP_MAX_MSG))
		return SHCA_RV_NAK_INV;
	access = shca_resp_flush_access(h->feth_plt);
	if ((READ_ONCE(qp->attr.qp_access_flags) & access) != access)
		return SHCA_RV_NAK_ACC;
	if (h->feth_sel == SHCA_FETH_SEL_MR)
		err = shca_rmr_check_region(qp, h->rkey, access);
	else
		err = shca_resp_rkey_check(qp, h->rkey, h->va, h->dma_len,
					   access);
	if (err)
		return SHCA_RV_NAK_ACC;
	res = shca_resp_res_alloc(resp);
	if (!res)
		return SHCA_RV_NAK_INV;
	/* the earlier placements reach memory before the answer leaves */
	wmb();
	res->type = SHCA_RES_READ;
	res->pending = true;
	res->psn = h->psn;
	res->npkts = 1;
	res->mtu = p->mtu;
	res->direct = p->direct;
	res->msn = shca_resp_next_msn(resp);
	res->rkey = h->rkey;
	res->va = h->va;
	res->len = 0;
	res->srqn = 0;
	res->srq_uid = 0;
	res->flush = true;
	p->npkts = 1;
	return SHCA_RV_DONE;
}

/* RDMA READ request (or FLUSH).  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_read(struct shca_qp *qp,
					     struct shca_resp_pkt *p)
{
	const struct shca_wire_hdr *h = &p->w.hdr;
	struct shca_resp *resp = &qp->resp;
	struct shca_resp_res *res;

	if (h->opcode == (SHCA_TR_RC | SHCA_OPC_FLUSH))
		return shca_resp_flush(qp, p);
	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_READ))
		return SHCA_RV_NAK_ACC;
	if (h->dma_len > SHCA_RESP_MAX_MSG)
		return SHCA_RV_NAK_INV;
	if (shca_resp_rkey_check(qp, h->rkey, h->va, h->dma_len,
				 IB_ACCESS_REMOTE_READ))
		return SHCA_RV_NAK_ACC;
	res = shca_resp_res_alloc(resp);
	if (!res)
		return SHCA_RV_NAK_INV;
	res->type = SHCA_RES_READ;
	res->pending = true;
	res->psn = h->psn;
	res->npkts = shca_resp_read_npkts(h->dma_len, p->mtu);
	res->mtu = p->mtu;
	res->direct = p->direct;
	res->msn = shca_resp_next_msn(resp);
	res->rkey = h->rkey;
	res->va = h->va;
	res->len = h->dma_len;
	res->srqn = h->xrc_srqn;
	res->srq_uid = resp->xsrq ? resp->xsrq->uid : 0;
	p->npkts = res->npkts;
	return SHCA_RV_DONE;
}

/* CMP_SWP and FETCH_ADD.  Context: RQ engine. */
static enum shca_resp_verdict shca_resp_atomic(struct shca_qp *qp,
					       struct shca_resp_pkt *p)
{
	const struct shca_wire_hdr *h = &p->w.hdr;
	struct shca_resp *resp = &qp->resp;
	struct shca_resp_res *res;
	struct shca_mr *mr;
	u64 orig;
	int err;

	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_ATOMIC))
		return SHCA_RV_NAK_ACC;
	if (h->va & 7 || resp->npending >= resp->nres)
		return SHCA_RV_NAK_INV;
	err = shca_rmr_get(qp, h->rkey, h->va, sizeof(u64),
			   IB_ACCESS_REMOTE_ATOMIC, &mr);
	if (err)
		return SHCA_RV_NAK_ACC;
	err = shca_rmr_atomic(mr, h->va, (h->opcode & SHCA_OPC_MASK) ==
			      SHCA_OPC_COMPARE_SWAP, h->swap_add, h->compare,
			      &orig);
	shca_mr_put(mr);
	if (err)
		return SHCA_RV_NAK_ACC;
	res = shca_resp_res_alloc(resp);
	res->type = SHCA_RES_ATOMIC;
	res->pending = true;
	res->psn = h->psn;
	res->npkts = 1;
	res->direct = p->direct;
	res->msn = shca_resp_next_msn(resp);
	res->rkey = h->rkey;
	res->va = h->va;
	res->orig = orig;
	return SHCA_RV_DONE;
}

/* Run the handler of a packet that is in sequence.  Context: RQ engine. */
enum shca_resp_verdict shca_resp_dispatch(struct shca_qp *qp,
					  struct shca_resp_pkt *p)
{
	if (p->flags & SHCA_OPF_SEND)
		return shca_resp_send(qp, p);
	if (p->flags & SHCA_OPF_WRITE)
		return shca_resp_write(qp, p);
	if (p->flags & SHCA_OPF_READ)
		return shca_resp_read(qp, p);
	if (p->flags & SHCA_OPF_ATOMIC)
		return shca_resp_atomic(qp, p);
	return SHCA_RV_NAK_INV;
}

/* Drop the SEND/WRITE message in progress (its WQE is kept). */
void shca_resp_abort_msg(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	resp->msg_kind = 0;
	resp->sge_idx = 0;
	resp->sge_off = 0;
	resp->rcv_len = 0;
}
