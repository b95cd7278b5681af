// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the send queue of UD, GSI and RAW_PACKET QPs (the WQEs go to
 * raw.c for the latter), and kernel posting for every QP type (the WQE a
 * kernel work request makes, in the ring the engines read).
 *
 * shca_sq_drain() is one step of an engine run (sq_engine.c) under
 * qp->sq_engine, the only consumer of the SQ and the owner of ring.kcons.
 * Producers are the provider (user QPs, through the mapped ring) and
 * shca_post_send_kernel() (kernel QPs, under qp->sq_lock).
 *
 * WQEs are copied out of the ring before they are looked at: the ring
 * may be user memory that changes under us.
 */
#include <linux/log2.h>
#include <net/route.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "direct.h"
#include "raw.h"
#include "roce.h"
#include "wire.h"

/* A private copy of one send WQE. */
struct shca_swqe {
	struct shca_send_wqe hdr;
	struct shca_sge sge[SHCA_MAX_SGE];
};

/* What a UD send needs from its address handle. */
struct shca_ud_dest {
	union ib_gid dgid;
	u8 sgid_index;
	u8 tclass;
	u32 flow_label;
};

static bool shca_sq_signaled(struct shca_qp *qp, const struct shca_swqe *w)
{
	return qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
	       (w->hdr.flags & SHCA_WQE_F_SIGNALED);
}

/* Context: SQ engine. */
static void shca_sq_complete(struct shca_qp *qp, const struct shca_swqe *w,
			     u32 len, enum ib_wc_status status)
{
	struct shca_cqe cqe = {};

	if (status == IB_WC_SUCCESS && !shca_sq_signaled(qp, w))
		return;
	cqe.wr_id = w->hdr.wr_id;
	cqe.status = status;
	cqe.opcode = IB_WC_SEND;
	cqe.byte_len = len;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.port_num = 1;
	shca_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false);
}

/* Copy the AH named by a WQE, if it exists and belongs to our PD. */
static int shca_ud_dest(struct shca_qp *qp, u32 handle,
			struct shca_ud_dest *dest)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	const struct ib_global_route *grh;
	unsigned long flags;
	struct shca_ah *ah;
	int err = -EINVAL;

	xa_lock_irqsave(&sdev->ahs, flags);
	ah = xa_load(&sdev->ahs, handle);
	if (ah && ah->ibah.pd == qp->ibqp.pd) {
		grh = rdma_ah_read_grh(&ah->attr);
		dest->dgid = grh->dgid;
		dest->sgid_index = grh->sgid_index;
		dest->tclass = grh->traffic_class;
		dest->flow_label = grh->flow_label;
		err = 0;
	}
	xa_unlock_irqrestore(&sdev->ahs, flags);
	return err;
}

/* Route a UD packet to @dest.  Context: SQ engine. */
static int shca_ud_path(struct shca_qp *qp, const struct shca_ud_dest *dest,
			u32 dqpn, struct shca_path *path)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	const struct ib_gid_attr *sattr;
	int err;

	sattr = rdma_get_gid_attr(&sdev->ibdev, 1, dest->sgid_index);
	if (IS_ERR(sattr))
		return PTR_ERR(sattr);
	err = shca_path_resolve(sdev, &sattr->gid, &dest->dgid, path);
	rdma_put_gid_attr(sattr);
	if (err)
		return err;
	path->sport = shca_path_sport(qp->ibqp.qp_num, dqpn);
	path->tclass = dest->tclass;
	path->flow_label = dest->flow_label;
	return 0;
}

static u32 shca_ud_qkey(struct shca_qp *qp, u32 wqe_qkey)
{
	/* IBTA: a Q_Key with the high bit set means "use the QP's own" */
	return wqe_qkey & 0x80000000U ? READ_ONCE(qp->attr.qkey) : wqe_qkey;
}

