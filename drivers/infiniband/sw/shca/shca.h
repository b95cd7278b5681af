/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: software RoCE v2 HCA - driver-private definitions.
 *
 * Locking overview (outer to inner):
 *  - RTNL (netdev notifier) -> shca_dev_mutex (device list).  The list
 *    mutex is never held across ib_register_device/ib_unregister_device,
 *    which take RTNL themselves.
 *  - RTNL -> fd->lock (mutex, flow.c): the flow table's writers; the
 *    netdev hooks need RTNL.  Readers walk the rules under RCU.
 *  - qp->state_lock (mutex): modify_qp/query_qp, serialises QP attributes.
 *    qp->state_lock -> qp->av_lock (seqlock, written with BHs off): the
 *    primary path of a connected QP, read locklessly by the engines and
 *    the receive demux (shca_qp_av_read()).
 *  - qp->rq_engine (mutex) -> qp->sq_engine (mutex): one RQ engine run
 *    at a time (rq_work, or a same-host sender running it inline), one SQ
 *    engine run at a time (sq_work, a doorbell, or the RQ engine catching
 *    up on responses: shca_sq_catch_up(), which only trylocks sq_engine
 *    and otherwise leaves the responses to the run in progress, which
 *    wakes rq_work).  An SQ engine run that sends
 *    a request on the direct path may run the destination QP's RQ engine
 *    (shca_rq_inline()): it only ever trylocks that rq_engine, and the
 *    inline run takes the destination's sq_engine only by trylock, to
 *    consume its responses and nothing else (shca_sq_take_responses();
 *    if a run in another thread holds it, it waits a bounded time for
 *    that run to consume them, holding no lock it waits on), so QPs
 *    that send to each other never wait on each other's locks.
 *  - qp->rq_lock / qp->sq_lock (spinlock, irqsave): kernel producers of a
 *    work queue.  Never taken together with another QP's locks.
 *  - qp->req.iop_lock (spinlock, irqsave): the queue of the RC
 *    requester's internal operations (rc_req.h); a leaf, nothing is taken
 *    or called under it, so it may be taken under any other lock.
 *  - srq->prod_lock -> srq->lock (spinlock, irqsave): srq->lock guards
 *    the SRQ consumers (the RQ engines of the attached QPs, and of XRC
 *    target QPs), the limit and the ring itself against a resize, and a
 *    TM SRQ's tag list; srq->prod_lock the kernel SRQ producers.  Only a
 *    resize takes both.  tm->ops_lock (mutex, a TM SRQ's doorbell) ->
 *    srq->lock.
 *  - rwq->modify_lock (mutex) -> rwq->lock (spinlock, irqsave): a WQ's
 *    state and its consumers (the RSS QPs whose tables name it), rwq.c.
 *  - cq->lock (spinlock, irqsave): CQ ring consumer side, notify state,
 *    ring swap on resize.
 *  - mw->lock (spinlock) -> mr->lock (spinlock): MR translation fields
 *    (rereg, fast registration, invalidation vs. lookups); a bind takes
 *    the window's lock, then one MR lock at a time.
 *  - an ODP MR's umem_odp->umem_mutex (ib_core's mutex) -> the atomics'
 *    lock (mem.c): held while a copy uses the MR's pages, taken by the
 *    MMU notifier to unmap them (shca_odp.c); never under mr->lock, and
 *    under another spinlock only by mutex_trylock().
 *  - xarrays use their internal lock.
 */
#ifndef SHCA_H
#define SHCA_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/seqlock.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/stringify.h>
#include <linux/xarray.h>
#include <net/dst_cache.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/shca-abi.h>

#include "compat.h"
#include "engine_logic.h"
#include "path_logic.h"
#include "ring.h"
#include "rc.h"
#include "rc_req.h"
#include "rc_resp.h"

#define SHCA_DRV_NAME		"shca"

/* Device limits; every one of them is enforced where objects are made. */
#define SHCA_MAX_QP		4096
#define SHCA_MAX_QPN		((1U << 24) - 1)
#define SHCA_GSI_QPN		1
#define SHCA_MAX_QP_WR		16384
#define SHCA_MAX_CQ		4096
#define SHCA_MAX_CQE		65536
#define SHCA_MAX_PD		4096
#define SHCA_MAX_MR		65536
#define SHCA_MAX_MR_SIZE	BIT_ULL(40)
#define SHCA_MAX_FRMR_PAGES	512	/* max_fast_reg_page_list_len */
#define SHCA_MAX_MW		65536
/*
 * Key space: key = (index << 8) | key byte.  MR indices are
 * 1..SHCA_MAX_MR; memory window indices have bit 23 set, so the top bit
 * of an R_Key tells which table to look in.
 */
