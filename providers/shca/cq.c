// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.
 *
 * The CQE ring is produced by the kernel and consumed here (shca-abi.h):
 * prod is loaded with acquire before an entry is read, the entry is
 * copied out and validated, and cons is published with release once the
 * entries are no longer needed.  poll_cq and the extended poll API run
 * under cq->lock and never sleep.
 *
 * Arming: with a kernel that reads the arm word of the CQ's ctl
 * (SHCA_CREATE_CQ_RESP_CMASK_ARM), ibv_req_notify_cq() sets it and makes
 * no system call; the kernel takes it when it next writes a CQE
 * (shca-abi.h).  Otherwise it is the uverbs command.
 *
 * Tag matching: the completions of a TM SRQ (SHCA_CQE_F_TM) come to its
 * CQ with the IBV_WC_TM_* opcodes and statuses, the TM flags and the
 * TMH's tag and app_ctx (ibv_wc_read_tm_info()).  Reading one that
 * releases a tag handle gives it back to its SRQ (tm.c).  Their smac and
 * vlan_id bytes hold tm_srqn instead; neither is reported by any path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

/* ------------------------------------------------------------------ */
/* Reading the ring                                                   */
/* ------------------------------------------------------------------ */

/**
 * shca_cqe_read - copy out the entry at consumer index @cons
 * @ring: a mapped CQ ring
 * @cons: our private consumer index
 * @out: receives a private copy of the entry
 *
 * Return: 0, ENOENT if the ring is empty, or EIO if the published producer
 * index is impossible (more than a full ring ahead of us).
 */
