/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca userspace provider: private state.
 *
 * Posting: ibv_post_send/ibv_post_recv (qp.c) and the ibv_qp_ex work
 * request API (qp_ex.c) write the same WQEs into the mapped rings.
 */
#ifndef SHCA_PROVIDER_H
#define SHCA_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ccan/container_of.h>
#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/shca-abi.h>
#include <kernel-abi/shca-abi.h>

/*
 * Set by CMakeLists.txt from the rdma-core tree we are built in:
 * SHCA_RDMA_CORE_VERSION ("44.0"), SHCA_RDMA_CORE_VERSION_CODE (major *
 * 100 + minor: 4400) and SHCA_LIBIBVERBS_FILE, the file name of that
 * tree's libibverbs ("libibverbs.so.1.14.44.0"), the only libibverbs
 * whose private ABI this provider was built for.
 */
#if !defined(SHCA_RDMA_CORE_VERSION) || \
	!defined(SHCA_RDMA_CORE_VERSION_CODE) || !defined(SHCA_LIBIBVERBS_FILE)
#error "build the shca provider inside rdma-core (scripts/rdma-core.sh build)"
#endif

/*
 * ibv_wr_flush(), IBV_QP_EX_WITH_FLUSH and IBV_WC_FLUSH came with
 * rdma-core 45.0: built against an older tree, the provider offers no
 * FLUSH, but still knows the completion opcode's value (8).
 */
#define SHCA_WC_FLUSH 8
#if SHCA_RDMA_CORE_VERSION_CODE >= 4500
#define SHCA_OPS_FLUSH ((uint64_t)IBV_QP_EX_WITH_FLUSH)
_Static_assert(SHCA_WC_FLUSH == IBV_WC_FLUSH, "IBV_WC_FLUSH");
#else
#define SHCA_OPS_FLUSH ((uint64_t)0)
#endif

/* Commands with driver data, laid out by rdma-core's kernel-abi macros. */
DECLARE_DRV_CMD(ushca_alloc_ucontext, IB_USER_VERBS_CMD_GET_CONTEXT,
		shca_alloc_ucontext_req, shca_alloc_ucontext_resp);
DECLARE_DRV_CMD(ushca_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, shca_alloc_pd_resp);
DECLARE_DRV_CMD(ushca_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, shca_create_ah_resp);
DECLARE_DRV_CMD(ushca_create_cq, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		shca_create_cq_req, shca_create_cq_resp);
DECLARE_DRV_CMD(ushca_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		shca_resize_cq_req, shca_resize_cq_resp);
DECLARE_DRV_CMD(ushca_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		shca_create_qp_req, shca_create_qp_resp);
DECLARE_DRV_CMD(ushca_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		shca_create_srq_req, shca_create_srq_resp);
DECLARE_DRV_CMD(ushca_create_xsrq, IB_USER_VERBS_CMD_CREATE_XSRQ,
		shca_create_srq_req, shca_create_srq_resp);
DECLARE_DRV_CMD(ushca_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		shca_modify_srq_req, empty);

/* XRC SRQ numbers (xrc_remote_srqn in a send WQE) are 24 bits. */
#define SHCA_XRC_SRQN_MAX 0xffffffu

struct shca_device {
	struct verbs_device ibv_dev;
};

struct shca_context {
	struct verbs_context ibv_ctx;
	/* Limits and entry strides from the ALLOC_UCONTEXT response. */
	struct shca_alloc_ucontext_resp limits;
};

struct shca_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

/*
 * A ring mapped from the kernel (see the queue memory model in
 * shca-abi.h).  Everything the kernel told us is validated by
 * shca_ring_map() before it lands here.
 */
struct shca_ring {
	void *map;		/* the whole range mapped, NULL if unmapped */
	size_t map_len;		/* its length, page aligned */
	struct shca_ring_ctl *ctl;
	uint8_t *entries;
	uint32_t mask;		/* entries - 1 */
	uint32_t entry_shift;
};

struct shca_srq;