#define SHCA_MW_INDEX_BASE	0x800000U
#define SHCA_KEY_IS_MW(key)	(!!((key) & (SHCA_MW_INDEX_BASE << 8)))
#define SHCA_MAX_AH		65536
#define SHCA_MAX_SGE		12
#define SHCA_MAX_SRQ		4096
#define SHCA_MAX_SRQ_WR		SHCA_MAX_QP_WR
#define SHCA_MAX_XRCD		4096
#define SHCA_MAX_RD_ATOM	128
#define SHCA_GID_TBL_LEN	128
#define SHCA_PKEY_DEFAULT	0xffff
/* CQ moderation limits (cq_caps); the period is in microseconds. */
#define SHCA_MAX_CQ_MOD_COUNT	U16_MAX
#define SHCA_MAX_CQ_MOD_PERIOD	4095
/* UD multicast (mcast.c) */
#define SHCA_MAX_MCG		1024
#define SHCA_MAX_MCG_QP		64
#define SHCA_MAX_TOTAL_MCG_QP	4096
#define SHCA_MCAST_QPN		0xffffff

/*
 * shca has no IEEE OUI; report a locally administered company ID
 * (the X bit of the first octet set) so tools see a non-zero vendor.
 */
#define SHCA_VENDOR_ID		0x02ca5e

/* "Firmware" version: the version of this driver's device model. */
#define SHCA_FW_MAJOR		0
#define SHCA_FW_MINOR		1
#define SHCA_FW_SUBMINOR	0
#define SHCA_FW_VER_RAW		SHCA_FW_VER_ENCODE(SHCA_FW_MAJOR, SHCA_FW_MINOR, \
						   SHCA_FW_SUBMINOR)
#define SHCA_FW_VER		__stringify(SHCA_FW_MAJOR) "." \
				__stringify(SHCA_FW_MINOR) "." \
				__stringify(SHCA_FW_SUBMINOR)

/* Fixed queue strides (log2 bytes). */
#define SHCA_SQ_ENTRY_SHIFT	8
#define SHCA_RQ_ENTRY_SHIFT	8
#define SHCA_CQE_SHIFT		6
#define SHCA_MAX_INLINE		((1U << SHCA_SQ_ENTRY_SHIFT) - \
				 sizeof(struct shca_send_wqe))

/* Counters, defined once in stats.h: enum index and `rdma statistic` name. */
enum shca_stat {
#define SHCA_STAT(id, name) SHCA_STAT_##id,
#include "stats.h"
#undef SHCA_STAT
	SHCA_NUM_STATS
};

struct shca_flow_dev;

/*
 * A QP counter of ib_core's binding (`rdma statistic qp`): while a QP is
 * bound to it, that QP's events count here instead of in the port's
 * shca_dev.stats, as a hardware counter set takes them from the default
 * one; ib_core shows the port as its default set plus every counter.
 * Indexed like shca_dev.stats.  Found by rdma_counter.id in
 * shca_dev.counters; freed after an RCU grace period (the hot paths
 * count under rcu_read_lock()).
 */
struct shca_counter {
	struct rcu_head rcu;
	atomic64_t v[SHCA_NUM_STATS];
};

struct shca_dev {
	struct ib_device ibdev;		/* must be first (ib_alloc_device) */
	struct device *dma_dev;		/* driver-owned, coherent memory */
	struct kobject *net_kobj;	/* <dma_dev>/net/<ifname> link */
	char net_link[IFNAMSIZ];	/* ifname at link creation */
	struct net_device *ndev;	/* dev_hold()ed for our lifetime */
	struct list_head list;		/* shca_dev_list, shca_dev_mutex */
	bool registered;		/* under shca_dev_mutex */
	enum ib_port_state port_state;	/* last state reported, under RTNL */

	struct shca_net_sock *nsock;	/* UDP sockets of our netns */