/* Pack BTH + DETH (+ ImmDt) for a UD send; returns the header length. */
static int shca_ud_pack(struct shca_qp *qp, const struct shca_swqe *w,
			u8 *buf, u32 len, u32 pad)
{
	struct shca_wire_hdr h = {
		.opcode = SHCA_TR_UD | SHCA_OPC_SEND_ONLY,
		.pad = pad,
		.se = w->hdr.flags & SHCA_WQE_F_SOLICITED,
		.pkey = SHCA_PKEY_DEFAULT,
		.dqpn = w->hdr.ud.remote_qpn & SHCA_WIRE_24BIT,
		.qkey = shca_ud_qkey(qp, w->hdr.ud.remote_qkey),
		.src_qpn = qp->ibqp.qp_num,
	};

	if (w->hdr.opcode == SHCA_OP_SEND_WITH_IMM) {
		h.opcode = SHCA_TR_UD | SHCA_OPC_SEND_ONLY_WITH_IMMEDIATE;
		h.imm = (__force __be32)w->hdr.ex;
	}
	return shca_wire_pack(buf, len, &h);
}

/* Gather the payload from the SGEs or the inline bytes. */
static int shca_ud_gather(struct shca_qp *qp, const struct shca_swqe *w,
			  const void *slot, u8 *buf, u32 len)
{
	struct shca_sge_cursor cur = {
		.sdev = to_sdev(qp->ibqp.device),
		.pd = qp->ibqp.pd,
		.sge = w->sge,
		.num_sge = w->hdr.num_sge,
	};

	if (w->hdr.flags & SHCA_WQE_F_INLINE) {
		memcpy(buf, slot + sizeof(w->hdr), len);
		return 0;
	}
	return shca_cursor_copy(&cur, buf, len, false);
}

/*
 * Build and send one UD packet.  Return: an ib_wc_status.
 * Context: SQ engine (qp->sq_engine held).
 */
static enum ib_wc_status shca_ud_send(struct shca_qp *qp,
				      const struct shca_swqe *w,
				      const void *slot, u32 len)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_path path = {};
	struct shca_ud_dest dest;
	u32 pad = -len & 3, hlen;
	struct sk_buff *skb;
	int ret;

	lockdep_assert_held(&qp->sq_engine);
	if (shca_ud_dest(qp, w->hdr.ud.ah_handle, &dest))
		return IB_WC_LOC_QP_OP_ERR;
	if (shca_ud_path(qp, &dest, w->hdr.ud.remote_qpn, &path)) {
		/* no route: the datagram is lost, like on a wire */
		shca_qp_stat_inc(qp, SHCA_STAT_TX_ERR);
		return IB_WC_SUCCESS;
	}
	path.direct = shca_direct_usable(sdev, &path, false, &qp->direct_memo);
	path.rx_inline = true;	/* an SQ engine run, see direct.c, net.c */
	shca_qp_stat_inc(qp, path.direct ? SHCA_STAT_TX_DIRECT_MSGS :
					     SHCA_STAT_TX_WIRE_MSGS);
	hlen = shca_opcode_info(SHCA_TR_UD | (w->hdr.opcode ==
			SHCA_OP_SEND_WITH_IMM ?
			SHCA_OPC_SEND_ONLY_WITH_IMMEDIATE :
			SHCA_OPC_SEND_ONLY))->hdr_len;
	skb = shca_skb_alloc(sdev, &path, hlen + len + pad + SHCA_ICRC_BYTES);
	if (!skb) {
		dst_release(path.dst);
		return IB_WC_LOC_QP_OP_ERR;
	}
	ret = shca_ud_pack(qp, w, skb->data, hlen, pad);
	if (ret >= 0)
		ret = shca_ud_gather(qp, w, slot, skb->data + hlen, len);
	if (ret < 0) {
		kfree_skb(skb);
		dst_release(path.dst);
		return ret == -EINVAL ? IB_WC_LOC_QP_OP_ERR : IB_WC_LOC_PROT_ERR;
	}
	memset(skb->data + hlen + len, 0, pad + SHCA_ICRC_BYTES);
	if (shca_skb_xmit(sdev, &path, skb))
		shca_qp_stat_inc(qp, SHCA_STAT_TX_ERR);
	else
		shca_qp_stat_inc(qp, SHCA_STAT_TX_PACKETS);
	return IB_WC_SUCCESS;
}