int shca_cqe_read(struct shca_ring *ring, uint32_t cons, struct shca_cqe *out)
{
	uint32_t prod = __atomic_load_n(&ring->ctl->prod, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - cons;

	if (!avail)
		return ENOENT;
	if (avail > ring->mask + 1)
		return EIO;
	memcpy(out, ring->entries + ((size_t)(cons & ring->mask) << ring->entry_shift),
	       sizeof(*out));
	return 0;
}

static bool shca_wc_opcode_valid(const struct shca_cqe *cqe)
{
	switch (cqe->opcode) {
	case IBV_WC_SEND:
	case IBV_WC_RDMA_WRITE:
	case IBV_WC_RDMA_READ:
	case IBV_WC_COMP_SWAP:
	case IBV_WC_FETCH_ADD:
	case IBV_WC_BIND_MW:
	case IBV_WC_LOCAL_INV:
	case IBV_WC_TSO:
	case IBV_WC_ATOMIC_WRITE:
	case SHCA_WC_FLUSH:
	case IBV_WC_RECV:
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return true;
	case SHCA_WC_TM_ADD:
	case SHCA_WC_TM_DEL:
	case SHCA_WC_TM_SYNC:
	case SHCA_WC_TM_RECV:
	case SHCA_WC_TM_NO_TAG:
		return cqe->flags & SHCA_CQE_F_TM;
	default:
		return false;
	}
}

#define SHCA_CQE_TM_F_KNOWN                                                    \
	(SHCA_CQE_TM_F_MATCH | SHCA_CQE_TM_F_DATA_VALID |                      \
	 SHCA_CQE_TM_F_SYNC_REQ | SHCA_CQE_TM_F_RELEASE)

/**
 * shca_cqe_sanitize - make a copy of an entry safe to report
 * @cqe: the copy, from shared memory
 *
 * An out-of-range status or opcode is turned into a general error
 * instead of being handed to the application; the tag-matching opcodes
 * and statuses are in range only on a tag-matching completion
 * (SHCA_CQE_F_TM).  An error keeps no flag but SHCA_CQE_F_TM, whose TM
 * flags (SYNC_REQ, RELEASE) still count; unknown TM flags are dropped,
 * and a completion without SHCA_CQE_F_TM has no TM fields at all.
 */
void shca_cqe_sanitize(struct shca_cqe *cqe)
{
	bool tm = cqe->flags & SHCA_CQE_F_TM;

	if (cqe->status > IBV_WC_TM_RNDV_INCOMPLETE ||
	    (!tm && cqe->status >= IBV_WC_TM_ERR))
		cqe->status = IBV_WC_GENERAL_ERR;
	else if (cqe->status == IBV_WC_SUCCESS && !shca_wc_opcode_valid(cqe))
		cqe->status = IBV_WC_GENERAL_ERR;
	if (cqe->status != IBV_WC_SUCCESS)
		cqe->flags &= SHCA_CQE_F_TM;
	if (tm) {
		cqe->tm_flags &= SHCA_CQE_TM_F_KNOWN;
	} else {
		cqe->tm_tag = 0;
		cqe->tm_flags = 0;
		cqe->tm_handle = 0;
		cqe->tm_app_ctx = 0;
	}
}

/* The wc_flags of a sanitised copy. */
unsigned int shca_cqe_wc_flags(const struct shca_cqe *cqe)
{
	unsigned int flags = 0;

	if (cqe->flags & SHCA_CQE_F_GRH)
		flags |= IBV_WC_GRH;
	if (cqe->flags & SHCA_CQE_F_IP_CSUM_OK)
		flags |= IBV_WC_IP_CSUM_OK;
	if (cqe->flags & SHCA_CQE_F_INV)
		flags |= IBV_WC_WITH_INV;
	else if (cqe->flags & SHCA_CQE_F_IMM)
		flags |= IBV_WC_WITH_IMM;
	if (cqe->tm_flags & SHCA_CQE_TM_F_MATCH)
		flags |= IBV_WC_TM_MATCH;
	if (cqe->tm_flags & SHCA_CQE_TM_F_DATA_VALID)
		flags |= IBV_WC_TM_DATA_VALID;
	if (cqe->tm_flags & SHCA_CQE_TM_F_SYNC_REQ)
		flags |= IBV_WC_TM_SYNC_REQ;
	return flags;
}

/*
 * Fill @wc from a sanitised copy of an entry.  qp_num is passed on, never
 * looked up: the receives of an XRC SRQ name the XRC target QP, which may
 * belong to another process.
 */
void shca_cqe_to_wc(const struct shca_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = shca_cqe_wc_flags(cqe);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

static void shca_cq_publish_cons(struct shca_cq *cq)
{
	__atomic_store_n(&cq->ring.ctl->cons, cq->cons, __ATOMIC_RELEASE);
}

/* An empty ring that the kernel flagged as overflowed is an error. */
static int shca_cq_empty_status(struct shca_cq *cq, int ret)
{
	if (ret == ENOENT &&
	    __atomic_load_n(&cq->ring.ctl->flags, __ATOMIC_ACQUIRE) &
	    SHCA_RING_F_ERROR)
		return EIO;
	return ret;
}

int shca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_cqe cqe;
	int ret = 0;
	int n;

	pthread_spin_lock(&cq->lock);
	for (n = 0; n < num_entries; n++) {
		ret = shca_cqe_read(&cq->ring, cq->cons, &cqe);
		if (ret)
			break;
		shca_cqe_sanitize(&cqe);
		shca_cq_tm_release(cq, &cqe);
		shca_cqe_to_wc(&cqe, &wc[n]);
		cq->cons++;
	}
	if (n)
		shca_cq_publish_cons(cq);
	else
		ret = shca_cq_empty_status(cq, ret);
	pthread_spin_unlock(&cq->lock);

	if (!n && ret == EIO)
		return -EIO;
	return n;
}

static void *shca_cqe_slot(struct shca_ring *ring, uint32_t idx)
{
	return ring->entries + ((size_t)(idx & ring->mask) << ring->entry_shift);
}

/**
 * shca_cq_clean - drop the unpolled completions of one QP
 * @cq: a CQ the QP uses
 * @qpn: the QP's number
 *
 * Called once ibv_modify_qp() has moved the QP to RESET: its completions
 * still in the ring (e.g. flush errors of the error state it left) must
 * not be reported to the next user of the QP.  Only the entries between
 * our consumer index and a snapshot of the producer index are touched,
 * which the kernel no longer writes: walking from the newest to the
 * oldest, the entries kept slide towards the producer over the ones
 * dropped, and the consumer index moves past the freed slots.
 *
 * Tag-matching completions stay: they tell of the SRQ's tag list (tags
 * consumed, unexpected messages to count for the next SYNC), which
 * outlives the QP, and some give a tag handle back when polled.
 */
void shca_cq_clean(struct shca_cq *cq, uint32_t qpn)
{
	struct shca_cqe cqe;
	uint32_t prod, src, dst;

	pthread_spin_lock(&cq->lock);
	prod = __atomic_load_n(&cq->ring.ctl->prod, __ATOMIC_ACQUIRE);
	if (prod - cq->cons > cq->ring.mask + 1) {
		/* impossible producer index: poll reports the broken ring */
		pthread_spin_unlock(&cq->lock);
		return;
	}
	for (src = prod, dst = prod; src != cq->cons;) {
		src--;
		memcpy(&cqe, shca_cqe_slot(&cq->ring, src), sizeof(cqe));
		if (cqe.qp_num == qpn && !(cqe.flags & SHCA_CQE_F_TM))
			continue;
		dst--;
		if (dst != src)
			memcpy(shca_cqe_slot(&cq->ring, dst), &cqe, sizeof(cqe));
	}
	if (dst != cq->cons) {
		cq->cons = dst;
		shca_cq_publish_cons(cq);
	}
	pthread_spin_unlock(&cq->lock);
}

/* ------------------------------------------------------------------ */
/* Extended poll API                                                  */
/* ------------------------------------------------------------------ */

/* Load the entry at cq->cons into cq->cur; cq->lock is held. */
static int shca_cq_load_cur(struct shca_cq *cq)
{
	int ret = shca_cqe_read(&cq->ring, cq->cons, &cq->cur);

	cq->cur_valid = !ret;
	if (ret)
		return shca_cq_empty_status(cq, ret);
	shca_cqe_sanitize(&cq->cur);
	shca_cq_tm_release(cq, &cq->cur);
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = cq->cur.status;
	return 0;
}

static int shca_start_poll(struct ibv_cq_ex *ibcq,
			   struct ibv_poll_cq_attr *attr)
{
	struct shca_cq *cq = ex_to_shca_cq(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = shca_cq_load_cur(cq);
	if (ret) {
		/* end_poll is not called after a failed start_poll. */
		pthread_spin_unlock(&cq->lock);
		return ret;
	}
	return 0;
}

static int shca_next_poll(struct ibv_cq_ex *ibcq)
{
	struct shca_cq *cq = ex_to_shca_cq(ibcq);

	if (cq->cur_valid)
		cq->cons++;
	return shca_cq_load_cur(cq);
}

static void shca_end_poll(struct ibv_cq_ex *ibcq)
{
	struct shca_cq *cq = ex_to_shca_cq(ibcq);

	/* The entry returned last is consumed too. */
	if (cq->cur_valid)
		cq->cons++;
	cq->cur_valid = false;
	shca_cq_publish_cons(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode shca_read_opcode(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.opcode;
}

static uint32_t shca_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.vendor_err;
}

static uint32_t shca_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.byte_len;
}

static __be32 shca_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.imm_data;
}

static uint32_t shca_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.qp_num;
}