struct shca_cq {
	struct verbs_cq vcq;
	uint32_t cqn;
	/*
	 * The TM SRQs whose completions come here (linked by tm->cq_next),
	 * so that a polled completion can give a tag handle back to its
	 * SRQ; tm_lock guards the list and keeps its SRQs alive while a
	 * poller uses one.  Taken inside lock, never the other way round.
	 */
	pthread_spinlock_t tm_lock;
	struct shca_srq *tm_srqs;
	/*
	 * lock serialises pollers, arming and resize.  cons is our private
	 * consumer index: we are the only writer of ring.ctl->cons, so we
	 * never read it back from shared memory.
	 */
	pthread_spinlock_t lock;
	struct shca_ring ring;
	uint32_t cons;
	/* Extended poll: copy of the current entry, valid between
	 * start_poll and end_poll.
	 */
	struct shca_cqe cur;
	bool cur_valid;
	/* The kernel reads ring.ctl->arm: arming needs no system call. */
	bool arm_word;
};

/*
 * A work queue we produce into.  prod is our private producer index (we
 * are the only writer of ring.ctl->prod); lock serialises posters.
 */
struct shca_wq {
	pthread_spinlock_t lock;
	struct shca_ring ring;
	uint32_t prod;
	uint32_t max_sge;
};

/*
 * sq is mapped for RC, UC, UD and XRC_SEND; rq for RC, UC and UD without
 * an SRQ.  An XRC_RECV QP, created here or opened with ibv_open_qp(), has
 * neither: its receives come from XRC SRQs and it posts nothing.
 */
struct shca_qp {
	struct verbs_qp vqp;
	struct shca_wq sq;
	struct shca_wq rq;
	uint32_t max_inline_data;
	/* RAW_PACKET: the IBV_SEND_* flags its sends take (flow.c) */
	unsigned int raw_send_flags;
	/*
	 * ibv_qp_ex batch, between wr_start and wr_complete/wr_abort (which
	 * hold sq.lock for the whole batch): WQEs are written from
	 * wr_start_prod up to sq.prod but not published; wr_cur is the one
	 * being built and wr_err the first error of the batch.
	 */
	uint64_t send_ops;		/* IBV_QP_EX_WITH_* granted */
	uint32_t wr_start_prod;
	int wr_err;
	struct shca_send_wqe *wr_cur;
};

/* Tag handles per TM SRQ: completions carry them in 16 bits. */
#define SHCA_TM_MAX_HANDLES (1u << 16)

/*
 * The tag handles of a TM SRQ (tm.c): busy[h] while handle h is handed
 * out; the free ones wait in fifo, nfree of them from head on (a ring of
 * max slots).  lock is taken last, by posters and pollers alike.
 */
struct shca_tm_handles {
	pthread_spinlock_t lock;
	uint32_t max;
	uint32_t head;
	uint32_t nfree;
	uint32_t *fifo;
	uint8_t *busy;
};

/* What we posted as the k-th operation of the current call. */
struct shca_tm_op_priv {
	uint8_t opcode;		/* SHCA_OP_TM_* */
	uint32_t handle;
};

/*
 * The tag-matching part of an IBV_SRQT_TM SRQ (tm.c): the ring of list
 * operations, which the kernel empties before each doorbell returns, and
 * the handles.  lock serialises ibv_post_srq_ops(); prod is our producer
 * index.  cq is the SRQ's CQ, cq_next links the TM SRQs on it
 * (cq->tm_lock).  doorbell is the post_srq_recv command (replaced by the
 * unit tests).
 */
struct shca_tm {
	pthread_mutex_t lock;
	struct shca_ring ring;
	uint32_t prod;
	uint32_t max_ops;
	uint32_t max_sge;
	struct shca_tm_op_priv *ops;	/* max_ops entries */
	struct shca_tm_handles handles;
	struct shca_cq *cq;
	struct shca_srq *cq_next;
	int (*doorbell)(struct shca_srq *srq);
};