	atomic_t num_qp;
	atomic_t num_cq;
	atomic_t num_mr;
	struct ida pd_ida;
	struct ida xrcd_ida;
	struct xarray qps;		/* qpn -> shca_qp */
	struct xarray cqs;		/* cqn -> shca_cq */
	struct xarray mrs;		/* key index -> shca_mr */
	struct xarray mws;		/* key index -> shca_mw */
	atomic_t num_mw;
	struct xarray ahs;		/* ah_handle -> shca_ah */
	struct xarray srqs;		/* srqn -> shca_srq */
	atomic_t num_srq;
	atomic64_t srq_uid;		/* the last shca_srq.uid given */
	struct xarray rwqs;		/* wq_num -> shca_rwq (rwq.c) */
	struct ida ind_tbl_ida;		/* RSS indirection table numbers */
	u32 next_qpn;
	u32 next_cqn;
	atomic_t mr_key_gen;
	atomic64_t stats[SHCA_NUM_STATS];
	struct xarray counters;		/* rdma_counter.id -> shca_counter */
	struct mutex mcg_mutex;		/* multicast attach/detach */
	struct list_head mcgs;		/* RCU list of struct shca_mcg */
	u32 num_mcg;			/* mcg_mutex */
	u32 num_mca;			/* attachments, mcg_mutex */
	struct shca_flow_dev *flow;	/* flow steering (flow.c) */
	atomic_t wire_inflight;		/* RC wire PSNs in flight (rc_req.c) */
	/* wire packets handed to the IP stack by tx_work (net.c) */
	struct sk_buff_head tx_queue;
	struct work_struct tx_work;
	int tx_cpu;			/* where tx_work runs */
	atomic_t tx_inflight;		/* queued, or being sent by tx_work */
};

struct shca_ucontext {
	struct ib_ucontext ibuctx;
};

/* One mmap-able chunk; owns the chunk memory once inserted. */
struct shca_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	struct device *dma_dev;		/* get_device()ed */
	void *va;
	dma_addr_t dma;
	size_t len;
	struct shca_charge charge;	/* moved in from the ring's chunk */
};

struct shca_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/* An XRC domain: groups XRC SRQs and XRC target QPs (ib_core shares it). */
struct shca_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
};

struct shca_ah {
	struct ib_ah ibah;
	u32 handle;
	struct rdma_ah_attr attr;	/* grh.sgid_attr is not kept */
};

enum shca_mr_type {
	SHCA_MR_DMA,
	SHCA_MR_USER,
	SHCA_MR_FRMR,		/* ib_alloc_mr(IB_MR_TYPE_MEM_REG) */
	SHCA_MR_ODP,		/* user MR, IB_ACCESS_ON_DEMAND (shca_odp.c) */
	SHCA_MR_ODP_IMPLICIT,	/* ODP MR of the whole address space */
};

/*
 * Page lists of a fast registration MR.  ib_map_mr_sg() fills @map
 * (the ULP owns the MR then); IB_WR_REG_MR copies it into @pages under
 * mr->lock.  Entries are page-aligned kernel virtual addresses (ib_core's
 * virtual DMA ops make DMA addresses kernel addresses).
 */
struct shca_frmr {
	u64 *map;
	u64 *pages;		/* mr->lock */
	u32 max_pages;
	u32 map_n;		/* entries of @map in use */
	u32 npages;		/* entries of @pages in use, mr->lock */
	u8 page_shift;		/* mr->lock */
};

/* Looked up from the wire: kref + completion like the QP. */
struct shca_mr {
	struct ib_mr ibmr;
	struct kref ref;
	struct completion freed;
	/*
	 * everything below but type/index; an ODP MR's umem, mm, iova and
	 * length never change once it is published (no rereg)
	 */
	spinlock_t lock;
	enum shca_mr_type type;
	struct ib_umem *umem;
	/* the umem's scatterlist entry last copied at, and its first page */
	struct scatterlist *sg_hint;
	u64 sg_hint_pg;
	u64 iova;
	u64 length;
	int access;
	u32 index;
	u32 key;			/* current lkey == rkey */
	bool valid;			/* FRMR: registered (not Free) */
	bool dead;			/* deregistration started */
	u32 num_mw;			/* memory windows bound to it */
	struct shca_frmr frmr;		/* SHCA_MR_FRMR only */
	struct shca_charge charge;	/* SHCA_MR_ODP: its page lists */
	/* SHCA_MR_ODP_IMPLICIT: the registering process's, mmgrab()ed */
	struct mm_struct *mm;
};

/* Is @mr an on-demand paging MR (shca_odp.c)?  Its type never changes. */
static inline bool shca_mr_is_odp(const struct shca_mr *mr)
{
	return mr->type == SHCA_MR_ODP || mr->type == SHCA_MR_ODP_IMPLICIT;
}

