// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tag-matching SRQs (IBV_SRQT_TM): the list operations of
 * ibv_post_srq_ops() and the tag handles they name.
 *
 * A TM SRQ has, besides its ordinary receive ring (unexpected messages,
 * posted with ibv_post_srq_recv() like any SRQ), a ring of list
 * operations (struct shca_tm_op_wqe, see shca-abi.h).  We write the
 * operations of one call, publish prod and ring the doorbell (a
 * post_srq_recv command with no work request); the kernel executes every
 * published operation before the command returns, writes each one's
 * outcome into its result byte and advances cons.  So between calls the
 * ring is empty, and one call holds at most tm_max_ops operations.
 *
 * Handles.  We hand out the tag handles, 0 .. max_tags - 1, from a FIFO
 * of free ones (struct shca_tm_handles; a handle is "busy" from the ADD
 * that took it until it comes back).  One comes back when
 *  - a TAG_ADD fails (its result is not success) or is withdrawn
 *    because the doorbell did not get to it,
 *  - a TAG_DEL succeeds (result success), or
 *  - a completion polled from the SRQ's CQ carries SHCA_CQE_F_TM and
 *    SHCA_CQE_TM_F_RELEASE for it (shca_cq_tm_release(), under the CQ's
 *    tm_lock, which also keeps the SRQ from being freed meanwhile).
 * Everything the kernel wrote (results, handles and SRQ numbers in
 * completions) is checked before it is used: a handle that is out of
 * range or not busy is ignored.
 *
 * Locks: tm->lock (a mutex: the doorbell is a system call) serialises
 * posters; handles.lock, a spinlock taken last and held briefly, guards
 * the handles against pollers.  Pollers take cq->lock, then
 * cq->tm_lock, then handles.lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

/* The ABI repeats libibverbs' numbers; make sure they agree. */
#define SHCA_SAME(a, b) static_assert((int)(a) == (int)(b), #a)
SHCA_SAME(SHCA_WC_TM_ADD, IBV_WC_TM_ADD);
SHCA_SAME(SHCA_WC_TM_DEL, IBV_WC_TM_DEL);
SHCA_SAME(SHCA_WC_TM_SYNC, IBV_WC_TM_SYNC);
SHCA_SAME(SHCA_WC_TM_RECV, IBV_WC_TM_RECV);
SHCA_SAME(SHCA_WC_TM_NO_TAG, IBV_WC_TM_NO_TAG);
SHCA_SAME(SHCA_WC_TM_ERR, IBV_WC_TM_ERR);
SHCA_SAME(SHCA_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RNDV_INCOMPLETE);
static_assert(sizeof(struct shca_tm_op_wqe) == 48, "TM op entry header");

/* ------------------------------------------------------------------ */
/* Handles                                                            */
/* ------------------------------------------------------------------ */

/**
 * shca_tm_handles_init - a pool of @max handles, all free
 * @h: the pool
 * @max: the number of handles, 1 .. SHCA_TM_MAX_HANDLES
 *
 * Return: 0, EINVAL for a bad @max or ENOMEM.
 */