/*
 * A basic, XRC or TM SRQ (vsrq.srq_type).  wq.lock also keeps posters out
 * while a resize swaps wq.ring; a ring left unmapped by a failed resize
 * (wq.ring.map NULL) fails every post.  wq is the ordinary receive ring
 * of every type (for a TM SRQ: the unexpected messages); tm is set for a
 * TM SRQ only.
 */
struct shca_srq {
	struct verbs_srq vsrq;
	struct shca_wq wq;
	uint32_t srqn;
	struct shca_tm *tm;
};

struct shca_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_handle;
};

/*
 * A receive work queue (wq.c): wq is its ring; doorbell asks the kernel
 * to flush receives posted in the error state (replaced by unit tests).
 */
struct shca_rwq {
	struct ibv_wq ibv_wq;
	struct shca_wq wq;
	int (*doorbell)(struct shca_rwq *rwq);
};

static inline struct shca_context *to_shca_ctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct shca_context, ibv_ctx.context);
}

static inline struct shca_cq *to_shca_cq(struct ibv_cq *cq)
{
	return container_of(cq, struct shca_cq, vcq.cq);
}

static inline struct shca_cq *ex_to_shca_cq(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct shca_cq, vcq.cq_ex);
}

static inline struct shca_qp *to_shca_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct shca_qp, vqp.qp);
}

static inline struct shca_srq *to_shca_srq(struct ibv_srq *srq)
{
	return container_of(srq, struct shca_srq, vsrq.srq);
}

static inline struct shca_ah *to_shca_ah(struct ibv_ah *ah)
{
	return container_of(ah, struct shca_ah, ibv_ah);
}

static inline struct shca_rwq *to_shca_rwq(struct ibv_wq *wq)
{
	return container_of(wq, struct shca_rwq, ibv_wq);
}

/* shca.c */
int shca_check_libibverbs_path(const char *path);
int shca_parse_abi_attr(const char *buf, size_t len);
bool shca_match_device(struct verbs_sysfs_dev *sysfs_dev);

/* ring.c */
int shca_ring_check(const struct shca_ring_info *info, size_t min_entry,
		    long page_size);
int shca_ring_map(struct shca_ring *ring, const struct shca_ring_info *info,
		  size_t min_entry, int cmd_fd);
void shca_ring_unmap(struct shca_ring *ring);

/* cq.c */
struct ibv_cq *shca_create_cq(struct ibv_context *ctx, int cqe,
			      struct ibv_comp_channel *channel, int vector);
struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *ctx,
				    struct ibv_cq_init_attr_ex *attr);
int shca_destroy_cq(struct ibv_cq *ibcq);
int shca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int shca_resize_cq(struct ibv_cq *ibcq, int cqe);
int shca_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr);
int shca_cqe_read(struct shca_ring *ring, uint32_t cons, struct shca_cqe *out);
void shca_cq_clean(struct shca_cq *cq, uint32_t qpn);
void shca_cqe_to_wc(const struct shca_cqe *cqe, struct ibv_wc *wc);
void shca_cq_set_ex_ops(struct ibv_cq_ex *cq);
void shca_cqe_sanitize(struct shca_cqe *cqe);
unsigned int shca_cqe_wc_flags(const struct shca_cqe *cqe);
int shca_cq_check_attr(const struct ibv_cq_init_attr_ex *attr);

/* qp.c */
int shca_qp_check_attr(const struct ibv_qp_init_attr_ex *attr);
int shca_qp_check_rings(const struct ibv_qp_init_attr_ex *attr,
			uint32_t resp_comp_mask);
struct ibv_qp *shca_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *shca_create_qp_ex(struct ibv_context *ctx,
				 struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *shca_open_qp(struct ibv_context *ctx,
			    struct ibv_qp_open_attr *attr);
int shca_destroy_qp(struct ibv_qp *ibqp);
int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int shca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
void shca_wqe_set_bind(struct shca_send_wqe *wqe, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info);
int shca_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid);
int shca_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		      uint16_t lid);
int shca_wq_map(struct shca_ring *ring, const struct shca_ring_info *info,
		int cmd_fd, uint32_t wr, size_t hdr, uint32_t nsge, uint32_t inl);