/* A memory window (type 1 or 2B); the same lookup rules as an MR. */
struct shca_mw {
	struct ib_mw ibmw;
	struct kref ref;
	struct completion freed;
	spinlock_t lock;		/* everything below but index */
	u32 index;
	u32 rkey;			/* current R_Key */
	bool valid;			/* bound */
	struct shca_mr *mr;		/* bound MR, referenced */
	u64 addr;
	u64 length;
	int access;			/* IB_ACCESS_REMOTE_* */
	u32 qpn;			/* type 2B: the QP it is bound to */
};

struct shca_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* ring consumer side, notify, swap */
	struct shca_ring ring;		/* kernel produces, kcons for kernel */
	bool user;
	u32 cqn;
	enum ib_cq_notify_flags notify;	/* 0 when disarmed */
	bool overflow;			/* IB_EVENT_CQ_ERR was sent */
	bool dying;			/* destroy started, cq->lock */
	u16 mod_count;			/* moderation, cq->lock */
	u16 mod_period;			/* usec, cq->lock */
	u32 mod_pending;		/* unreported event CQEs, cq->lock */
	int comp_cpu;			/* CPU of the completion vector */
	struct hrtimer mod_timer;	/* cq_period; cancelled in destroy */
	struct work_struct comp_work;	/* comp_handler on comp_cpu; ditto */
	atomic_t handlers;		/* inline comp_handler calls running */
};

struct shca_tm;
struct shca_rss;

struct shca_wq {
	struct shca_ring ring;
	u32 max_sge;
};

/*
 * A shared receive queue, basic or XRC (srq.c).  An XRC SRQ is found by
 * number from the wire (the XRCETH), so lookups take a reference like a
 * QP's; destroy waits for them.
 */
struct shca_srq {
	struct ib_srq ibsrq;
	struct kref ref;
	struct completion freed;	/* last reference dropped */
	struct mutex modify_lock;	/* modify_srq: one at a time */
	spinlock_t lock;		/* consumers: ring, limit, broken */
	spinlock_t prod_lock;		/* kernel producers: ring.kprod */
	struct shca_ring ring;		/* entries == max_wr */
	u32 max_sge;
	u32 srqn;			/* reused as soon as it is free */
	u64 uid;			/* never reused: this very SRQ */
	u32 limit;			/* armed when non-zero */
	bool broken;			/* IB_EVENT_SRQ_ERR was sent */
	bool user;
	struct shca_tm *tm;		/* IB_SRQT_TM only (tm.c) */
};

/*
 * The primary path of a connected QP as modify_qp last stored it (qp.c):
 * what the engines route by (shca_qp_path()) and what the receive demux
 * admits packets by (rx_demux.c).  All zero (SHCA_PATH_NONE) before the
 * first address vector.
 */
struct shca_qp_av {
	struct shca_path_addrs addrs;
	u8 tclass;
	u32 flow_label;
};

/*
 * What the same-host path's routing checks of a way found (direct.c,
 * shca_direct_routes()), and for what: the addresses and source port, the
 * devices at both ends (ifindex and their namespaces' net_cookie, never
 * reused) and the route generations of those namespaces, which every
 * change of a route, a routing rule, an address or an xfrm policy bumps.
 */
struct shca_direct_key {
	u64 net[2];		/* net_cookie: the sender's, the target's */
	int genid[2];		/* rt_genid_ipv4/6() of those namespaces */
	int ifindex[2];		/* the way out, the target device */
	struct in6_addr saddr;	/* an IPv4 address in the first 4 bytes */
	struct in6_addr daddr;
	__be16 sport;
	u8 ipv4;
	u8 replies;		/* responses come back (RC, XRC) */
};

struct shca_direct_memo {
	struct shca_direct_key key;
	const char *why;	/* NULL: the routing lets both ways pass */
	bool valid;
};