/* Validate a WQE copy and work out its payload length. */
static enum ib_wc_status shca_sq_check(struct shca_qp *qp,
				       const struct shca_swqe *w, u32 *len)
{
	u32 mtu = shca_ib_mtu_to_bytes(shca_active_mtu(to_sdev(qp->ibqp.device)));
	u64 total;

	if (w->hdr.opcode != SHCA_OP_SEND &&
	    w->hdr.opcode != SHCA_OP_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	if (w->hdr.flags & SHCA_WQE_F_INLINE) {
		if (w->hdr.inline_len > qp->cap.max_inline_data)
			return IB_WC_LOC_LEN_ERR;
		total = w->hdr.inline_len;
	} else if (w->hdr.num_sge > qp->sq.max_sge ||
		   shca_sge_total(w->sge, w->hdr.num_sge, &total)) {
		return IB_WC_LOC_LEN_ERR;
	}
	if (total > mtu)
		return IB_WC_LOC_LEN_ERR;
	*len = total;
	return IB_WC_SUCCESS;
}

/*
 * Execute the WQE in @slot (the engine's consumer index) into the private
 * copy @w; the caller completes it once the slot is handed back.  The
 * slot is as long as the QP's caps asked (rq_logic.h): SGEs beyond
 * qp->sq.max_sge would be read from the next entry, or past the ring,
 * so no more are copied, and shca_sq_check() or shca_raw_send() fails a
 * WQE that names more.
 * Context: SQ engine.
 */
static enum ib_wc_status shca_sq_exec(struct shca_qp *qp, const void *slot,
				      struct shca_swqe *w, u32 *len)
{
	enum ib_wc_status status;

	memcpy(&w->hdr, slot, sizeof(w->hdr));
	if (!(w->hdr.flags & SHCA_WQE_F_INLINE))
		memcpy(w->sge, slot + sizeof(w->hdr),
		       min_t(u32, w->hdr.num_sge, qp->sq.max_sge) *
		       sizeof(w->sge[0]));
	if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET)
		return shca_raw_send(qp, &w->hdr, w->sge, slot, len);
	status = shca_sq_check(qp, w, len);
	if (status == IB_WC_SUCCESS)
		status = shca_ud_send(qp, w, slot, *len);
	return status;
}

static bool shca_sq_can_send(struct shca_qp *qp)
{
	return READ_ONCE(qp->state) == IB_QPS_RTS;
}

/*
 * Process WQEs until the ring is empty or the budget is used up.
 * Return: false if the budget ran out (more work may be pending).
 */
bool shca_sq_drain(struct shca_qp *qp, u32 *budget)
{
	struct shca_ring *ring = &qp->sq.ring;
	u32 prod;

	lockdep_assert_held(&qp->sq_engine);
	/* pairs with the producer's release of prod after writing WQEs */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (!shca_ring_idx_valid(prod, ring->kcons, ring->entries)) {
		ibdev_err_ratelimited(qp->ibqp.device, "qp %u: broken SQ\n",
				      qp->ibqp.qp_num);
		shca_qp_fatal(qp);
		return true;
	}
	while (ring->kcons != prod) {
		const void *slot = shca_ring_entry(ring, ring->kcons);

		enum ib_wc_status status = IB_WC_WR_FLUSH_ERR;
		struct shca_swqe w;
		u32 len = 0;

		if (READ_ONCE(qp->dying))
			return true;
		if (READ_ONCE(qp->state) == IB_QPS_ERR)
			memcpy(&w.hdr, slot, sizeof(w.hdr));
		else if (shca_sq_can_send(qp))
			status = shca_sq_exec(qp, slot, &w, &len);
		else
			return true;	/* not RTS yet: keep the WQEs */
		ring->kcons++;
		/*
		 * The WQE was read before its slot is handed back, and the slot
		 * is free before its completion can be polled: a consumer that
		 * reposts on every completion never finds the SQ full.
		 */
		smp_store_release(&ring->ctl->cons, ring->kcons);
		shca_sq_complete(qp, &w, len, status);
		if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
			shca_qp_set_error(qp);
		if (!--*budget)
			return false;
	}
	return true;
}

/*
 * Is there a UD/GSI/RAW WQE the engine could execute now?  Only in the
 * states where shca_sq_drain() consumes WQEs: RTS executes them, ERR
 * flushes them.  In SQD and SQE it keeps them; calling them pending
 * there spun shca_engine_loop() for ever in the posting system call (a
 * soft lockup; verbs_fuzz, seed 0x37f0: a UD QP moved to SQD with WQEs
 * posted, then a doorbell).
 */