int shca_wq_post_recv(struct shca_wq *wq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
void *shca_wq_slot(struct shca_wq *wq, uint32_t idx);
bool shca_wq_has_room(struct shca_wq *wq);
int shca_qp_send_state(const struct ibv_qp *ibqp);
int shca_qp_recv_state(const struct ibv_qp *ibqp);
int shca_qp_no_sq_err(const struct ibv_qp *ibqp);
void shca_wq_publish(struct shca_wq *wq);
void shca_sq_doorbell(struct shca_qp *qp);
uint8_t shca_send_flags(unsigned int flags);
void shca_wqe_put_sges(struct shca_sge *dst, const struct ibv_sge *src,
		       int num_sge);

/* srq.c */
int shca_srq_check_attr(const struct ibv_srq_init_attr_ex *attr);
struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
struct ibv_srq *shca_create_srq_ex(struct ibv_context *ctx,
				   struct ibv_srq_init_attr_ex *attr);
int shca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int shca_srq_switch_ring(struct shca_srq *srq,
			 const struct shca_ring_info *info, uint32_t max_wr,
			 int cmd_fd);
int shca_destroy_srq(struct ibv_srq *ibsrq);
int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int shca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/* tm.c */
int shca_tm_handles_init(struct shca_tm_handles *h, uint32_t max);
void shca_tm_handles_destroy(struct shca_tm_handles *h);
int shca_tm_handle_get(struct shca_tm_handles *h, uint32_t *handle);
bool shca_tm_handle_put(struct shca_tm_handles *h, uint32_t handle);
bool shca_tm_handle_busy(struct shca_tm_handles *h, uint32_t handle);
int shca_tm_check_resp(const struct ibv_tm_cap *want,
		       const struct shca_create_srq_resp *resp);
int shca_tm_create(struct shca_srq *srq, struct shca_cq *cq,
		   const struct ibv_tm_cap *want,
		   const struct shca_create_srq_resp *resp, int cmd_fd);
void shca_tm_destroy(struct shca_srq *srq);
uint32_t shca_tm_finish(struct shca_tm *tm, uint32_t start);
int shca_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr,
		      struct ibv_ops_wr **bad_wr);
void shca_cq_add_tm_srq(struct shca_cq *cq, struct shca_srq *srq);
void shca_cq_del_tm_srq(struct shca_cq *cq, struct shca_srq *srq);
void shca_cq_tm_release(struct shca_cq *cq, const struct shca_cqe *cqe);

/* flow.c */
int shca_flow_check_attr(const struct ibv_flow_attr *attr);
struct ibv_flow *shca_create_flow(struct ibv_qp *qp,
				  struct ibv_flow_attr *attr);
int shca_destroy_flow(struct ibv_flow *flow);
unsigned int shca_raw_send_flags(struct ibv_context *ctx);

/* wq.c */
int shca_wq_check_attr(const struct ibv_wq_init_attr *attr);
struct ibv_wq *shca_create_wq(struct ibv_context *ctx,
			      struct ibv_wq_init_attr *attr);
int shca_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr);
int shca_destroy_wq(struct ibv_wq *ibwq);
int shca_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
struct ibv_rwq_ind_table *
shca_create_rwq_ind_table(struct ibv_context *ctx,
			  struct ibv_rwq_ind_table_init_attr *attr);
int shca_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl);
int shca_rss_check_attr(const struct ibv_qp_init_attr_ex *attr);
void shca_rss_fill_req(struct shca_create_qp_req *req,
		       const struct ibv_rx_hash_conf *h);
struct ibv_qp *shca_rss_create_qp(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *attr);

/* qp_ex.c */
int shca_qp_ex_check(enum ibv_qp_type type, uint64_t send_ops);
void shca_qp_ex_init(struct shca_qp *qp, uint64_t send_ops);

#endif /* SHCA_PROVIDER_H */