struct shca_qp {
	struct ib_qp ibqp;
	struct kref ref;
	struct completion freed;	/* last reference dropped */
	struct mutex state_lock;	/* attr, state transitions */
	spinlock_t sq_lock;		/* kernel SQ producer */
	spinlock_t rq_lock;		/* kernel RQ producer */
	enum ib_qp_state state;		/* written under state_lock */
	struct ib_qp_attr attr;		/* last values set, state_lock */
	struct ib_qp_cap cap;
	enum ib_sig_type sq_sig_type;
	bool user;
	bool dying;			/* destroy started: drop traffic */
	/* SRQ: IB_EVENT_QP_LAST_WQE_REACHED sent in this error state */
	bool last_wqe_sent;
	/* IB_EVENT_QP_FATAL sent in this error state, under state_lock */
	bool fatal_sent;
	struct ib_xrcd *xrcd;		/* XRC target: its domain */
	struct shca_wq sq;		/* no ring on an XRC target */
	struct shca_wq rq;		/* no ring with an SRQ, or on XRC QPs */
	struct work_struct sq_work;	/* SQ engine, holds a QP reference */
	struct mutex sq_engine;		/* one SQ engine run at a time */
	struct shca_linger sq_linger;	/* when to linger, qp->sq_engine */
	u64 sq_idle_ns;			/* user QP went idle (ktime), sq_engine */
	/* the timed linger: holds a QP reference while armed (sq_engine.c) */
	struct hrtimer sq_linger_timer;
	unsigned long sq_timed;		/* SHCA_QP_SQ_TIMED: it is armed */
	/* the task in an SQ engine run (shca_sq_run()), or NULL */
	struct task_struct *sq_runner;
	/* that run brought about responses it must consume (sq_runner's) */
	bool sq_owed;
	/*
	 * Wire packets of an SQ engine run not yet handed to tx_work
	 * (shca_tx_flush()), under qp->sq_engine; empty between runs.
	 */
	struct sk_buff_head sq_tx_batch;
	/* the same for RQ engine runs, under qp->rq_engine */
	struct sk_buff_head rq_tx_batch;
	/*
	 * Responses queued on comp_queue and consumed by SQ engine runs
	 * (written under qp->sq_engine), since creation; a request waits
	 * for the responses queued before it (shca_sq_catch_up()).
	 */
	atomic_t comp_queued;
	u32 comp_done;
	/* SHCA_QP_RQ_WAITS: rq_work waits for an SQ engine run's responses */
	unsigned long rq_waits;
	struct work_struct rq_work;	/* RX + RQ engine, holds a reference */
	struct mutex rq_engine;		/* one RQ engine run at a time */
	u32 rq_requests;		/* requests taken, qp->rq_engine */
	struct sk_buff_head rx_queue;	/* every skb holds a QP reference */
	struct sk_buff_head comp_queue;	/* RC/UC responses for sq_work, ditto */
	/*
	 * Wire packets (not the direct path's) since creation: requests
	 * sent (SQ engine) and received (its RX demux, rx_demux.c), responses
	 * sent (RQ engine) and received.  A QP on this host connected to
	 * this one compares its own with them: what its peer sent that has
	 * not arrived is on its way (shca_reorder_hold_keep()).  Counts only.
	 */
	atomic_t wire_req_out;
	atomic_t wire_req_in;
	atomic_t wire_resp_out;
	atomic_t wire_resp_in;
	/* the bound QP counter (device.c), or NULL: the port counts */
	struct shca_counter __rcu *qcnt;
	/* RC/UC requester: SQ engine only, but its req.iop_lock queue */
	struct shca_req req;
	struct shca_resp resp;		/* RC/UC responder, RQ engine only */
	struct shca_rss *rss;		/* RSS QPs only (rwq.c) */
	/* RC/UC/XRC: the route of qp->av (per CPU, BHs off; empty before RTR) */
	struct dst_cache dst_cache;
	/*
	 * RC/UC/XRC: the primary path, written by modify_qp (under
	 * state_lock, with BHs off) while the engines and the demux read it
	 */
	seqlock_t av_lock;
	struct shca_qp_av av;		/* av_lock */
	/* the same-host path's routing verdict (direct.c), SQ engine only */
	struct shca_direct_memo direct_memo;
};

/**
 * shca_qp_av_read - a consistent copy of a connected QP's primary path
 * @qp: RC/UC/XRC QP
 * @av: filled in
 *
 * Context: process or softirq (the writer keeps BHs off, so a softirq
 * never spins on a write it interrupted).
 */
static inline void shca_qp_av_read(struct shca_qp *qp, struct shca_qp_av *av)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&qp->av_lock);
		*av = qp->av;
	} while (read_seqretry(&qp->av_lock, seq));
}

/* Copy a work request's scatter list into a WQE's SGE array. */
static inline void shca_wqe_put_sges(struct shca_sge *dst,
				     const struct ib_sge *src, int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
}

static inline struct shca_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct shca_dev, ibdev);
}