bool shca_sq_pending(struct shca_qp *qp)
{
	struct shca_ring *ring = &qp->sq.ring;
	/* pairs with the producer's release of prod */
	u32 prod = smp_load_acquire(&ring->ctl->prod);
	enum ib_qp_state state = READ_ONCE(qp->state);

	lockdep_assert_held(&qp->sq_engine);
	return prod != ring->kcons && !READ_ONCE(qp->dying) &&
	       shca_ring_idx_valid(prod, ring->kcons, ring->entries) &&
	       (state == IB_QPS_RTS || state == IB_QPS_ERR);
}

static int shca_wr_opcode(const struct shca_qp *qp, enum ib_wr_opcode opcode)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;

	/* a RAW_PACKET QP sends whole frames, nothing else */
	if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET)
		return opcode == IB_WR_SEND ? SHCA_OP_SEND : -EINVAL;
	switch (opcode) {
	case IB_WR_SEND:
		return SHCA_OP_SEND;
	case IB_WR_SEND_WITH_IMM:
		return SHCA_OP_SEND_WITH_IMM;
	case IB_WR_RDMA_WRITE:
		return rc || uc ? SHCA_OP_RDMA_WRITE : -EINVAL;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return rc || uc ? SHCA_OP_RDMA_WRITE_WITH_IMM : -EINVAL;
	case IB_WR_RDMA_READ:
		return rc ? SHCA_OP_RDMA_READ : -EINVAL;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return rc ? SHCA_OP_ATOMIC_CMP_AND_SWP : -EINVAL;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return rc ? SHCA_OP_ATOMIC_FETCH_AND_ADD : -EINVAL;
	case IB_WR_SEND_WITH_INV:
		return rc ? SHCA_OP_SEND_WITH_INV : -EINVAL;
	case IB_WR_REG_MR:
		return rc || uc ? SHCA_OP_REG_MR : -EINVAL;
	case IB_WR_LOCAL_INV:
		return rc || uc ? SHCA_OP_LOCAL_INV : -EINVAL;
	default:
		return -EINVAL;
	}
}

/* Inline: copy the data of kernel virtual SGEs into the WQE. */
static int shca_wr_inline(struct shca_qp *qp, const struct ib_send_wr *wr,
			  struct shca_send_wqe *wqe)
{
	u8 *p = (u8 *)(wqe + 1);
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		u32 n = wr->sg_list[i].length;

		if (n > qp->cap.max_inline_data - len)
			return -EINVAL;
		memcpy(p + len, (void *)(uintptr_t)wr->sg_list[i].addr, n);
		len += n;
	}
	wqe->inline_len = len;
	wqe->flags |= SHCA_WQE_F_INLINE;
	return 0;
}

static u8 shca_wr_flags(int send_flags)
{
	return (send_flags & IB_SEND_SIGNALED ? SHCA_WQE_F_SIGNALED : 0) |
	       (send_flags & IB_SEND_SOLICITED ? SHCA_WQE_F_SOLICITED : 0) |
	       (send_flags & IB_SEND_FENCE ? SHCA_WQE_F_FENCE : 0) |
	       (send_flags & IB_SEND_IP_CSUM ? SHCA_WQE_F_IP_CSUM : 0);
}

/* IB_WR_REG_MR: what the MR looks like after ib_map_mr_sg(). */
static void shca_wr_reg_mr(const struct ib_send_wr *wr,
			   struct shca_send_wqe *wqe)
{
	const struct ib_reg_wr *reg = reg_wr(wr);

	wqe->reg.iova = reg->mr->iova;
	wqe->reg.length = reg->mr->length;
	wqe->reg.mr_key = reg->mr->lkey;
	wqe->reg.key = reg->key;
	wqe->reg.access = reg->access;
	/* a bad page size is refused when the WQE executes */
	wqe->reg.page_shift = is_power_of_2(reg->mr->page_size) ?
			      ilog2(reg->mr->page_size) : 0;
}