static uint32_t shca_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.src_qp;
}

static unsigned int shca_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return shca_cqe_wc_flags(&ex_to_shca_cq(ibcq)->cur);
}

static uint32_t shca_read_slid(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.slid;
}

static uint8_t shca_read_sl(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.sl;
}

static uint8_t shca_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.dlid_path_bits;
}

/*
 * The TCI of the C-VLAN tag stripped from a raw receive (a WQ with
 * IBV_WQ_FLAGS_CVLAN_STRIPPING); 0 if none was.
 */
static uint16_t shca_read_cvlan(struct ibv_cq_ex *ibcq)
{
	struct shca_cq *cq = ex_to_shca_cq(ibcq);

	return (cq->cur.flags & SHCA_CQE_F_CVLAN) ? cq->cur.vlan_id : 0;
}

/* Zero on a completion without SHCA_CQE_F_TM (shca_cqe_sanitize()). */
static void shca_read_tm_info(struct ibv_cq_ex *ibcq,
			      struct ibv_wc_tm_info *tm_info)
{
	struct shca_cq *cq = ex_to_shca_cq(ibcq);

	tm_info->tag = cq->cur.tm_tag;
	tm_info->priv = cq->cur.tm_app_ctx;
}

void shca_cq_set_ex_ops(struct ibv_cq_ex *cq)
{
	cq->start_poll = shca_start_poll;
	cq->next_poll = shca_next_poll;
	cq->end_poll = shca_end_poll;
	cq->read_opcode = shca_read_opcode;
	cq->read_vendor_err = shca_read_vendor_err;
	cq->read_byte_len = shca_read_byte_len;
	cq->read_imm_data = shca_read_imm_data;
	cq->read_qp_num = shca_read_qp_num;
	cq->read_src_qp = shca_read_src_qp;
	cq->read_wc_flags = shca_read_wc_flags;
	cq->read_slid = shca_read_slid;
	cq->read_sl = shca_read_sl;
	cq->read_dlid_path_bits = shca_read_dlid_path_bits;
	cq->read_tm_info = shca_read_tm_info;
	cq->read_cvlan = shca_read_cvlan;
}

/* ------------------------------------------------------------------ */
/* Create, resize, destroy                                            */
/* ------------------------------------------------------------------ */

/**
 * shca_cq_check_attr - validate the attributes of ibv_create_cq_ex()
 * @attr: the caller's attributes
 *
 * Return: 0, or EOPNOTSUPP for a creation flag or a wc_flags field we do
 * not provide (we provide the standard ones, the TM info and the CVLAN).
 */
int shca_cq_check_attr(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~IBV_CQ_INIT_ATTR_MASK_FLAGS)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags)
		return EOPNOTSUPP;
	if (attr->wc_flags & ~(uint64_t)(IBV_WC_STANDARD_FLAGS |
					 IBV_WC_EX_WITH_TM_INFO |
					 IBV_WC_EX_WITH_CVLAN))
		return EOPNOTSUPP;
	return 0;
}