static inline struct shca_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibpd);
}

static inline struct shca_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibah);
}

static inline struct shca_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct shca_mr, ibmr);
}

static inline struct shca_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct shca_mw, ibmw);
}

static inline struct shca_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, ibcq);
}

static inline struct shca_xrcd *to_sxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct shca_xrcd, ibxrcd);
}

static inline struct shca_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, ibsrq);
}

static inline struct shca_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, ibqp);
}

static inline struct shca_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct shca_mmap_entry, rdma);
}

/* The user context of a verb call, NULL for kernel callers. */
static inline struct ib_ucontext *shca_udata_uctx(struct ib_udata *udata)
{
	struct shca_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct shca_ucontext, ibuctx);

	return uctx ? &uctx->ibuctx : NULL;
}

/* Limits of the datapath engines. */
#define SHCA_SQ_BUDGET		64	/* WQEs per SQ work run */
#define SHCA_RX_BUDGET		64	/* packets per RX work run */
#define SHCA_RX_QUEUE_MAX	1024	/* packets queued on one QP */
#define SHCA_GRH_BYTES		40

/*
 * What the RX softirq learnt about a packet, for the QP's receive work;
 * lives in skb->cb once the UDP layer has handed the skb over to us.
 */
struct shca_rx_cb {
	u32 bth_off;		/* from skb->data */
	u32 pay_off;		/* from skb->data */
	u32 pay_len;
	u32 blen;		/* BTH to the end of the ICRC */
	u32 qkey;
	u32 src_qpn;
	__be32 imm;
	u32 seg;		/* direct path: the sender's segment size */
	u8 opcode;
	bool se;
	bool icrc_due;		/* wire: the ICRC is still to be checked */
	bool icrc_rxe;		/* ... and was rdma_rxe's FLUSH variant */
	u32 comp_mark;		/* request: qp->comp_queued on its arrival */
};

static inline struct shca_rx_cb *shca_rx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct shca_rx_cb) > sizeof(skb->cb));
	return (struct shca_rx_cb *)skb->cb;
}

/* A resolved route for one packet; dst is held until consumed. */
struct shca_path {
	bool ipv4;
	union {
		__be32 v4;
		struct in6_addr v6;
	} saddr, daddr;
	u8 tclass;
	u32 flow_label;
	__be16 sport;
	struct dst_entry *dst;
	bool direct;		/* deliver on the same-host path (direct.c) */
	u32 seg;		/* direct: the packet's segment size, or 0 */
	/*
	 * from an SQ engine run with nothing but qp->sq_engine held: the
	 * RQ engine of a destination on this host may run in this thread
	 * (direct, or a wire packet caught on its way back up the stack)
	 */
	bool rx_inline;
	/*
	 * NULL, or where a wire packet waits for the rest of its engine
	 * run's packets, to reach tx_work with them (shca_tx_flush())
	 */
	struct sk_buff_head *batch;
	/*
	 * NULL, or where shca_skb_xmit() counts the sender's wire packets
	 * (shca_qp.wire_req_out, wire_resp_out)
	 */
	atomic_t *wire_out;
};

static inline void shca_stat_inc(struct shca_dev *sdev, enum shca_stat stat)
{
	atomic64_inc(&sdev->stats[stat]);
}

static inline void shca_stat_add(struct shca_dev *sdev, enum shca_stat stat,
				 u32 n)
{
	atomic64_add(n, &sdev->stats[stat]);
}

/*
 * shca_qp_stat_add - count @n events of @qp: in the QP counter it is
 * bound to, else in the port's counters.
 *
 * Context: any.
 */
static inline void shca_qp_stat_add(struct shca_qp *qp, enum shca_stat stat,
				    u32 n)
{
	struct shca_counter *c;

	rcu_read_lock();
	c = rcu_dereference(qp->qcnt);
	if (c)
		atomic64_add(n, &c->v[stat]);
	else
		atomic64_add(n, &to_sdev(qp->ibqp.device)->stats[stat]);
	rcu_read_unlock();
}

static inline void shca_qp_stat_inc(struct shca_qp *qp, enum shca_stat stat)
{
	shca_qp_stat_add(qp, stat, 1);
}

/* udata.c */
int shca_udata_get_req(struct ib_device *ibdev, struct ib_udata *udata,
		       void *req, size_t size, size_t required);