int shca_tm_handles_init(struct shca_tm_handles *h, uint32_t max)
{
	uint32_t i;

	memset(h, 0, sizeof(*h));
	if (!max || max > SHCA_TM_MAX_HANDLES)
		return EINVAL;
	h->fifo = calloc(max, sizeof(*h->fifo));
	h->busy = calloc(max, sizeof(*h->busy));
	if (!h->fifo || !h->busy) {
		free(h->fifo);
		free(h->busy);
		h->fifo = NULL;
		h->busy = NULL;
		return ENOMEM;
	}
	for (i = 0; i < max; i++)
		h->fifo[i] = i;
	h->max = max;
	h->nfree = max;
	pthread_spin_init(&h->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

void shca_tm_handles_destroy(struct shca_tm_handles *h)
{
	if (!h->fifo)
		return;
	pthread_spin_destroy(&h->lock);
	free(h->fifo);
	free(h->busy);
	h->fifo = NULL;
	h->busy = NULL;
}

/**
 * shca_tm_handle_get - take the free handle that waited longest
 * @h: the pool
 * @handle: receives the handle
 *
 * Handing out the oldest free handle keeps a just-released one out of
 * use as long as possible.
 *
 * Return: 0, or ENOMEM if every handle is busy.
 */
int shca_tm_handle_get(struct shca_tm_handles *h, uint32_t *handle)
{
	uint32_t v;

	pthread_spin_lock(&h->lock);
	if (!h->nfree) {
		pthread_spin_unlock(&h->lock);
		return ENOMEM;
	}
	v = h->fifo[h->head];
	h->head = h->head + 1 == h->max ? 0 : h->head + 1;
	h->nfree--;
	h->busy[v] = 1;
	pthread_spin_unlock(&h->lock);
	*handle = v;
	return 0;
}

/**
 * shca_tm_handle_put - give a busy handle back
 * @h: the pool
 * @handle: the handle, possibly from the kernel
 *
 * Return: true if @handle was busy; false (nothing changes) if it is out
 * of range or free.
 */
bool shca_tm_handle_put(struct shca_tm_handles *h, uint32_t handle)
{
	uint32_t tail;

	if (handle >= h->max)
		return false;
	pthread_spin_lock(&h->lock);
	if (!h->busy[handle]) {
		pthread_spin_unlock(&h->lock);
		return false;
	}
	h->busy[handle] = 0;
	/* nfree < max: @handle was busy */
	tail = h->head + h->nfree;
	if (tail >= h->max)
		tail -= h->max;
	h->fifo[tail] = handle;
	h->nfree++;
	pthread_spin_unlock(&h->lock);
	return true;
}

/* Is @handle one we handed out and did not get back yet? */
bool shca_tm_handle_busy(struct shca_tm_handles *h, uint32_t handle)
{
	bool busy;

	if (handle >= h->max)
		return false;
	pthread_spin_lock(&h->lock);
	busy = h->busy[handle];
	pthread_spin_unlock(&h->lock);
	return busy;
}

/* ------------------------------------------------------------------ */
/* Creation                                                           */
/* ------------------------------------------------------------------ */

/* The stride a tm_ops entry needs: header and tm_max_sge SGEs. */
static size_t shca_tm_op_size(uint32_t max_sge)
{
	return sizeof(struct shca_tm_op_wqe) +
	       (size_t)max_sge * sizeof(struct shca_sge);
}

/**
 * shca_tm_check_resp - is the TM part of a create response usable?
 * @want: the caps the caller asked for
 * @resp: the kernel's response
 *
 * It must be there, grant at least what was asked for, name no more
 * handles than a completion can carry (tm_handle is 16 bits), describe
 * SGE counts a WQE can carry, and its ring must hold tm_max_ops entries
 * (the ring's own geometry is checked when it is mapped).
 *
 * Return: 0 or EPROTO.
 */
int shca_tm_check_resp(const struct ibv_tm_cap *want,
		       const struct shca_create_srq_resp *resp)
{
	if (!(resp->comp_mask & SHCA_CREATE_SRQ_RESP_CMASK_TM))
		return EPROTO;
	if (resp->tm_max_tags < want->max_num_tags || !resp->tm_max_tags ||
	    resp->tm_max_tags > SHCA_TM_MAX_HANDLES)
		return EPROTO;
	if (resp->tm_max_ops < want->max_ops || !resp->tm_max_ops ||
	    resp->tm_max_ops > resp->tm_ops.entries)
		return EPROTO;
	if (resp->tm_max_sge > UINT8_MAX)
		return EPROTO;
	return 0;
}

static int shca_tm_doorbell(struct shca_srq *srq)
{
	struct ibv_recv_wr *bad;

	return ibv_cmd_post_srq_recv(&srq->vsrq.srq, NULL, &bad);
}

/**
 * shca_tm_create - the TM state of a new TM SRQ
 * @srq: the SRQ, its basic part set up
 * @cq: the SRQ's CQ
 * @want: the caps the caller asked for
 * @resp: the kernel's response
 * @cmd_fd: the uverbs file the ring is mapped from
 *
 * Checks the response, maps the operation ring and sets srq->tm; the SRQ
 * is not yet known to @cq (shca_cq_add_tm_srq()).
 *
 * Return: 0, EPROTO for a response that is not what we asked for, or
 * ENOMEM / the mmap(2) error.
 */
int shca_tm_create(struct shca_srq *srq, struct shca_cq *cq,
		   const struct ibv_tm_cap *want,
		   const struct shca_create_srq_resp *resp, int cmd_fd)
{
	struct shca_tm *tm;
	int ret;

	ret = shca_tm_check_resp(want, resp);
	if (ret)
		return ret;
	tm = calloc(1, sizeof(*tm));
	if (!tm)
		return ENOMEM;
	tm->ops = calloc(resp->tm_max_ops, sizeof(*tm->ops));
	if (!tm->ops) {
		ret = ENOMEM;
		goto err_free;
	}
	ret = shca_tm_handles_init(&tm->handles, resp->tm_max_tags);
	if (ret)
		goto err_free;
	ret = shca_ring_map(&tm->ring, &resp->tm_ops,
			    shca_tm_op_size(resp->tm_max_sge), cmd_fd);
	if (ret) {
		/* EINVAL from the checks: a ring the kernel got wrong */
		if (ret == EINVAL)
			ret = EPROTO;
		goto err_handles;
	}
	/* The kernel initialises the indices; from here on prod is ours. */
	tm->prod = __atomic_load_n(&tm->ring.ctl->prod, __ATOMIC_RELAXED);
	tm->max_ops = resp->tm_max_ops;
	tm->max_sge = resp->tm_max_sge;
	tm->cq = cq;
	tm->doorbell = shca_tm_doorbell;
	pthread_mutex_init(&tm->lock, NULL);
	srq->tm = tm;
	return 0;

err_handles:
	shca_tm_handles_destroy(&tm->handles);
err_free:
	free(tm->ops);
	free(tm);
	return ret;
}

/* Unmap and free srq->tm; the SRQ is no longer on its CQ's list. */
void shca_tm_destroy(struct shca_srq *srq)
{
	struct shca_tm *tm = srq->tm;

	if (!tm)
		return;
	shca_ring_unmap(&tm->ring);
	shca_tm_handles_destroy(&tm->handles);
	pthread_mutex_destroy(&tm->lock);
	free(tm->ops);
	free(tm);
	srq->tm = NULL;
}

/* ------------------------------------------------------------------ */
/* ibv_post_srq_ops()                                                 */
/* ------------------------------------------------------------------ */

static struct shca_tm_op_wqe *shca_tm_slot(struct shca_tm *tm, uint32_t idx)
{
	return (struct shca_tm_op_wqe *)(tm->ring.entries +
		((size_t)(idx & tm->ring.mask) << tm->ring.entry_shift));
}

static uint8_t shca_tm_op_flags(int flags)
{
	return (flags & IBV_OPS_SIGNALED ? SHCA_TM_OP_F_SIGNALED : 0) |
	       (flags & IBV_OPS_TM_SYNC ? SHCA_TM_OP_F_SYNC : 0);
}

/*
 * Check one operation and write it as the @k-th of this call, at our
 * producer index; tm->lock held.  An ADD takes a handle and returns it in
 * wr->tm.handle.
 */
static int shca_tm_post_one(struct shca_tm *tm, struct ibv_ops_wr *wr,
			    uint32_t k)
{
	struct shca_tm_op_wqe *op;
	uint32_t handle = 0;
	uint8_t opcode;
	int nsge = 0;

	switch (wr->opcode) {
	case IBV_WR_TAG_ADD:
		nsge = wr->tm.add.num_sge;
		if (nsge < 0 || (uint32_t)nsge > tm->max_sge)
			return EINVAL;
		opcode = SHCA_OP_TM_ADD;
		break;
	case IBV_WR_TAG_DEL:
		if (!shca_tm_handle_busy(&tm->handles, wr->tm.handle))
			return EINVAL;
		handle = wr->tm.handle;
		opcode = SHCA_OP_TM_DEL;
		break;
	case IBV_WR_TAG_SYNC:
		opcode = SHCA_OP_TM_SYNC;
		break;
	default:
		return EINVAL;
	}
	if (k >= tm->max_ops)
		return ENOMEM;
	if (opcode == SHCA_OP_TM_ADD &&
	    shca_tm_handle_get(&tm->handles, &handle))
		return ENOMEM;

	op = shca_tm_slot(tm, tm->prod);
	memset(op, 0, sizeof(*op));
	op->wr_id = wr->wr_id;
	op->opcode = opcode;
	op->flags = shca_tm_op_flags(wr->flags);
	op->handle = handle;
	if (wr->flags & IBV_OPS_TM_SYNC)
		op->unexpected_cnt = wr->tm.unexpected_cnt;
	if (opcode == SHCA_OP_TM_ADD) {
		op->num_sge = (uint8_t)nsge;
		op->recv_wr_id = wr->tm.add.recv_wr_id;
		op->tag = wr->tm.add.tag;
		op->mask = wr->tm.add.mask;
		shca_wqe_put_sges((struct shca_sge *)(op + 1),
				  wr->tm.add.sg_list, nsge);
		wr->tm.handle = handle;
	}
	tm->ops[k].opcode = opcode;
	tm->ops[k].handle = handle;
	return 0;
}

/**
 * shca_tm_finish - account for the operations of one call after its doorbell
 * @tm: the SRQ's TM state, tm->lock held
 * @start: our producer index before the call
 *
 * The kernel executed the operations up to its consumer index; their
 * results give back the handles of failed ADDs and successful DELs.  Any
 * it did not get to (its doorbell failed) are withdrawn: prod goes back
 * to cons, and their ADDs' handles come back too.  A consumer index
 * outside what we published means nothing was executed.
 *
 * Return: the number of operations of this call the kernel executed.
 */
uint32_t shca_tm_finish(struct shca_tm *tm, uint32_t start)
{
	uint32_t cons = __atomic_load_n(&tm->ring.ctl->cons, __ATOMIC_ACQUIRE);
	uint32_t posted = tm->prod - start;
	uint32_t done = cons - start;
	uint32_t k;
	uint8_t res;

	if (done > posted)
		done = 0;
	for (k = 0; k < posted; k++) {
		if (k < done)
			res = __atomic_load_n(&shca_tm_slot(tm, start + k)->
					      result, __ATOMIC_RELAXED);
		else
			res = IBV_WC_WR_FLUSH_ERR;	/* withdrawn */
		if ((tm->ops[k].opcode == SHCA_OP_TM_ADD && res) ||
		    (tm->ops[k].opcode == SHCA_OP_TM_DEL && !res && k < done))
			shca_tm_handle_put(&tm->handles, tm->ops[k].handle);
	}
	if (done != posted) {
		tm->prod = start + done;
		__atomic_store_n(&tm->ring.ctl->prod, tm->prod,
				 __ATOMIC_RELEASE);
	}
	return done;
}

/**
 * shca_post_srq_ops - ibv_post_srq_ops()
 * @ibsrq: a TM SRQ
 * @wr: the list operations
 * @bad_wr: the first one not posted, on error
 *
 * The operations before a bad one are posted (the doorbell rings for
 * them); if the doorbell fails, the ones the kernel did not execute are
 * not posted either.
 *
 * Return: 0; EINVAL for a SRQ that is not a TM SRQ, an unknown opcode,
 * too many SGEs or the DEL of a handle that is not handed out; ENOMEM for
 * more than max_ops operations in one call or an ADD with no free handle;
 * the doorbell's error (EIO if it claimed success) when the kernel did not
 * execute them all.
 */
int shca_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr,
		      struct ibv_ops_wr **bad_wr)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	struct shca_tm *tm = srq->tm;
	struct ibv_ops_wr *w;
	uint32_t start, done, k;
	int ret = 0, db;

	if (!tm) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_mutex_lock(&tm->lock);
	start = tm->prod;
	for (w = wr, k = 0; w; w = w->next, k++) {
		ret = shca_tm_post_one(tm, w, k);
		if (ret) {
			*bad_wr = w;
			break;
		}
		tm->prod++;
	}
	if (tm->prod != start) {
		__atomic_store_n(&tm->ring.ctl->prod, tm->prod,
				 __ATOMIC_RELEASE);
		db = tm->doorbell(srq);
		done = shca_tm_finish(tm, start);
		if (done != k) {
			for (w = wr; done--; w = w->next)
				;
			*bad_wr = w;
			ret = db ? db : EIO;
		}
	}
	pthread_mutex_unlock(&tm->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The SRQ's CQ                                                       */
/* ------------------------------------------------------------------ */

/* A TM SRQ starts taking handles back from @cq's completions. */
void shca_cq_add_tm_srq(struct shca_cq *cq, struct shca_srq *srq)
{
	pthread_spin_lock(&cq->tm_lock);
	srq->tm->cq_next = cq->tm_srqs;
	cq->tm_srqs = srq;
	pthread_spin_unlock(&cq->tm_lock);
}

/*
 * The completions of @srqn not polled yet no longer release anything: a
 * later SRQ with the same number must not get handles back from them.
 * Entries between cons and prod are no longer written by the kernel.
 */
static void shca_cq_tm_forget(struct shca_cq *cq, uint32_t srqn)
{
	struct shca_ring *r = &cq->ring;
	struct shca_cqe *e;
	uint32_t prod, i;

	pthread_spin_lock(&cq->lock);
	prod = __atomic_load_n(&r->ctl->prod, __ATOMIC_ACQUIRE);
	if (prod - cq->cons <= r->mask + 1) {
		for (i = cq->cons; i != prod; i++) {
			e = (struct shca_cqe *)(r->entries +
				((size_t)(i & r->mask) << r->entry_shift));
			if ((e->flags & SHCA_CQE_F_TM) && e->tm_srqn == srqn)
				e->tm_flags &= (uint16_t)~SHCA_CQE_TM_F_RELEASE;
		}
	}
	pthread_spin_unlock(&cq->lock);
}

/* The SRQ is going away: off @cq's list, and nothing left to release. */
void shca_cq_del_tm_srq(struct shca_cq *cq, struct shca_srq *srq)
{
	struct shca_srq **p;

	pthread_spin_lock(&cq->tm_lock);
	for (p = &cq->tm_srqs; *p; p = &(*p)->tm->cq_next) {
		if (*p == srq) {
			*p = srq->tm->cq_next;
			break;
		}
	}
	srq->tm->cq_next = NULL;
	pthread_spin_unlock(&cq->tm_lock);
	shca_cq_tm_forget(cq, srq->srqn);
}

/**
 * shca_cq_tm_release - a completion gives a tag handle back
 * @cq: the CQ it was polled from, cq->lock held
 * @cqe: a sanitised copy of the completion
 *
 * Only a completion with SHCA_CQE_F_TM and SHCA_CQE_TM_F_RELEASE gives
 * one back, and not that of a list operation: those return their handles
 * through their results (shca_tm_finish()).  The SRQ is the TM SRQ on
 * @cq named by tm_srqn; an unknown SRQ, or a handle it did not hand out,
 * is ignored.
 */
void shca_cq_tm_release(struct shca_cq *cq, const struct shca_cqe *cqe)
{
	struct shca_srq *srq;

	if (!(cqe->flags & SHCA_CQE_F_TM) ||
	    !(cqe->tm_flags & SHCA_CQE_TM_F_RELEASE))
		return;
	switch (cqe->opcode) {
	case SHCA_WC_TM_ADD:
	case SHCA_WC_TM_DEL:
	case SHCA_WC_TM_SYNC:
		return;
	default:
		break;
	}
	pthread_spin_lock(&cq->tm_lock);
	for (srq = cq->tm_srqs; srq; srq = srq->tm->cq_next) {
		if (srq->srqn == cqe->tm_srqn) {
			shca_tm_handle_put(&srq->tm->handles, cqe->tm_handle);
			break;
		}
	}
	pthread_spin_unlock(&cq->tm_lock);
}