/* The transport part of a WQE: AH for UD, remote memory for RC/UC. */
static void shca_wr_remote(struct shca_qp *qp, const struct ib_send_wr *wr,
			   struct shca_send_wqe *wqe)
{
	switch (wqe->opcode) {
	case SHCA_OP_RDMA_WRITE:
	case SHCA_OP_RDMA_WRITE_WITH_IMM:
	case SHCA_OP_RDMA_READ:
		wqe->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rdma.rkey = rdma_wr(wr)->rkey;
		return;
	case SHCA_OP_ATOMIC_CMP_AND_SWP:
	case SHCA_OP_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->atomic.swap = atomic_wr(wr)->swap;
		wqe->atomic.rkey = atomic_wr(wr)->rkey;
		return;
	case SHCA_OP_REG_MR:
		shca_wr_reg_mr(wr, wqe);
		return;
	default:
		break;
	}
	if (shca_qp_is_conn(qp->ibqp.qp_type) ||
	    qp->ibqp.qp_type == IB_QPT_RAW_PACKET)
		return;		/* no address handle */
	wqe->ud.ah_handle = to_sah(ud_wr(wr)->ah)->handle;
	wqe->ud.remote_qpn = ud_wr(wr)->remote_qpn;
	wqe->ud.remote_qkey = ud_wr(wr)->remote_qkey;
}

static bool shca_wr_may_inline(u8 opcode)
{
	return opcode != SHCA_OP_RDMA_READ &&
	       opcode != SHCA_OP_ATOMIC_CMP_AND_SWP &&
	       opcode != SHCA_OP_ATOMIC_FETCH_AND_ADD;
}

/* Translate one work request into the WQE at kprod; sq_lock held. */
static int shca_post_one_send(struct shca_qp *qp, const struct ib_send_wr *wr)
{
	bool flush = READ_ONCE(qp->state) == IB_QPS_ERR;
	struct shca_ring *ring = &qp->sq.ring;
	int opcode = shca_wr_opcode(qp, wr->opcode);
	struct shca_send_wqe *wqe;

	lockdep_assert_held(&qp->sq_lock);
	/* in the error state anything goes: it is flushed (ib_drain_sq) */
	if (flush)
		opcode = SHCA_OP_SEND;
	if (opcode < 0 || wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge) {
		ibdev_dbg(qp->ibqp.device, "qp %u: bad send wr opcode %d\n",
			  qp->ibqp.qp_num, wr->opcode);
		return -EINVAL;
	}
	/* pairs with the engine's release of cons: slots are free */
	if (shca_ring_idx_full(ring->kprod, smp_load_acquire(&ring->ctl->cons),
			       ring->entries))
		return -ENOMEM;
	wqe = shca_ring_entry(ring, ring->kprod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = opcode;
	wqe->flags = shca_wr_flags(wr->send_flags);
	if (flush)
		return 0;	/* only wr_id matters; ud_wr() may not apply */
	if (opcode == SHCA_OP_SEND_WITH_INV || opcode == SHCA_OP_LOCAL_INV)
		wqe->ex = wr->ex.invalidate_rkey;
	else
		wqe->ex = (__force u32)wr->ex.imm_data;
	shca_wr_remote(qp, wr, wqe);
	if (opcode == SHCA_OP_REG_MR || opcode == SHCA_OP_LOCAL_INV)
		return 0;	/* no data */
	if ((wr->send_flags & IB_SEND_INLINE) && shca_wr_may_inline(opcode))
		return shca_wr_inline(qp, wr, wqe);
	wqe->num_sge = wr->num_sge;
	shca_wqe_put_sges((struct shca_sge *)(wqe + 1), wr->sg_list,
			  wr->num_sge);
	return 0;
}

/*
 * Kernel QP post_send (UD, GSI, RC, UC): WQEs go to the same ring format the
 * provider uses, then the engine is kicked unless it is active.
 * Context: any, does not sleep.
 */
int shca_post_send_kernel(struct shca_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	struct shca_ring *ring = &qp->sq.ring;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		err = shca_post_one_send(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
		ring->kprod++;
	}
	/* WQEs are written before the engine can see the new prod */
	smp_store_release(&ring->ctl->prod, ring->kprod);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	smp_mb();	/* prod visible before we look at the engine's flag */
	if (!(READ_ONCE(ring->ctl->flags) & SHCA_RING_F_ENGINE_ACTIVE))
		shca_qp_queue(qp, &qp->sq_work);
	return err;
}