int shca_udata_no_req(struct ib_device *ibdev, struct ib_udata *udata);
int shca_udata_check_cmd(struct ib_device *ibdev, const char *what,
			 u32 comp_mask, u32 known, u32 reserved);
int shca_udata_put_resp(struct ib_device *ibdev, struct ib_udata *udata,
			void *resp, size_t size);

/* device.c */
extern const struct attribute_group shca_attr_group;
int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int shca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr);
int shca_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev, u32 port);
int shca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable);
void shca_get_dev_fw_str(struct ib_device *ibdev, char *str);
const char *shca_stat_name(int stat);
struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);
struct rdma_hw_stats *shca_counter_alloc_stats(struct rdma_counter *counter);
int shca_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp);
int shca_counter_unbind_qp(struct ib_qp *ibqp);
int shca_counter_update_stats(struct rdma_counter *counter);
int shca_counter_dealloc(struct rdma_counter *counter);
enum ib_mtu shca_active_mtu(struct shca_dev *sdev);
enum ib_port_state shca_port_state(struct shca_dev *sdev);

/* main.c allocates them; qp_ref.c and cq.c define them */
extern struct workqueue_struct *shca_wq;
extern struct workqueue_struct *shca_comp_wq;

/* net.c */
int shca_net_init(void);
void shca_net_exit(void);
int shca_net_get(struct shca_dev *sdev);
void shca_net_put(struct shca_dev *sdev);
int shca_path_resolve(struct shca_dev *sdev, const union ib_gid *sgid,
		      const union ib_gid *dgid, struct shca_path *path);
int shca_path_route(struct net *net, struct net_device *ndev,
		    struct shca_path *path);
__be16 shca_path_sport(u32 qpn, u32 dqpn);
/* the route of a connected QP's packets (from qp->av, av_lock) */
int shca_qp_path(struct shca_qp *qp, struct shca_path *path);
struct sk_buff *shca_skb_alloc(struct shca_dev *sdev,
			       const struct shca_path *path, unsigned int len);
int shca_skb_xmit(struct shca_dev *sdev, struct shca_path *path,
		  struct sk_buff *skb);
void shca_tx_flush(struct shca_dev *sdev, struct sk_buff_head *batch);

/* pd.c */
int shca_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata);
void shca_dealloc_ucontext(struct ib_ucontext *ibuctx);
void shca_disassociate_ucontext(struct ib_ucontext *ibuctx);
int shca_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma);
void shca_mmap_free(struct rdma_user_mmap_entry *entry);
int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int shca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

/* ah.c */
int shca_ah_attr_check(struct ib_device *ibdev,
		       const struct rdma_ah_attr *attr);
int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata);
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int shca_destroy_ah(struct ib_ah *ibah, u32 flags);

/* mr.c */
struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata);
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type mr_type,
			    u32 max_num_sg);
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key);
void shca_mr_put(struct shca_mr *mr);
int shca_frmr_reg(struct shca_qp *qp, const struct shca_wqe_reg_mr *reg);
int shca_mr_invalidate(struct shca_qp *qp, u32 key);

/* mw.c */
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int shca_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status shca_local_op(struct shca_qp *qp,
				const struct shca_send_wqe *hdr);
int shca_invalidate_remote(struct shca_qp *qp, u32 rkey);
int shca_mw_rget(struct shca_qp *qp, u32 rkey, u64 va, u32 len, int access,
		 struct shca_mr **mrp);

/* mem.c */
struct shca_sge_cursor {
	struct shca_dev *sdev;
	struct ib_pd *pd;
	const struct shca_sge *sge;
	u32 num_sge;
	u32 idx;		/* current SGE */
	u32 off;		/* bytes used of the current SGE */
	/*
	 * the caller cannot sleep (holds a spinlock): an ODP MR's pages
	 * are used only if present, never faulted in
	 */
	bool nofault;
};

int shca_sge_total(const struct shca_sge *sge, u32 num_sge, u64 *total);
int shca_cursor_copy(struct shca_sge_cursor *cur, void *buf, u32 len,
		     bool to_mr);
/* remote (R_Key) access */
int shca_rmr_get(struct shca_qp *qp, u32 rkey, u64 va, u32 len, int access,
		 struct shca_mr **mrp);
int shca_rmr_check_region(struct shca_qp *qp, u32 rkey, int access);
int shca_rmr_copy(struct shca_mr *mr, u64 va, void *buf, u32 len,
		  bool to_mr);
int shca_rmr_atomic(struct shca_mr *mr, u64 va, bool cmp_swap, u64 swap_add,
		    u64 compare, u64 *orig);