/*
 * Map the ring the kernel described and make it the CQ's ring.  It must
 * hold at least the number of entries the kernel reported to the user.
 * On failure the CQ's current ring is left alone.
 */
static int shca_cq_map(struct shca_cq *cq, const struct shca_ring_info *info,
		       int cmd_fd, int min_entries)
{
	struct shca_ring ring;
	int ret;

	ret = shca_ring_map(&ring, info, sizeof(struct shca_cqe), cmd_fd);
	if (ret)
		return ret;
	if (min_entries < 0 || (uint64_t)ring.mask + 1 < (uint64_t)min_entries) {
		shca_ring_unmap(&ring);
		return EPROTO;
	}
	cq->ring = ring;
	/* The kernel initialises the indices; from here on cons is ours. */
	cq->cons = __atomic_load_n(&ring.ctl->cons, __ATOMIC_RELAXED);
	cq->cur_valid = false;
	return 0;
}

static struct shca_cq *shca_cq_create(struct ibv_context *ctx,
				      const struct ibv_cq_init_attr_ex *attr)
{
	struct ushca_create_cq_resp resp = {};
	struct ushca_create_cq cmd = {};
	struct shca_cq *cq;
	int ret;

	ret = shca_cq_check_attr(attr);
	if (ret)
		goto err;
	ret = ENOMEM;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		goto err;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&cq->tm_lock, PTHREAD_PROCESS_PRIVATE);

	ret = ibv_cmd_create_cq_ex(ctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (ret)
		goto err_free;
	ret = shca_cq_map(cq, &resp.ring, ctx->cmd_fd, cq->vcq.cq.cqe);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx), "CQ %u: bad ring from kernel\n",
			  resp.cqn);
		goto err_destroy;
	}
	cq->cqn = resp.cqn;
	cq->arm_word = resp.comp_mask & SHCA_CREATE_CQ_RESP_CMASK_ARM;
	shca_cq_set_ex_ops(&cq->vcq.cq_ex);
	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	pthread_spin_destroy(&cq->tm_lock);
	pthread_spin_destroy(&cq->lock);
	free(cq);
err:
	errno = ret;
	return NULL;
}

struct ibv_cq *shca_create_cq(struct ibv_context *ctx, int cqe,
			      struct ibv_comp_channel *channel, int vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = (uint32_t)cqe,
		.channel = channel,
		.comp_vector = (uint32_t)vector,
	};
	struct shca_cq *cq;

	if (cqe <= 0 || vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = shca_cq_create(ctx, &attr);
	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *ctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct shca_cq *cq = shca_cq_create(ctx, attr);

	return cq ? &cq->vcq.cq_ex : NULL;
}

/**
 * shca_req_notify_cq - ibv_req_notify_cq()
 * @ibcq: the CQ
 * @solicited_only: an event for a solicited or failed completion only
 *
 * Sets the request in the arm word with an atomic OR (a NEXT already
 * there stays: it wins over SOLICITED), then a full barrier orders it
 * before the caller's next poll reads prod: either the kernel sees the
 * arm when it writes a CQE, or that poll sees the CQE.  cq->lock keeps a
 * resize from moving the ring under us.
 *
 * Return: 0, or the command's error on a kernel without the arm word.
 */
int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct shca_cq *cq = to_shca_cq(ibcq);

	if (!cq->arm_word)
		return ibv_cmd_req_notify_cq(ibcq, solicited_only);
	pthread_spin_lock(&cq->lock);
	__atomic_fetch_or(&cq->ring.ctl->arm,
			  solicited_only ? SHCA_CQ_ARM_SOLICITED :
					   SHCA_CQ_ARM_NEXT,
			  __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/*
 * The kernel moves the outstanding entries into a new ring and describes
 * it in the response; pollers are held off while the mapping changes.
 */
int shca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct ushca_resize_cq_resp resp = {};
	struct ushca_resize_cq cmd = {};
	struct shca_ring old;
	int ret;

	pthread_spin_lock(&cq->lock);
	old = cq->ring;
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = shca_cq_map(cq, &resp.ring, ibcq->context->cmd_fd,
				  ibcq->cqe);
	if (!ret)
		shca_ring_unmap(&old);
	pthread_spin_unlock(&cq->lock);
	if (ret)
		verbs_debug(verbs_get_ctx(ibcq->context),
			    "CQ %u: resize to %d failed: %d\n", cq->cqn, cqe,
			    ret);
	return ret;
}

/* CQ moderation (cq_count, cq_period in usec) lives in the kernel. */
int shca_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}

int shca_destroy_cq(struct ibv_cq *ibcq)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	shca_ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->tm_lock);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}