int shca_rmr_atomic_write(struct shca_mr *mr, u64 va, u64 val);

/* cq.c */
int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   SHCA_CREATE_CQ_ARG *arg);
int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int shca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int shca_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period);
void shca_cq_sync_events(struct shca_cq *cq);
void shca_cq_post(struct shca_cq *cq, const struct shca_cqe *cqe,
		  bool solicited);

/* res.c */
int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int shca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);

/* qp.c */
int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
void shca_qp_init(struct shca_dev *sdev, struct shca_qp *qp,
		  struct ib_qp_init_attr *init, struct ib_udata *udata);
int shca_qp_alloc_qpn(struct shca_dev *sdev, struct shca_qp *qp);
void shca_qp_free_qpn(struct shca_dev *sdev, struct shca_qp *qp);

/* qp_ref.c */
struct shca_qp *shca_qp_get(struct shca_dev *sdev, u32 qpn);
void shca_qp_put(struct shca_qp *qp);
void shca_qp_queue(struct shca_qp *qp, struct work_struct *work);
void shca_qp_queue_held(struct shca_qp *qp, struct work_struct *work);
void shca_qp_kick(struct shca_qp *qp);
void shca_qp_set_error(struct shca_qp *qp);
void shca_qp_fatal(struct shca_qp *qp);

/* srq.c */
int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
struct shca_srq *shca_xsrq_get(struct shca_dev *sdev, u32 srqn,
			       const struct ib_xrcd *xrcd);
void shca_srq_put(struct shca_srq *srq);

/* ud_send.c */
bool shca_sq_drain(struct shca_qp *qp, u32 *budget);
bool shca_sq_pending(struct shca_qp *qp);
int shca_post_send_kernel(struct shca_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr);

/* sq_engine.c */
void shca_sq_work(struct work_struct *work);
void shca_sq_doorbell(struct shca_qp *qp);
#define SHCA_QP_RQ_WAITS	0	/* bit of qp->rq_waits */
#define SHCA_QP_SQ_TIMED	0	/* bit of qp->sq_timed */
void shca_linger_timer_init(struct shca_qp *qp);
bool shca_sq_catch_up(struct shca_qp *qp, u32 mark);
bool shca_sq_take_responses(struct shca_qp *qp, u32 mark);

/*
 * Have SQ engine runs consumed the responses queued before a request with
 * comp_mark @mark?  Context: any.
 */
static inline bool shca_sq_consumed(const struct shca_qp *qp, u32 mark)
{
	return (s32)(READ_ONCE(qp->comp_done) - mark) >= 0;
}

void shca_sq_consumed_more(struct shca_qp *qp);
void shca_sq_sync(struct shca_qp *qp);

/* rx_demux.c */
struct net_device *shca_addr_ndev(struct net *net, bool ipv4,
				  const void *addr);
struct shca_dev *shca_dev_get_by_netdev(struct net_device *ndev);
void shca_rcv(struct sk_buff *skb);

/*
 * A request its sender may run inline (rx_demux.c, rx_engine.c): of the direct
 * path, or a wire packet caught on its way back up this host's stack.
 */
struct shca_rx_inline {
	struct shca_qp *qp;	/* referenced for @skb */
	struct sk_buff *skb;
};

void shca_rx_catch_begin(bool want_req);
void shca_rx_catch_end(struct shca_rx_inline *inl);

void shca_rx_direct(struct shca_dev *sdev, struct sk_buff *skb, u32 seg,
		    struct shca_rx_inline *inl);
int shca_rx_enqueue(struct shca_qp *qp, struct sk_buff *skb);
void shca_rx_queue_req(struct shca_qp *qp, struct sk_buff *skb);
bool shca_rx_verify(struct shca_qp *qp, struct sk_buff *skb);
int shca_qp_transport(enum ib_qp_type type);

/* rx_engine.c */
void shca_rq_work(struct work_struct *work);
void shca_rq_inline(struct shca_qp *qp, struct sk_buff *skb);
void shca_rq_sync(struct shca_qp *qp);

/* rwqe.c (the rest in rwqe.h) */
struct ib_pd *shca_qp_rpd(struct shca_qp *qp);

/* mcast.c */
int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
bool shca_mcast_qp_attached(struct shca_qp *qp);
int shca_mcast_rx(struct shca_dev *sdev, struct sk_buff *skb);

#endif /* SHCA_H */
