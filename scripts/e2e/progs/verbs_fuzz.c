// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_fuzz: random sequences of verbs over every object type of a live
 * shca device, with hostile inputs, run as an unprivileged user (see
 * scripts/e2e/fuzz.sh).
 *
 *   verbs_fuzz DEV GID_INDEX [-s SEED] [-t SECS] [-n SEQS] [-j THREADS]
 *              [-x NAME,...]
 *
 * -x leaves actions out (the names of actions[], e.g. wq,ind,flow; also
 * "foreign": no handle of another context, "cmd": no ibv_cmd_post_*),
 * to narrow a finding down to what it needs.
 *
 * Each of THREADS threads (default 3) runs sequences of 1..16 random
 * actions on its own object tables: contexts (one shared by every
 * thread, two of its own that it may close with objects alive), PDs,
 * MRs, MWs, completion channels, CQs (plain and extended), QPs of every
 * type (RC, UC, UD, XRC initiator and target, raw packet, RSS, RC with
 * send ops) moved through random modify transitions with random
 * attributes, SRQs (basic, XRC, TM), XRC domains, WQs, indirection
 * tables, flows, AHs; posts of send and receive WRs (mostly valid-looking:
 * buffers, keys and QP numbers of live objects), TM list operations,
 * polls, the same WRs through the kernel's own post path
 * (ibv_cmd_post_*), create commands with random driver data, random
 * bytes and indices written into every ring the kernel reads, fork (the
 * child does verbs, then exits with its objects alive) and closing a
 * device file with its objects alive.
 *
 * Seeded: thread i draws from SEED + i, so -j 1 with -n replays the same
 * calls (what the kernel answers may still depend on timing).  The seed
 * is printed first.  It stops after SECS seconds (default 60) or SEQS
 * sequences, whichever comes first, then destroys what is left, checks
 * that the device still moves data (a UD datagram, every byte compared)
 * and prints the number of sequences and, per verb, the calls and how
 * many succeeded and failed.  On a failure (a crash in this process, a
 * thread stuck for WATCHDOG_S, a child killed by anything but its own
 * alarm, the data check) it prints the seed, the crashing thread's stack
 * and each thread's last RING calls with their return values.  Exit
 * status: 0 on success.
 * The kernel's side (no WARN, KASAN, lockdep report or leak) is judged
 * by the VM harness.
 */
#include <endian.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#include "shca.h"		/* the provider's rings, to scribble on */
#include "vm_lib.h"

#define MAXTHR		8
#define RING		32	/* calls remembered per thread */
#define WATCHDOG_S	300	/* TCG on the debug kernel is slow */
#define CHILD_ALARM_S	60
#define BUFSZ		(256u * 1024)
#define NSG		80	/* SGE array of a post: 4 WRs, 63 SGEs each at most */

#define NCTX	3	/* slot 0: the shared context, never closed */
#define NPD	4
#define NMR	6
#define NMW	4
#define NCH	2
#define NCQ	6
#define NQP	10
#define NSRQ	4
#define NXRCD	2
#define NWQ	4
#define NIND	2
#define NAH	4
#define NFLOW	3

/* ---- the verbs and their counts ----------------------------------------- */

#define VERBS(X)							\
	X(open_device) X(close_device) X(query_device_ex) X(query_port)	\
	X(alloc_pd) X(dealloc_pd)					\
	X(reg_mr) X(rereg_mr) X(dereg_mr)				\
	X(alloc_mw) X(bind_mw) X(dealloc_mw)				\
	X(create_comp_channel) X(destroy_comp_channel)			\
	X(create_cq) X(create_cq_ex) X(resize_cq) X(req_notify_cq)	\
	X(poll_cq) X(get_cq_event) X(destroy_cq)			\
	X(create_qp_rc) X(create_qp_uc) X(create_qp_ud)			\
	X(create_qp_xrc_ini) X(create_qp_xrc_tgt) X(create_qp_raw)	\
	X(create_qp_ex_ops) X(create_qp_rss) X(open_qp)			\
	X(modify_qp) X(query_qp) X(connect_qps) X(destroy_qp)		\
	X(create_srq) X(create_srq_xrc) X(create_srq_tm)		\
	X(modify_srq) X(query_srq) X(destroy_srq)			\
	X(open_xrcd) X(close_xrcd)					\
	X(create_wq) X(modify_wq) X(destroy_wq)				\
	X(create_rwq_ind_table) X(destroy_rwq_ind_table)		\
	X(create_flow) X(destroy_flow)					\
	X(create_ah) X(destroy_ah)					\
	X(attach_mcast) X(detach_mcast)					\
	X(post_send) X(post_send_ex) X(post_recv) X(post_srq_recv)	\
	X(post_wq_recv) X(post_srq_ops)					\
	X(cmd_post_send) X(cmd_post_srq_recv)		\
	X(udata_alloc_pd) X(udata_create_cq) X(udata_create_qp)		\
	X(udata_create_srq)						\
	X(scribble_sq) X(scribble_rq) X(scribble_srq) X(scribble_tm)	\
	X(scribble_wq) X(scribble_cq)					\
	X(get_async_event) X(fork)

#define X_ENUM(n) V_##n,
#define X_NAME(n) #n,
enum verb { VERBS(X_ENUM) V_NR };
static const char *const verb_name[V_NR] = { VERBS(X_NAME) };

/* calls, successes, failures (atomics: every thread adds) */
static unsigned long cov[V_NR][3];

/* ---- per-thread state --------------------------------------------------- */

struct call {
	unsigned long seq;
	unsigned short verb;
	short slot;
	int ret;		/* 0 or an errno */
};

struct qpslot {
	struct ibv_qp *qp;
	int ctx;
	enum ibv_qp_type type;
	bool rss;
	bool opened;		/* a handle of ibv_open_qp(), not a creation */
	uint64_t ops;		/* the send ops it was created with (ibv_qp_ex) */
	enum ibv_qp_state state;	/* after the last successful modify */
};

struct thr {
	int id;
	bool child;
	uint64_t rng;
	unsigned long seqs, ncalls;
	struct call ring[RING];
	unsigned int ring_pos;
	uint8_t *buf;			/* BUFSZ, page aligned */
	pid_t kid;			/* a forked child not yet reaped */

	struct ibv_context *ctx[NCTX];
	struct ibv_pd *pd[NPD];		int pd_ctx[NPD];
	struct ibv_mr *mr[NMR];		int mr_ctx[NMR];
	struct ibv_mw *mw[NMW];		int mw_ctx[NMW];
	struct ibv_comp_channel *ch[NCH];	int ch_ctx[NCH];
	struct ibv_cq *cq[NCQ];		int cq_ctx[NCQ];
	struct ibv_cq_ex *cqx[NCQ];	bool cq_nopoll[NCQ];
	struct qpslot qp[NQP];
	struct ibv_srq *srq[NSRQ];	int srq_ctx[NSRQ];
	enum ibv_srq_type srq_type[NSRQ];
	struct ibv_xrcd *xrcd[NXRCD];	int xrcd_ctx[NXRCD];
	struct ibv_wq *wq[NWQ];		int wq_ctx[NWQ];
	struct ibv_rwq_ind_table *ind[NIND];	int ind_ctx[NIND];
	struct ibv_ah *ah[NAH];		int ah_ctx[NAH];
	struct ibv_flow *flow[NFLOW];	int flow_ctx[NFLOW];
};

static struct ibv_device *dev;
static struct ibv_context *shared_ctx;
static int gid_index;
static union ibv_gid my_gid;
static uint64_t seed;
static int nthr = 3;
static volatile int stop;
static struct thr *thrs[MAXTHR];
static unsigned long progress[MAXTHR];
static unsigned long total_seqs;
static unsigned long kids_ok, kids_alarm, kids_bad;
static uint32_t known_qpn[64];		/* QP numbers seen, any thread */
static uint32_t known_srqn[16];

/* Actions left out (-x NAME,...; see actions[]): to narrow a finding down. */
static char excluded_names[256];
static bool no_foreign, no_cmd;

/* ---- random numbers ----------------------------------------------------- */

static uint64_t rnd(struct thr *t)
{
	/* xorshift64* */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545f4914f6cdd1dull;
}

static unsigned int below(struct thr *t, unsigned int n)
{
	return n ? (unsigned int)(rnd(t) % n) : 0;
}

/* true with probability @pct percent */
static bool chance(struct thr *t, unsigned int pct)
{
	return below(t, 100) < pct;
}

static void rnd_bytes(struct thr *t, void *p, size_t len)
{
	uint8_t *b = p;

	while (len--)
		*b++ = (uint8_t)rnd(t);
}

/* ---- the record of calls ------------------------------------------------ */

/* Count a call of @v on @slot that returned @ret (0 or an errno). */
static int rec(struct thr *t, enum verb v, int slot, int ret)
{
	struct call *c = &t->ring[t->ring_pos++ % RING];

	c->seq = ++t->ncalls;
	c->verb = v;
	c->slot = (short)slot;
	c->ret = ret;
	__atomic_fetch_add(&cov[v][0], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cov[v][ret ? 2 : 1], 1, __ATOMIC_RELAXED);
	if (!t->child)
		__atomic_store_n(&progress[t->id], t->ncalls, __ATOMIC_RELAXED);
	return ret;
}

/* rec() for a call that returns a pointer or NULL with errno. */
static void *recp(struct thr *t, enum verb v, int slot, void *p)
{
	rec(t, v, slot, p ? 0 : (errno ? errno : EIO));
	return p;
}

static void dump_ring(const struct thr *t)
{
	unsigned int i, n = t->ring_pos < RING ? t->ring_pos : RING;

	fprintf(stderr, "thread %d%s (seed %#llx): last %u calls of %lu\n",
		t->id, t->child ? " (forked child)" : "",
		(unsigned long long)(seed + (uint64_t)t->id), n, t->ncalls);
	for (i = t->ring_pos - n; i != t->ring_pos; i++) {
		const struct call *c = &t->ring[i % RING];

		fprintf(stderr, "  %8lu %-22s slot %2d -> %d%s%s\n", c->seq,
			verb_name[c->verb], c->slot, c->ret,
			c->ret ? " " : "", c->ret ? strerror(c->ret) : "");
	}
}

static void dump_all(const char *why)
{
	int i;

	fprintf(stderr, "verbs_fuzz FAILED: %s; seed %#llx, %d threads\n", why,
		(unsigned long long)seed, nthr);
	for (i = 0; i < nthr; i++)
		if (thrs[i])
			dump_ring(thrs[i]);
}

static __thread struct thr *cur;

static void on_crash(int sig)
{
	char why[64];

	void *bt[32];
	int n = backtrace(bt, 32);

	snprintf(why, sizeof(why), "signal %d (%s)", sig, strsignal(sig));
	fprintf(stderr, "verbs_fuzz: %s in thread %d; its stack:\n", why,
		cur ? cur->id : -1);
	backtrace_symbols_fd(bt, n, 2);
	if (cur && cur->child) {
		fprintf(stderr, "verbs_fuzz: forked child: %s\n", why);
		dump_ring(cur);
	} else {
		dump_all(why);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- picking objects ---------------------------------------------------- */

/*
 * A random live slot of @n whose pointer array is @arr (of void *-sized
 * pointers), preferring context @ctx (-1: any) - unless @strict, a
 * foreign one 5% of the time, whose handle the kernel looks up in the
 * wrong context; -1 if none.  Strict picks are for the objects that the
 * provider keeps a pointer to in the new object (the CQs, SRQ and XRCD
 * of a QP, SRQ or WQ): the kernel does not hold a foreign one busy, so
 * it could be destroyed under the provider's pointer.
 */
static int pick_(struct thr *t, void *const *arr, const int *ctxs, int n,
		 int ctx, bool strict)
{
	int i, start = (int)below(t, (unsigned int)n);
	bool any = ctx < 0 ||
		   (!strict && chance(t, 5) && !no_foreign);

	for (i = 0; i < n; i++) {
		int s = (start + i) % n;

		if (arr[s] && (any || ctxs[s] == ctx))
			return s;
	}
	return -1;
}
#define pick(t, a, c, ctx) \
	pick_(t, (void *const *)(t)->a, (t)->c, (int)(sizeof((t)->a) / sizeof((t)->a[0])), ctx, false)
#define pick_own(t, a, c, ctx) \
	pick_(t, (void *const *)(t)->a, (t)->c, (int)(sizeof((t)->a) / sizeof((t)->a[0])), ctx, true)

/* A free slot of @arr, or -1. */
static int free_(void *const *arr, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!arr[i])
			return i;
	return -1;
}
#define freeslot(t, a) free_((void *const *)(t)->a, (int)(sizeof((t)->a) / sizeof((t)->a[0])))

static int pick_qp(struct thr *t, int ctx)
{
	int i, start = (int)below(t, NQP);

	for (i = 0; i < NQP; i++) {
		int s = (start + i) % NQP;

		if (t->qp[s].qp && (ctx < 0 || t->qp[s].ctx == ctx))
			return s;
	}
	return -1;
}

static int free_qp(struct thr *t)
{
	int i;

	for (i = 0; i < NQP; i++)
		if (!t->qp[i].qp)
			return i;
	return -1;
}

/* A live context slot, or -1. */
static int pick_ctx(struct thr *t)
{
	int i, start = (int)below(t, NCTX);

	for (i = 0; i < NCTX; i++)
		if (t->ctx[(start + i) % NCTX])
			return (start + i) % NCTX;
	return -1;
}

static void remember_qpn(struct thr *t, uint32_t qpn)
{
	known_qpn[below(t, 64)] = qpn;
}

static uint32_t some_qpn(struct thr *t)
{
	uint32_t q = known_qpn[below(t, 64)];

	if (!q || chance(t, 10))
		return (uint32_t)rnd(t) & 0xffffff;
	return q;
}

/* An rkey or lkey: of a live MR or MW mostly, else random. */
static uint32_t some_key(struct thr *t, bool remote)
{
	int s;

	if (chance(t, 15))
		return (uint32_t)rnd(t);
	if (remote && chance(t, 40)) {
		s = pick(t, mw, mw_ctx, -1);
		if (s >= 0)
			return t->mw[s]->rkey;
	}
	s = pick(t, mr, mr_ctx, -1);
	if (s < 0)
		return (uint32_t)rnd(t);
	return remote ? t->mr[s]->rkey : t->mr[s]->lkey;
}

/* An address and length inside the buffer, mostly. */
static void some_range(struct thr *t, uint64_t *addr, uint32_t *len)
{
	uint32_t off = below(t, BUFSZ);

	*len = below(t, 5) ? below(t, 4096) : below(t, BUFSZ - off + 1);
	if (off + *len > BUFSZ)
		*len = BUFSZ - off;
	*addr = (uintptr_t)t->buf + off;
	if (chance(t, 5))
		*addr = rnd(t);
	if (chance(t, 3))
		*len = (uint32_t)rnd(t);
}

static void some_gid(struct thr *t, union ibv_gid *g)
{
	unsigned int k = below(t, 10);

	*g = my_gid;
	if (k < 6)
		return;		/* our own: loopback */
	if (k < 8) {		/* the peer's, 10.77.0.2 */
		g->raw[15] = 2;
		return;
	}
	rnd_bytes(t, g, sizeof(*g));	/* unroutable */
}

/* ---- contexts, forgetting what lived in a closed one --------------------- */

/* Every ring of @qp's and @srq's etc. mapping; munmap half of them. */
static void maybe_unmap(struct thr *t, struct shca_ring *r)
{
	if (r->map && chance(t, 50)) {
		munmap(r->map, r->map_len);
		r->map = NULL;
	}
}

/*
 * Forget every object of context slot @c, which is closed: the kernel
 * destroyed them; their provider structures are leaked on purpose (the
 * provider frees nothing on close), their rings unmapped half the time.
 */
static void forget_ctx(struct thr *t, int c)
{
	int i;

#define FORGET(a, cx, n) \
	for (i = 0; i < (n); i++) if (t->a[i] && t->cx[i] == c) t->a[i] = NULL
	FORGET(flow, flow_ctx, NFLOW);
	FORGET(ah, ah_ctx, NAH);
	FORGET(ind, ind_ctx, NIND);
	for (i = 0; i < NWQ; i++)
		if (t->wq[i] && t->wq_ctx[i] == c) {
			maybe_unmap(t, &container_of(t->wq[i], struct shca_rwq,
						     ibv_wq)->wq.ring);
			t->wq[i] = NULL;
		}
	for (i = 0; i < NQP; i++)
		if (t->qp[i].qp && t->qp[i].ctx == c) {
			struct shca_qp *q = to_shca_qp(t->qp[i].qp);

			if (!t->qp[i].rss && t->qp[i].type != IBV_QPT_XRC_RECV) {
				maybe_unmap(t, &q->sq.ring);
				maybe_unmap(t, &q->rq.ring);
			}
			t->qp[i].qp = NULL;
		}
	for (i = 0; i < NSRQ; i++)
		if (t->srq[i] && t->srq_ctx[i] == c) {
			maybe_unmap(t, &to_shca_srq(t->srq[i])->wq.ring);
			t->srq[i] = NULL;
		}
	FORGET(mw, mw_ctx, NMW);
	FORGET(mr, mr_ctx, NMR);
	/*
	 * A CQ's ring stays mapped: a QP of another context may name it
	 * (a foreign pick), and the provider cleans it when that QP goes.
	 */
	for (i = 0; i < NCQ; i++)
		if (t->cq[i] && t->cq_ctx[i] == c) {
			t->cq[i] = NULL;
			t->cqx[i] = NULL;
		}
	FORGET(ch, ch_ctx, NCH);
	FORGET(xrcd, xrcd_ctx, NXRCD);
	FORGET(pd, pd_ctx, NPD);
#undef FORGET
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void do_open(struct thr *t)
{
	int c = 1 + (int)below(t, NCTX - 1);

	if (t->ctx[c])
		return;
	t->ctx[c] = recp(t, V_open_device, c, ibv_open_device(dev));
	if (t->ctx[c])
		nonblock(t->ctx[c]->async_fd);
}

static void do_close(struct thr *t)
{
	int c = 1 + (int)below(t, NCTX - 1);

	if (!t->ctx[c])
		return;
	rec(t, V_close_device, c, ibv_close_device(t->ctx[c]) ? EIO : 0);
	t->ctx[c] = NULL;
	forget_ctx(t, c);
}

static void do_query(struct thr *t)
{
	struct ibv_device_attr_ex da;
	struct ibv_port_attr pa;
	int c = pick_ctx(t);

	if (c < 0)
		return;
	rec(t, V_query_device_ex, c, ibv_query_device_ex(t->ctx[c], NULL, &da));
	rec(t, V_query_port, c, ibv_query_port(t->ctx[c],
					      chance(t, 90) ? 1 : (uint8_t)rnd(t), &pa));
}

static void do_async(struct thr *t)
{
	struct ibv_async_event ev;
	int c = pick_ctx(t), n = 0;

	/* a child leaves the parent's queue alone (see do_fork) */
	if (c < 0 || (t->child && t->ctx[c] == shared_ctx))
		return;
	while (n++ < 8 && !ibv_get_async_event(t->ctx[c], &ev)) {
		rec(t, V_get_async_event, c, 0);
		ibv_ack_async_event(&ev);
	}
}

/* ---- PD, MR, MW, channels ------------------------------------------------ */

static void do_pd(struct thr *t)
{
	int s = freeslot(t, pd), c = pick_ctx(t);

	if (s >= 0 && c >= 0 && chance(t, 70)) {
		t->pd[s] = recp(t, V_alloc_pd, s, ibv_alloc_pd(t->ctx[c]));
		t->pd_ctx[s] = c;
		return;
	}
	s = pick(t, pd, pd_ctx, -1);
	if (s >= 0 && !rec(t, V_dealloc_pd, s, ibv_dealloc_pd(t->pd[s])))
		t->pd[s] = NULL;
}

static int some_access(struct thr *t)
{
	static const int bits[] = {
		IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_MW_BIND, IBV_ACCESS_ZERO_BASED,
		IBV_ACCESS_ON_DEMAND, IBV_ACCESS_RELAXED_ORDERING,
	};
	int a = 0;
	unsigned int i;

	if (chance(t, 3))
		return (int)rnd(t);
	if (chance(t, 60))
		return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		       IBV_ACCESS_MW_BIND;
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (chance(t, 30))
			a |= bits[i];
	return a;
}

/*
 * A range for an MR: inside the buffer, or (5%) at an address that maps
 * nothing.  Never reaching past the buffer into memory of ours: what the
 * device writes there (RDMA WRITE, READ responses, receives) would
 * corrupt this process, not test the kernel.
 */
static void mr_range(struct thr *t, uint64_t *addr, uint32_t *len)
{
	uint32_t off = below(t, BUFSZ);

	*len = below(t, 5) ? below(t, 4096) : below(t, BUFSZ - off + 1);
	if (off + *len > BUFSZ)
		*len = BUFSZ - off;
	*addr = (uintptr_t)t->buf + off;
	if (chance(t, 5)) {
		*addr = 0xffff800000000000ull | rnd(t);	/* the kernel's half */
		*len = (uint32_t)rnd(t);
	}
}

static void do_mr(struct thr *t)
{
	int s = freeslot(t, mr), p = pick(t, pd, pd_ctx, -1);
	uint64_t addr;
	uint32_t len;

	mr_range(t, &addr, &len);
	if (s >= 0 && p >= 0 && chance(t, 60)) {
		t->mr[s] = recp(t, V_reg_mr, s,
				ibv_reg_mr(t->pd[p], (void *)(uintptr_t)addr,
					   len, some_access(t)));
		t->mr_ctx[s] = t->pd_ctx[p];
		return;
	}
	s = pick(t, mr, mr_ctx, -1);
	if (s < 0)
		return;
	if (chance(t, 40)) {
		int flags = (int)below(t, 8) & (IBV_REREG_MR_CHANGE_TRANSLATION |
						IBV_REREG_MR_CHANGE_PD |
						IBV_REREG_MR_CHANGE_ACCESS);

		p = pick(t, pd, pd_ctx, t->mr_ctx[s]);
		if (p < 0)
			flags &= ~IBV_REREG_MR_CHANGE_PD;
		/* a failed rereg leaves the MR unusable: dereg it then */
		if (rec(t, V_rereg_mr, s,
			ibv_rereg_mr(t->mr[s], flags, p >= 0 ? t->pd[p] : NULL,
				     (void *)(uintptr_t)addr, len,
				     some_access(t))) == 0)
			return;
	}
	if (!rec(t, V_dereg_mr, s, ibv_dereg_mr(t->mr[s])))
		t->mr[s] = NULL;
}

static void do_mw(struct thr *t)
{
	int s = freeslot(t, mw), p = pick(t, pd, pd_ctx, -1), q, m;
	struct ibv_mw_bind b = {};

	if (s >= 0 && p >= 0 && chance(t, 50)) {
		t->mw[s] = recp(t, V_alloc_mw, s,
				ibv_alloc_mw(t->pd[p], chance(t, 50) ?
					     IBV_MW_TYPE_1 : IBV_MW_TYPE_2));
		t->mw_ctx[s] = t->pd_ctx[p];
		return;
	}
	s = pick(t, mw, mw_ctx, -1);
	if (s < 0)
		return;
	if (chance(t, 50) && t->mw[s]->type == IBV_MW_TYPE_1) {
		q = pick_qp(t, t->mw_ctx[s]);
		m = pick(t, mr, mr_ctx, t->mw_ctx[s]);
		if (q < 0 || m < 0 || t->qp[q].rss ||
		    t->qp[q].type == IBV_QPT_XRC_RECV)
			return;
		b.wr_id = rnd(t);
		b.send_flags = chance(t, 50) ? IBV_SEND_SIGNALED : 0;
		b.bind_info.mr = t->mr[m];
		b.bind_info.addr = (uintptr_t)t->mr[m]->addr + below(t, 64);
		b.bind_info.length = below(t, 8192);
		b.bind_info.mw_access_flags = some_access(t) &
			(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED);
		rec(t, V_bind_mw, s, ibv_bind_mw(t->qp[q].qp, t->mw[s], &b));
		return;
	}
	if (!rec(t, V_dealloc_mw, s, ibv_dealloc_mw(t->mw[s])))
		t->mw[s] = NULL;
}

static void do_ch(struct thr *t)
{
	int s = freeslot(t, ch), c = pick_ctx(t);
	struct ibv_cq *cq;
	void *cqctx;
	int n = 0;

	if (s >= 0 && c >= 0 && chance(t, 60)) {
		t->ch[s] = recp(t, V_create_comp_channel, s,
				ibv_create_comp_channel(t->ctx[c]));
		t->ch_ctx[s] = c;
		if (t->ch[s])
			nonblock(t->ch[s]->fd);
		return;
	}
	s = pick(t, ch, ch_ctx, -1);
	if (s < 0)
		return;
	if (chance(t, 70)) {
		while (n++ < 8 && !ibv_get_cq_event(t->ch[s], &cq, &cqctx)) {
			rec(t, V_get_cq_event, s, 0);
			ibv_ack_cq_events(cq, 1);
		}
		return;
	}
	/* EBUSY while a CQ uses it */
	if (!rec(t, V_destroy_comp_channel, s,
		 ibv_destroy_comp_channel(t->ch[s])))
		t->ch[s] = NULL;
}

/* ---- CQs ----------------------------------------------------------------- */

static int some_cqe(struct thr *t)
{
	if (chance(t, 3))
		return (int)rnd(t);
	if (chance(t, 5))
		return 0;
	return 1 + (int)below(t, chance(t, 80) ? 64 : 4096);
}

static void do_cq_create(struct thr *t, int s, int c)
{
	struct ibv_cq_init_attr_ex a = {};
	int h = pick_own(t, ch, ch_ctx, c);
	struct ibv_comp_channel *ch = h >= 0 && chance(t, 50) ? t->ch[h] : NULL;
	int vec = chance(t, 90) ? (int)below(t, (unsigned int)t->ctx[c]->num_comp_vectors)
				: (int)rnd(t);

	t->cq_ctx[s] = c;
	t->cq_nopoll[s] = false;
	t->cqx[s] = NULL;
	if (chance(t, 50)) {
		t->cq[s] = recp(t, V_create_cq, s,
				ibv_create_cq(t->ctx[c], some_cqe(t), NULL, ch,
					      vec));
		return;
	}
	a.cqe = (uint32_t)some_cqe(t);
	a.channel = ch;
	a.comp_vector = (uint32_t)vec;
	a.wc_flags = rnd(t) & (chance(t, 90) ? IBV_WC_STANDARD_FLAGS |
			       IBV_WC_EX_WITH_TM_INFO |
			       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : ~0ull);
	if (chance(t, 30)) {
		a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		a.flags = (uint32_t)below(t, 4);
	}
	t->cqx[s] = recp(t, V_create_cq_ex, s, ibv_create_cq_ex(t->ctx[c], &a));
	t->cq[s] = t->cqx[s] ? ibv_cq_ex_to_cq(t->cqx[s]) : NULL;
}

static void poll_some(struct thr *t, int s)
{
	struct ibv_wc wc[8];
	int n;

	if (t->cq_nopoll[s])
		return;
	if (t->cqx[s] && chance(t, 50)) {
		struct ibv_poll_cq_attr pa = {};
		int r = ibv_start_poll(t->cqx[s], &pa);

		rec(t, V_poll_cq, s, r == ENOENT ? 0 : r);
		if (!r) {
			n = 0;
			do {
				(void)ibv_wc_read_opcode(t->cqx[s]);
				(void)ibv_wc_read_byte_len(t->cqx[s]);
			} while (++n < 16 && !ibv_next_poll(t->cqx[s]));
			ibv_end_poll(t->cqx[s]);
		}
		return;
	}
	n = ibv_poll_cq(t->cq[s], 1 + (int)below(t, 8), wc);
	rec(t, V_poll_cq, s, n < 0 ? EIO : 0);
}

static void do_cq(struct thr *t)
{
	int s = freeslot(t, cq), c = pick_ctx(t);

	if (s >= 0 && c >= 0 && chance(t, 40)) {
		do_cq_create(t, s, c);
		return;
	}
	s = pick(t, cq, cq_ctx, -1);
	if (s < 0)
		return;
	switch (below(t, 8)) {
	case 0:
		rec(t, V_resize_cq, s, ibv_resize_cq(t->cq[s], some_cqe(t)));
		break;
	case 1:
		rec(t, V_req_notify_cq, s, ibv_req_notify_cq(t->cq[s],
							     (int)below(t, 2)));
		break;
	case 2:
		/* EBUSY while a QP, SRQ or WQ uses it */
		if (!rec(t, V_destroy_cq, s, ibv_destroy_cq(t->cq[s]))) {
			t->cq[s] = NULL;
			t->cqx[s] = NULL;
		}
		break;
	default:
		poll_some(t, s);
	}
}

/* ---- XRCD, SRQ ----------------------------------------------------------- */

static void do_xrcd(struct thr *t)
{
	int s = freeslot(t, xrcd), c = pick_ctx(t);
	struct ibv_xrcd_init_attr a = {};

	if (s >= 0 && c >= 0 && chance(t, 60)) {
		a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
		a.fd = -1;
		a.oflags = O_CREAT;
		if (chance(t, 5))
			a.fd = (int)below(t, 64);	/* whatever fd that is */
		t->xrcd[s] = recp(t, V_open_xrcd, s, ibv_open_xrcd(t->ctx[c], &a));
		t->xrcd_ctx[s] = c;
		return;
	}
	s = pick(t, xrcd, xrcd_ctx, -1);
	if (s >= 0 && !rec(t, V_close_xrcd, s, ibv_close_xrcd(t->xrcd[s])))
		t->xrcd[s] = NULL;
}

static void do_srq_create(struct thr *t, int s, int p)
{
	int c = t->pd_ctx[p], q = pick_own(t, cq, cq_ctx, c);
	int x = pick_own(t, xrcd, xrcd_ctx, c);
	struct ibv_srq_init_attr_ex a = {};
	unsigned int k = below(t, 3);
	enum verb v = V_create_srq;

	a.attr.max_wr = chance(t, 95) ? 1 + below(t, 64) : (uint32_t)rnd(t);
	a.attr.max_sge = chance(t, 95) ? 1 + below(t, 4) : (uint32_t)rnd(t);
	a.attr.srq_limit = chance(t, 80) ? 0 : below(t, 64);
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	a.pd = t->pd[p];
	a.srq_type = IBV_SRQT_BASIC;
	if (k == 1 && x >= 0 && q >= 0) {
		v = V_create_srq_xrc;
		a.srq_type = IBV_SRQT_XRC;
		a.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
		a.xrcd = t->xrcd[x];
		a.cq = t->cq[q];
	} else if (k == 2 && q >= 0) {
		v = V_create_srq_tm;
		a.srq_type = IBV_SRQT_TM;
		a.comp_mask |= IBV_SRQ_INIT_ATTR_TM | IBV_SRQ_INIT_ATTR_CQ;
		a.cq = t->cq[q];
		a.tm_cap.max_num_tags = chance(t, 90) ? 1 + below(t, 32) : (uint32_t)rnd(t);
		a.tm_cap.max_ops = chance(t, 90) ? 1 + below(t, 16) : (uint32_t)rnd(t);
	}
	t->srq[s] = recp(t, v, s, ibv_create_srq_ex(t->ctx[c], &a));
	t->srq_ctx[s] = c;
	t->srq_type[s] = a.srq_type;
	if (t->srq[s] && a.srq_type == IBV_SRQT_XRC) {
		uint32_t n;

		if (!ibv_get_srq_num(t->srq[s], &n))
			known_srqn[below(t, 16)] = n;
	}
}

static void do_srq(struct thr *t)
{
	int s = freeslot(t, srq), p = pick(t, pd, pd_ctx, -1);
	struct ibv_srq_attr a = {};

	if (s >= 0 && p >= 0 && chance(t, 40)) {
		do_srq_create(t, s, p);
		return;
	}
	s = pick(t, srq, srq_ctx, -1);
	if (s < 0)
		return;
	switch (below(t, 4)) {
	case 0:
		a.max_wr = chance(t, 90) ? 1 + below(t, 128) : (uint32_t)rnd(t);
		a.srq_limit = below(t, 64);
		rec(t, V_modify_srq, s, ibv_modify_srq(t->srq[s], &a,
						       (int)below(t, 4)));
		break;
	case 1:
		rec(t, V_query_srq, s, ibv_query_srq(t->srq[s], &a));
		break;
	default:
		if (!rec(t, V_destroy_srq, s, ibv_destroy_srq(t->srq[s])))
			t->srq[s] = NULL;
	}
}

/* ---- QPs ------------------------------------------------------------------ */

static void some_cap(struct thr *t, struct ibv_qp_cap *c)
{
	c->max_send_wr = chance(t, 95) ? below(t, 64) : (uint32_t)rnd(t);
	c->max_recv_wr = chance(t, 95) ? below(t, 64) : (uint32_t)rnd(t);
	c->max_send_sge = chance(t, 95) ? below(t, 5) : (uint32_t)rnd(t);
	c->max_recv_sge = chance(t, 95) ? below(t, 5) : (uint32_t)rnd(t);
	c->max_inline_data = chance(t, 70) ? 0 :
			     chance(t, 95) ? below(t, 512) : (uint32_t)rnd(t);
}

static const uint8_t rss_key[40] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b };

static void do_ind(struct thr *t);

static void do_qp_create(struct thr *t, int s, int p)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND,
		IBV_QPT_XRC_RECV, IBV_QPT_RAW_PACKET, IBV_QPT_RC, IBV_QPT_RAW_PACKET,
	};
	static const enum verb vs[] = {
		V_create_qp_rc, V_create_qp_uc, V_create_qp_ud,
		V_create_qp_xrc_ini, V_create_qp_xrc_tgt, V_create_qp_raw,
		V_create_qp_ex_ops, V_create_qp_rss,
	};
	unsigned int k = below(t, 8);
	int c = t->pd_ctx[p], sc = pick_own(t, cq, cq_ctx, c);
	int rc = pick_own(t, cq, cq_ctx, c), sr = pick_own(t, srq, srq_ctx, c);
	int x = pick_own(t, xrcd, xrcd_ctx, c), in = pick_own(t, ind, ind_ctx, c);
	struct ibv_qp_init_attr_ex a = {};
	struct qpslot *q = &t->qp[s];

	a.qp_type = types[k];
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = t->pd[p];
	a.send_cq = sc >= 0 ? t->cq[sc] : NULL;
	a.recv_cq = rc >= 0 ? t->cq[rc] : NULL;
	a.sq_sig_all = (int)below(t, 2);
	some_cap(t, &a.cap);
	if (sr >= 0 && chance(t, 30) && t->srq_type[sr] != IBV_SRQT_XRC)
		a.srq = t->srq[sr];
	if (a.qp_type == IBV_QPT_XRC_RECV) {
		if (x < 0)
			return;
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = t->xrcd[x];
		a.pd = NULL;
		a.send_cq = a.recv_cq = NULL;
		a.srq = NULL;
	}
	if (a.qp_type == IBV_QPT_XRC_SEND)
		a.srq = NULL;
	if (k == 6) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = chance(t, 90) ?
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND_WITH_IMM |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
			IBV_QP_EX_WITH_BIND_MW : rnd(t);
	}
	if (k == 7) {
		if (in < 0) {
			do_ind(t);	/* an RSS QP needs a table: make one */
			in = pick_own(t, ind, ind_ctx, c);
		}
		if (in < 0)
			return;
		a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			      IBV_QP_INIT_ATTR_RX_HASH;
		a.rwq_ind_tbl = t->ind[in];
		a.send_cq = a.recv_cq = NULL;
		a.srq = NULL;
		memset(&a.cap, 0, sizeof(a.cap));
		a.rx_hash_conf.rx_hash_function = chance(t, 95) ?
			IBV_RX_HASH_FUNC_TOEPLITZ : (uint8_t)rnd(t);
		a.rx_hash_conf.rx_hash_key_len = chance(t, 95) ? 40 : (uint8_t)rnd(t);
		a.rx_hash_conf.rx_hash_key = (uint8_t *)rss_key;
		a.rx_hash_conf.rx_hash_fields_mask = chance(t, 90) ?
			rnd(t) & 0xff : rnd(t);
	}
	q->qp = recp(t, vs[k], s, ibv_create_qp_ex(t->ctx[c], &a));
	q->ctx = c;
	q->type = a.qp_type;
	q->rss = k == 7;
	q->opened = false;
	q->ops = k == 6 ? a.send_ops_flags : 0;
	q->state = IBV_QPS_RESET;
	if (q->qp)
		remember_qpn(t, q->qp->qp_num);
}

static void do_open_qp(struct thr *t, int s)
{
	int x = pick(t, xrcd, xrcd_ctx, -1);
	struct ibv_qp_open_attr a = {};
	struct qpslot *q = &t->qp[s];

	if (x < 0)
		return;
	a.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		      IBV_QP_OPEN_ATTR_TYPE;
	a.qp_num = some_qpn(t);
	a.xrcd = t->xrcd[x];
	a.qp_type = IBV_QPT_XRC_RECV;
	q->qp = recp(t, V_open_qp, s,
		     ibv_open_qp(t->ctx[t->xrcd_ctx[x]], &a));
	q->ctx = t->xrcd_ctx[x];
	q->type = IBV_QPT_XRC_RECV;
	q->rss = false;
	q->opened = true;
	q->ops = 0;
	q->state = IBV_QPS_RESET;
}

/*
 * Attributes for moving @q to @to: mostly the mask the transition wants,
 * with plausible values (our own GID, known QP numbers), sometimes extra
 * or missing bits and random values.
 */
static int qp_attr(struct thr *t, struct qpslot *q, enum ibv_qp_state to,
		   struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE;
	bool conn = q->type == IBV_QPT_RC || q->type == IBV_QPT_UC ||
		    q->type == IBV_QPT_XRC_SEND || q->type == IBV_QPT_XRC_RECV;
	bool dgram = q->type == IBV_QPT_UD || q->type == IBV_QPT_RAW_PACKET;

	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	a->cur_qp_state = q->state;
	a->port_num = chance(t, 95) ? 1 : (uint8_t)rnd(t);
	a->pkey_index = chance(t, 95) ? 0 : (uint16_t)rnd(t);
	a->qkey = chance(t, 90) ? QKEY : (uint32_t)rnd(t);
	a->qp_access_flags = some_access(t);
	a->path_mtu = chance(t, 90) ? 1 + below(t, 5) : (enum ibv_mtu)rnd(t);
	a->dest_qp_num = some_qpn(t);
	a->rq_psn = (uint32_t)rnd(t) & (chance(t, 95) ? 0xffffff : ~0u);
	a->sq_psn = (uint32_t)rnd(t) & (chance(t, 95) ? 0xffffff : ~0u);
	a->max_dest_rd_atomic = (uint8_t)below(t, chance(t, 95) ? 17 : 256);
	a->max_rd_atomic = (uint8_t)below(t, chance(t, 95) ? 17 : 256);
	a->min_rnr_timer = (uint8_t)below(t, 32);
	a->timeout = (uint8_t)(chance(t, 90) ? 8 + below(t, 8) : below(t, 32));
	a->retry_cnt = (uint8_t)below(t, 8);
	a->rnr_retry = (uint8_t)below(t, 8);
	a->sq_draining = (uint8_t)below(t, 2);
	a->en_sqd_async_notify = (uint8_t)below(t, 2);
	a->ah_attr.is_global = chance(t, 95);
	a->ah_attr.port_num = chance(t, 95) ? 1 : (uint8_t)rnd(t);
	a->ah_attr.sl = (uint8_t)below(t, 16);
	a->ah_attr.static_rate = (uint8_t)below(t, 20);
	some_gid(t, &a->ah_attr.grh.dgid);
	a->ah_attr.grh.sgid_index = (uint8_t)(chance(t, 95) ? (uint64_t)gid_index : rnd(t));
	a->ah_attr.grh.hop_limit = (uint8_t)rnd(t);
	a->ah_attr.grh.traffic_class = (uint8_t)rnd(t);
	a->ah_attr.grh.flow_label = (uint32_t)rnd(t) & 0xfffff;
	if (chance(t, 5))
		a->alt_ah_attr = a->ah_attr;

	switch (to) {
	case IBV_QPS_INIT:
		if (q->state != IBV_QPS_RESET)
			break;
		mask |= IBV_QP_PORT;
		if (q->type != IBV_QPT_RAW_PACKET)
			mask |= IBV_QP_PKEY_INDEX;
		if (dgram && q->type == IBV_QPT_UD)
			mask |= IBV_QP_QKEY;
		if (conn)
			mask |= IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		if (conn)
			mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN;
		if (q->type == IBV_QPT_RC || q->type == IBV_QPT_XRC_RECV)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTS:
		mask |= IBV_QP_SQ_PSN;
		if (q->type == IBV_QPT_RC || q->type == IBV_QPT_XRC_SEND)
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	case IBV_QPS_SQD:
		mask |= IBV_QP_EN_SQD_ASYNC_NOTIFY * (int)below(t, 2);
		break;
	default:
		break;
	}
	if (chance(t, 10))
		mask |= (int)(rnd(t) & ((1 << 21) - 1));
	if (chance(t, 5))
		mask &= ~(int)(rnd(t) & ((1 << 21) - 1)) | IBV_QP_STATE;
	if (chance(t, 10))
		mask |= IBV_QP_CUR_STATE;
	return mask;
}

static enum ibv_qp_state next_state(struct thr *t, enum ibv_qp_state s)
{
	if (chance(t, 25))
		return (enum ibv_qp_state)below(t, 7);	/* RESET..ERR, UNKNOWN */
	switch (s) {
	case IBV_QPS_RESET:
		return IBV_QPS_INIT;
	case IBV_QPS_INIT:
		return IBV_QPS_RTR;
	case IBV_QPS_RTR:
		return IBV_QPS_RTS;
	case IBV_QPS_RTS:
		return chance(t, 50) ? IBV_QPS_SQD : IBV_QPS_RTS;
	default:
		return chance(t, 50) ? IBV_QPS_RESET : IBV_QPS_ERR;
	}
}

static void modify(struct thr *t, int s, enum ibv_qp_state to)
{
	struct qpslot *q = &t->qp[s];
	struct ibv_qp_attr a;
	int mask = qp_attr(t, q, to, &a);

	if (!rec(t, V_modify_qp, s, ibv_modify_qp(q->qp, &a, mask)))
		q->state = to;
}

/*
 * Bring RC/UC QP @s to RTS facing QP @d (maybe itself) through our own
 * GID, with the right masks: traffic that can really flow.
 */
static void connect_qps(struct thr *t, int s, int d)
{
	struct qpslot *q = &t->qp[s];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_ah_attr ah;
	int r;

	gid_ah(&ah, my_gid.raw, gid_index, 64);
	r = ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
	r = r ?: qp_init(q->qp, IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	r = r ?: qp_rtr(q->qp, &ah, t->qp[d].qp->qp_num, 0x100, 4, 1);
	r = r ?: qp_rts(q->qp, 0x100, 10, 2, 2, 4);
	q->state = r ? IBV_QPS_UNKNOWN : IBV_QPS_RTS;
	rec(t, V_connect_qps, s, r);
}

/* UD QP @s to RTS, the usual way. */
static void ud_up(struct thr *t, int s)
{
	modify(t, s, IBV_QPS_RESET);
	modify(t, s, IBV_QPS_INIT);
	modify(t, s, IBV_QPS_RTR);
	modify(t, s, IBV_QPS_RTS);
}

static void do_qp(struct thr *t)
{
	int s = free_qp(t), p = pick(t, pd, pd_ctx, -1), d;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct qpslot *q;

	if (s >= 0 && p >= 0 && chance(t, 30)) {
		if (chance(t, 8))
			do_open_qp(t, s);
		else
			do_qp_create(t, s, p);
		return;
	}
	s = pick_qp(t, -1);
	if (s < 0)
		return;
	q = &t->qp[s];
	switch (below(t, 10)) {
	case 0:
	case 1:
	case 2:
		modify(t, s, next_state(t, q->state));
		break;
	case 3:
		rec(t, V_query_qp, s, ibv_query_qp(q->qp, &a, chance(t, 80) ?
						   (int)below(t, 1 << 21) | IBV_QP_STATE :
						   (int)rnd(t), &ia));
		break;
	case 4:
	case 5:
		if (q->type == IBV_QPT_UD) {
			ud_up(t, s);
			break;
		}
		if ((q->type != IBV_QPT_RC && q->type != IBV_QPT_UC) || q->rss)
			break;
		d = pick_qp(t, -1);
		if (d >= 0 && (t->qp[d].type == q->type || chance(t, 10))) {
			connect_qps(t, s, d);
			if (d != s && t->qp[d].type == q->type && !t->qp[d].rss)
				connect_qps(t, d, s);
		}
		break;
	case 6:
		if (!rec(t, V_destroy_qp, s, ibv_destroy_qp(q->qp)))
			q->qp = NULL;
		break;
	default:
		break;
	}
}

/* ---- WQ, indirection table, flow, AH, multicast --------------------------- */

static void do_wq(struct thr *t)
{
	int s = freeslot(t, wq), p = pick(t, pd, pd_ctx, -1), q;
	struct ibv_wq_init_attr a = {};
	struct ibv_wq_attr m = {};

	if (s >= 0 && p >= 0 && chance(t, 40)) {
		q = pick_own(t, cq, cq_ctx, t->pd_ctx[p]);
		if (q < 0)
			return;
		a.wq_type = chance(t, 95) ? IBV_WQT_RQ : (enum ibv_wq_type)rnd(t);
		a.max_wr = chance(t, 95) ? 1 + below(t, 64) : (uint32_t)rnd(t);
		a.max_sge = chance(t, 95) ? 1 + below(t, 4) : (uint32_t)rnd(t);
		a.pd = t->pd[p];
		a.cq = t->cq[q];
		if (chance(t, 30)) {
			a.comp_mask = IBV_WQ_INIT_ATTR_FLAGS;
			a.create_flags = (uint32_t)rnd(t) & (chance(t, 90) ? 0xf : ~0u);
		}
		t->wq[s] = recp(t, V_create_wq, s,
				ibv_create_wq(t->ctx[t->pd_ctx[p]], &a));
		t->wq_ctx[s] = t->pd_ctx[p];
		return;
	}
	s = pick(t, wq, wq_ctx, -1);
	if (s < 0)
		return;
	if (chance(t, 60)) {
		m.attr_mask = IBV_WQ_ATTR_STATE | (chance(t, 20) ? IBV_WQ_ATTR_CURR_STATE : 0) |
			      (chance(t, 20) ? IBV_WQ_ATTR_FLAGS : 0);
		/*
		 * States RDY, RESET and ERR only: Linux's
		 * ib_uverbs_ex_modify_wq() (6.1 and 6.12 alike) returns
		 * -EINVAL for a state above IB_WQS_ERR with the WQ's read
		 * lock still held; the WQ can never be destroyed then, and
		 * closing the context WARNs in __uverbs_cleanup_ufile().
		 * An ib_core bug, not shca's (found by verbs_fuzz, seed
		 * 0x37f0, as nobody): left out, not failed for ever.
		 */
		m.wq_state = (enum ibv_wq_state)below(t, 3);
		m.curr_wq_state = (enum ibv_wq_state)below(t, 3);
		m.flags = (uint32_t)below(t, 16);
		m.flags_mask = (uint32_t)below(t, 16);
		rec(t, V_modify_wq, s, ibv_modify_wq(t->wq[s], &m));
		return;
	}
	if (!rec(t, V_destroy_wq, s, ibv_destroy_wq(t->wq[s])))
		t->wq[s] = NULL;
}

static void do_ind(struct thr *t)
{
	int s = freeslot(t, ind), w = pick(t, wq, wq_ctx, -1), i;
	struct ibv_rwq_ind_table_init_attr a = {};
	struct ibv_wq *wqs[8];

	if (s >= 0 && w >= 0 && chance(t, 70)) {
		a.log_ind_tbl_size = below(t, chance(t, 95) ? 4 : 32);
		for (i = 0; i < 8; i++) {
			int x = pick(t, wq, wq_ctx, t->wq_ctx[w]);

			wqs[i] = x >= 0 ? t->wq[x] : t->wq[w];
		}
		a.ind_tbl = wqs;
		if (a.log_ind_tbl_size > 3)	/* more entries than we have */
			a.log_ind_tbl_size = 3;
		t->ind[s] = recp(t, V_create_rwq_ind_table, s,
				 ibv_create_rwq_ind_table(t->ctx[t->wq_ctx[w]], &a));
		t->ind_ctx[s] = t->wq_ctx[w];
		return;
	}
	s = pick(t, ind, ind_ctx, -1);
	if (s >= 0 && !rec(t, V_destroy_rwq_ind_table, s,
			   ibv_destroy_rwq_ind_table(t->ind[s])))
		t->ind[s] = NULL;
}

struct flow_buf {
	struct ibv_flow_attr attr;
	uint8_t specs[512];
};

/* A rule of 0..3 specs: ETH, IPv4, UDP/TCP, mostly well formed. */
static void some_flow(struct thr *t, struct flow_buf *f)
{
	uint8_t *p = f->specs;
	unsigned int i, n = below(t, 4);

	memset(f, 0, sizeof(*f));
	f->attr.type = chance(t, 80) ? IBV_FLOW_ATTR_NORMAL :
		       (enum ibv_flow_attr_type)below(t, 5);
	f->attr.priority = (uint16_t)below(t, chance(t, 90) ? 8 : 65536);
	f->attr.port = chance(t, 95) ? 1 : (uint8_t)rnd(t);
	f->attr.flags = chance(t, 80) ? 0 : (uint32_t)rnd(t) & 0xf;
	for (i = 0; i < n; i++) {
		struct ibv_flow_spec_eth *e = (void *)p;
		struct ibv_flow_spec_ipv4 *v4 = (void *)p;
		struct ibv_flow_spec_tcp_udp *tu = (void *)p;

		switch (i) {
		case 0:
			e->type = IBV_FLOW_SPEC_ETH;
			e->size = sizeof(*e);
			rnd_bytes(t, &e->val, sizeof(e->val));
			rnd_bytes(t, &e->mask, sizeof(e->mask));
			p += sizeof(*e);
			break;
		case 1:
			v4->type = IBV_FLOW_SPEC_IPV4;
			v4->size = sizeof(*v4);
			rnd_bytes(t, &v4->val, sizeof(v4->val));
			rnd_bytes(t, &v4->mask, sizeof(v4->mask));
			p += sizeof(*v4);
			break;
		default:
			tu->type = chance(t, 50) ? IBV_FLOW_SPEC_UDP : IBV_FLOW_SPEC_TCP;
			tu->size = sizeof(*tu);
			rnd_bytes(t, &tu->val, sizeof(tu->val));
			rnd_bytes(t, &tu->mask, sizeof(tu->mask));
			p += sizeof(*tu);
		}
		if (chance(t, 3))	/* a spec of a lying size */
			((struct ibv_flow_spec_eth *)(p - 8))->size ^= (uint16_t)rnd(t);
	}
	f->attr.num_of_specs = (uint8_t)n;
	f->attr.size = (uint16_t)(sizeof(f->attr) + (size_t)(p - f->specs));
}

static void do_flow(struct thr *t)
{
	int s = freeslot(t, flow), q = pick_qp(t, -1), i;
	struct flow_buf f;

	/* mostly on a raw packet or RSS QP, where flows belong */
	for (i = 0; i < NQP && chance(t, 80); i++)
		if (t->qp[i].qp && t->qp[i].type == IBV_QPT_RAW_PACKET) {
			q = i;
			break;
		}
	if (s >= 0 && q >= 0 && chance(t, 60)) {
		some_flow(t, &f);
		t->flow[s] = recp(t, V_create_flow, s,
				  ibv_create_flow(t->qp[q].qp, &f.attr));
		t->flow_ctx[s] = t->qp[q].ctx;
		return;
	}
	s = pick(t, flow, flow_ctx, -1);
	if (s >= 0 && !rec(t, V_destroy_flow, s, ibv_destroy_flow(t->flow[s])))
		t->flow[s] = NULL;
}

static void do_ah(struct thr *t)
{
	int s = freeslot(t, ah), p = pick(t, pd, pd_ctx, -1);
	struct ibv_ah_attr a = {};

	if (s >= 0 && p >= 0 && chance(t, 50)) {
		a.is_global = chance(t, 95);
		a.port_num = chance(t, 95) ? 1 : (uint8_t)rnd(t);
		a.sl = (uint8_t)below(t, 16);
		a.static_rate = (uint8_t)below(t, 20);
		some_gid(t, &a.grh.dgid);
		a.grh.sgid_index = (uint8_t)(chance(t, 95) ? (uint64_t)gid_index : rnd(t));
		a.grh.hop_limit = (uint8_t)rnd(t);
		a.grh.traffic_class = (uint8_t)rnd(t);
		t->ah[s] = recp(t, V_create_ah, s, ibv_create_ah(t->pd[p], &a));
		t->ah_ctx[s] = t->pd_ctx[p];
		return;
	}
	s = pick(t, ah, ah_ctx, -1);
	if (s >= 0 && !rec(t, V_destroy_ah, s, ibv_destroy_ah(t->ah[s])))
		t->ah[s] = NULL;
}

/*
 * Never on a handle of ibv_open_qp(): Linux's ib_uverbs (6.1's, the test
 * kernel's source) leaves the multicast mutex of such a handle's uobject
 * uninitialised (ib_uverbs_open_qp() has no mutex_init(&obj->mcast_lock)),
 * and attach/detach lock it before any check of the QP reaches the driver:
 * a debug kernel warns (DEBUG_LOCKS_WARN_ON(lock->magic != lock),
 * mutex.c), a stock one is fine until two callers contend for it.  No
 * driver code runs on that path, so it tests nothing of shca's.
 */
static void do_mcast(struct thr *t)
{
	int s = pick_qp(t, -1);
	union ibv_gid g = {};
	uint16_t lid = 0;

	if (s < 0 || t->qp[s].opened)
		return;
	g.raw[0] = 0xff;
	g.raw[1] = 0x0e;
	g.raw[10] = 0xff;
	g.raw[11] = 0xff;
	g.raw[12] = 239;
	g.raw[15] = (uint8_t)below(t, 4);
	if (chance(t, 10))
		rnd_bytes(t, &g, sizeof(g));
	if (chance(t, 60))
		rec(t, V_attach_mcast, s, ibv_attach_mcast(t->qp[s].qp, &g, lid));
	else
		rec(t, V_detach_mcast, s, ibv_detach_mcast(t->qp[s].qp, &g, lid));
}

/* ---- posting ------------------------------------------------------------- */

static void some_sges(struct thr *t, struct ibv_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		some_range(t, &sg[i].addr, &sg[i].length);
		sg[i].length %= 2048;
		sg[i].lkey = some_key(t, false);
	}
}

static const enum ibv_wr_opcode send_ops[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
	IBV_WR_TSO, IBV_WR_DRIVER1,
};

/*
 * The provider copies an inline WR's data from the caller's memory as it
 * posts (every provider does): a wild address there is this program's
 * own segfault, not a finding.  @x's SGEs, when it is inline, point into
 * the buffer (no random number drawn: the sequence stays the seed's).
 */
static void inline_in_buf(struct thr *t, struct ibv_send_wr *x)
{
	int j;

	if (!(x->send_flags & IBV_SEND_INLINE))
		return;
	for (j = 0; j < x->num_sge; j++) {
		x->sg_list[j].addr = (uintptr_t)t->buf +
			x->sg_list[j].addr % (BUFSZ - 2048);
		x->sg_list[j].length %= 2048;
	}
}

/*
 * A chain of 1..4 send WRs for @q in @wr (4 entries) and @sg (NSG: WR i
 * takes its num_sge entries from sg[4 * i], at most 63 of them).
 */
static void some_send_wrs(struct thr *t, struct qpslot *q,
			  struct ibv_send_wr *wr, struct ibv_sge *sg)
{
	int i, n = 1 + (int)below(t, 4), a = pick(t, ah, ah_ctx, q->ctx);
	int w = pick(t, mw, mw_ctx, q->ctx), m = pick(t, mr, mr_ctx, q->ctx);
	uint32_t len;

	if (a < 0)
		a = pick(t, ah, ah_ctx, -1);
	memset(wr, 0, 4 * sizeof(*wr));
	some_sges(t, sg, NSG);
	for (i = 0; i < n; i++) {
		struct ibv_send_wr *x = &wr[i];

		x->wr_id = rnd(t);
		x->next = i + 1 < n ? &wr[i + 1] : NULL;
		x->num_sge = (int)below(t, chance(t, 95) ? 4 : 64);
		x->sg_list = &sg[4 * i];
		if (x->num_sge > 4 && chance(t, 50))
			x->num_sge = 4;
		x->opcode = chance(t, 95) ?
			send_ops[below(t, sizeof(send_ops) / sizeof(send_ops[0]))] :
			(enum ibv_wr_opcode)rnd(t);
		x->send_flags = (unsigned int)rnd(t) &
			(chance(t, 90) ? IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
			 IBV_SEND_FENCE | IBV_SEND_INLINE | IBV_SEND_IP_CSUM : ~0u);
		x->imm_data = (uint32_t)rnd(t);
		inline_in_buf(t, x);
		switch (x->opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ:
			some_range(t, &x->wr.rdma.remote_addr, &len);
			x->wr.rdma.rkey = some_key(t, true);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			some_range(t, &x->wr.atomic.remote_addr, &len);
			if (chance(t, 80))
				x->wr.atomic.remote_addr &= ~7ull;
			x->wr.atomic.rkey = some_key(t, true);
			x->wr.atomic.compare_add = rnd(t);
			x->wr.atomic.swap = rnd(t);
			break;
		case IBV_WR_LOCAL_INV:
		case IBV_WR_SEND_WITH_INV:
			x->invalidate_rkey = some_key(t, true);
			break;
		case IBV_WR_BIND_MW:
			if (w < 0 || m < 0) {
				x->opcode = IBV_WR_SEND;
				break;
			}
			x->bind_mw.mw = t->mw[w];
			x->bind_mw.rkey = ibv_inc_rkey(t->mw[w]->rkey);
			x->bind_mw.bind_info.mr = t->mr[m];
			x->bind_mw.bind_info.addr = (uintptr_t)t->mr[m]->addr;
			x->bind_mw.bind_info.length = below(t, 8192);
			x->bind_mw.bind_info.mw_access_flags = some_access(t);
			break;
		default:
			break;
		}
		if (q->type == IBV_QPT_UD) {
			x->wr.ud.ah = a >= 0 ? t->ah[a] : NULL;
			x->wr.ud.remote_qpn = some_qpn(t);
			x->wr.ud.remote_qkey = chance(t, 90) ? QKEY : (uint32_t)rnd(t);
		}
		if (q->type == IBV_QPT_XRC_SEND) {
			uint32_t n16 = known_srqn[below(t, 16)];

			x->qp_type.xrc.remote_srqn = n16 && chance(t, 90) ?
				n16 : (uint32_t)rnd(t);
		}
	}
}

static void some_recv_wrs(struct thr *t, struct ibv_recv_wr *wr,
			  struct ibv_sge *sg)
{
	int i, n = 1 + (int)below(t, 4);

	memset(wr, 0, 4 * sizeof(*wr));
	some_sges(t, sg, NSG);
	for (i = 0; i < n; i++) {
		wr[i].wr_id = rnd(t);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].num_sge = (int)below(t, chance(t, 95) ? 4 : 64);
		if (wr[i].num_sge > 4 && chance(t, 50))
			wr[i].num_sge = 4;
		wr[i].sg_list = &sg[4 * i];
	}
}

/* The extended send API on a QP created with send ops. */
static void post_ex(struct thr *t, int s)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(t->qp[s].qp);
	uint64_t ops = t->qp[s].ops;
	struct ibv_sge sg[2];
	int i, n = 1 + (int)below(t, 3);

	/* the builders of ops it was not created with may be NULL */
	if (!x || !(ops & IBV_QP_EX_WITH_SEND) ||
	    !(ops & IBV_QP_EX_WITH_RDMA_WRITE) ||
	    !(ops & IBV_QP_EX_WITH_RDMA_READ) ||
	    !(ops & IBV_QP_EX_WITH_SEND_WITH_IMM))
		return;
	ibv_wr_start(x);
	for (i = 0; i < n; i++) {
		x->wr_id = rnd(t);
		x->wr_flags = (unsigned int)below(t, 16);
		switch (below(t, 4)) {
		case 0:
			ibv_wr_send(x);
			break;
		case 1:
			ibv_wr_rdma_write(x, some_key(t, true), (uintptr_t)t->buf +
					  below(t, 4096));
			break;
		case 2:
			ibv_wr_rdma_read(x, some_key(t, true), (uintptr_t)t->buf +
					 below(t, 4096));
			break;
		default:
			ibv_wr_send_imm(x, (uint32_t)rnd(t));
		}
		some_sges(t, sg, 2);
		ibv_wr_set_sge_list(x, below(t, 3), sg);
	}
	if (chance(t, 10))
		ibv_wr_abort(x);
	else
		rec(t, V_post_send_ex, s, ibv_wr_complete(x));
}

static void do_post(struct thr *t)
{
	int s = pick_qp(t, -1), r;
	struct ibv_send_wr swr[4], *sbad;
	struct ibv_recv_wr rwr[4], *rbad;
	struct ibv_sge sg[NSG];
	struct qpslot *q;

	if (s < 0)
		return;
	q = &t->qp[s];
	if (q->rss || q->type == IBV_QPT_XRC_RECV)
		return;
	/* a UD send without an AH: the provider would read through NULL */
	if (q->type == IBV_QPT_UD && pick(t, ah, ah_ctx, -1) < 0)
		return;
	switch (below(t, 5)) {
	case 0:
	case 1:
		if (q->ops && chance(t, 50)) {
			post_ex(t, s);
			break;
		}
		some_send_wrs(t, q, swr, sg);
		r = ibv_post_send(q->qp, swr, &sbad);
		rec(t, V_post_send, s, r);
		break;
	case 2:
	case 3:
		some_recv_wrs(t, rwr, sg);
		rec(t, V_post_recv, s, ibv_post_recv(q->qp, rwr, &rbad));
		break;
	default:
		if (no_cmd)
			break;
		/* the kernel's own post path, which the provider never takes */
		some_send_wrs(t, q, swr, sg);
		rec(t, V_cmd_post_send, s, ibv_cmd_post_send(q->qp, swr, &sbad));
	}
}

static void do_post_srq(struct thr *t)
{
	int s = pick(t, srq, srq_ctx, -1), w;
	struct ibv_recv_wr rwr[4], *rbad;
	struct ibv_ops_wr op = {}, *obad;
	struct ibv_sge sg[NSG];

	if (s >= 0) {
		if (t->srq_type[s] == IBV_SRQT_TM && chance(t, 50)) {
			op.wr_id = rnd(t);
			op.opcode = (enum ibv_ops_wr_opcode)below(t, chance(t, 95) ? 3 : 8);
			op.flags = (int)below(t, 2) * IBV_OPS_SIGNALED;
			op.tm.unexpected_cnt = (uint32_t)below(t, 4);
			op.tm.handle = below(t, 8);
			op.tm.add.recv_wr_id = rnd(t);
			op.tm.add.tag = rnd(t);
			op.tm.add.mask = chance(t, 50) ? ~0ull : rnd(t);
			op.tm.add.num_sge = below(t, chance(t, 95) ? 2 : 64);
			op.tm.add.sg_list = sg;
			some_sges(t, sg, NSG);
			rec(t, V_post_srq_ops, s, ibv_post_srq_ops(t->srq[s], &op, &obad));
			return;
		}
		some_recv_wrs(t, rwr, sg);
		if (chance(t, 20) && !no_cmd)
			rec(t, V_cmd_post_srq_recv, s,
			    ibv_cmd_post_srq_recv(t->srq[s], rwr, &rbad));
		else
			rec(t, V_post_srq_recv, s,
			    ibv_post_srq_recv(t->srq[s], rwr, &rbad));
		return;
	}
	w = pick(t, wq, wq_ctx, -1);
	if (w >= 0) {
		some_recv_wrs(t, rwr, sg);
		rec(t, V_post_wq_recv, w, ibv_post_wq_recv(t->wq[w], rwr, &rbad));
	}
}

/* ---- scribbling on the rings the kernel reads ---------------------------- */

/*
 * Random bytes into a random entry, or a random producer (or, for a CQ,
 * consumer and arm word) index, of ring @r.
 */
static void scribble(struct thr *t, struct shca_ring *r, bool cq)
{
	size_t esz, off;
	uint8_t *e;

	if (!r->map || !r->ctl)
		return;
	esz = (size_t)1 << r->entry_shift;
	e = r->entries + ((size_t)below(t, r->mask + 1) << r->entry_shift);
	switch (below(t, 3)) {
	case 0:
		off = below(t, (unsigned int)esz);
		rnd_bytes(t, e + off, 1 + below(t, (unsigned int)(esz - off)));
		break;
	case 1:
		if (cq) {
			__atomic_store_n(&r->ctl->cons, (uint32_t)rnd(t), __ATOMIC_RELEASE);
			break;
		}
		__atomic_store_n(&r->ctl->prod, chance(t, 50) ? (uint32_t)rnd(t) :
				 r->ctl->prod + below(t, 2 * (r->mask + 1)),
				 __ATOMIC_RELEASE);
		break;
	default:
		if (cq)
			__atomic_store_n(&r->ctl->arm, (uint32_t)rnd(t), __ATOMIC_RELEASE);
		else
			rnd_bytes(t, e, esz);
	}
}

static void do_scribble(struct thr *t)
{
	struct ibv_send_wr *bad;
	int s;

	switch (below(t, 6)) {
	case 0:
		s = pick_qp(t, -1);
		if (s < 0 || t->qp[s].rss || t->qp[s].type == IBV_QPT_XRC_RECV)
			return;
		scribble(t, &to_shca_qp(t->qp[s].qp)->sq.ring, false);
		rec(t, V_scribble_sq, s, ibv_cmd_post_send(t->qp[s].qp, NULL, &bad));
		break;
	case 1:
		s = pick_qp(t, -1);
		if (s < 0 || t->qp[s].rss || t->qp[s].type == IBV_QPT_XRC_RECV)
			return;
		scribble(t, &to_shca_qp(t->qp[s].qp)->rq.ring, false);
		rec(t, V_scribble_rq, s, 0);
		break;
	case 2:
		s = pick(t, srq, srq_ctx, -1);
		if (s < 0)
			return;
		scribble(t, &to_shca_srq(t->srq[s])->wq.ring, false);
		rec(t, V_scribble_srq, s, 0);
		break;
	case 3:
		s = pick(t, srq, srq_ctx, -1);
		if (s < 0 || !to_shca_srq(t->srq[s])->tm)
			return;
		scribble(t, &to_shca_srq(t->srq[s])->tm->ring, false);
		rec(t, V_scribble_tm, s, 0);
		break;
	case 4:
		s = pick(t, wq, wq_ctx, -1);
		if (s < 0)
			return;
		scribble(t, &container_of(t->wq[s], struct shca_rwq, ibv_wq)->wq.ring,
			 false);
		rec(t, V_scribble_wq, s, 0);
		break;
	default:
		s = pick(t, cq, cq_ctx, -1);
		if (s < 0)
			return;
		/* its entries are ours to read back: never poll it again */
		t->cq_nopoll[s] = true;
		scribble(t, &to_shca_cq(t->cq[s])->ring, true);
		rec(t, V_scribble_cq, s, 0);
	}
}

/* ---- driver data the provider would never send ----------------------------- */

static void drv_bytes(struct thr *t, uint8_t *d, size_t *len, size_t max)
{
	size_t i;

	*len = 8 * below(t, (unsigned int)(max / 8 + 1));
	memset(d, 0, max);
	for (i = 0; i < *len; i++)
		if (chance(t, 20))
			d[i] = (uint8_t)rnd(t);
}

static void do_udata(struct thr *t)
{
	int p = pick(t, pd, pd_ctx, -1), c = p >= 0 ? t->pd_ctx[p] : -1;
	int q = c >= 0 ? pick(t, cq, cq_ctx, c) : -1;
	struct {
		struct ibv_alloc_pd ibv;
		uint8_t drv[32];
	} pc;
	struct ib_uverbs_alloc_pd_resp pr[4];
	struct {
		struct ibv_create_cq_ex ibv;
		uint8_t drv[64];
	} cc;
	struct {
		struct ib_uverbs_ex_create_cq_resp ibv;
		uint8_t drv[256];
	} cr;
	struct {
		struct ibv_create_qp ibv;
		uint8_t drv[128];
	} qc;
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		uint8_t drv[256];
	} qr;
	struct {
		struct ibv_create_srq ibv;
		uint8_t drv[64];
	} sc;
	struct {
		struct ib_uverbs_create_srq_resp ibv;
		uint8_t drv[256];
	} sr;
	struct ibv_cq_init_attr_ex ca = {};
	struct ibv_qp_init_attr_ex qa = {};
	struct ibv_srq_init_attr sa = {};
	struct ibv_pd xpd = {};
	struct verbs_cq vcq;
	struct verbs_qp vqp;
	struct ibv_srq srq;
	size_t dl;
	int r;

	if (c < 0)
		return;
	switch (below(t, 4)) {
	case 0:
		memset(&pc, 0, sizeof(pc));
		drv_bytes(t, pc.drv, &dl, sizeof(pc.drv));
		r = ibv_cmd_alloc_pd(t->ctx[c], &xpd, &pc.ibv, sizeof(pc.ibv) + dl,
				     &pr[0], sizeof(pr[0]) + 8 * below(t, 3));
		if (!rec(t, V_udata_alloc_pd, p, r))
			ibv_cmd_dealloc_pd(&xpd);
		break;
	case 1:
		memset(&cc, 0, sizeof(cc));
		memset(&vcq, 0, sizeof(vcq));
		pthread_mutex_init(&vcq.cq.mutex, NULL);
		pthread_cond_init(&vcq.cq.cond, NULL);
		drv_bytes(t, cc.drv, &dl, sizeof(cc.drv));
		ca.cqe = (uint32_t)some_cqe(t);
		r = ibv_cmd_create_cq_ex(t->ctx[c], &ca, &vcq, &cc.ibv,
					 sizeof(cc.ibv) + dl, &cr.ibv,
					 sizeof(cr.ibv) + 8 * below(t, 33), 0);
		if (!rec(t, V_udata_create_cq, p, r))
			ibv_cmd_destroy_cq(&vcq.cq);
		break;
	case 2:
		if (q < 0)
			return;
		memset(&qc, 0, sizeof(qc));
		memset(&vqp, 0, sizeof(vqp));
		drv_bytes(t, qc.drv, &dl, sizeof(qc.drv));
		qa.qp_type = chance(t, 50) ? IBV_QPT_RC : IBV_QPT_UD;
		qa.comp_mask = IBV_QP_INIT_ATTR_PD;
		qa.pd = t->pd[p];
		qa.send_cq = qa.recv_cq = t->cq[q];
		some_cap(t, &qa.cap);
		r = ibv_cmd_create_qp_ex(t->ctx[c], &vqp, &qa, &qc.ibv,
					 sizeof(qc.ibv) + dl, &qr.ibv,
					 sizeof(qr.ibv) + 8 * below(t, 33));
		if (!rec(t, V_udata_create_qp, p, r))
			ibv_cmd_destroy_qp(&vqp.qp);
		break;
	default:
		memset(&sc, 0, sizeof(sc));
		memset(&srq, 0, sizeof(srq));
		pthread_mutex_init(&srq.mutex, NULL);
		pthread_cond_init(&srq.cond, NULL);
		drv_bytes(t, sc.drv, &dl, sizeof(sc.drv));
		sa.attr.max_wr = 1 + below(t, 64);
		sa.attr.max_sge = 1 + below(t, 4);
		r = ibv_cmd_create_srq(t->pd[p], &srq, &sa, &sc.ibv,
				       sizeof(sc.ibv) + dl, &sr.ibv,
				       sizeof(sr.ibv) + 8 * below(t, 33));
		if (!rec(t, V_udata_create_srq, p, r))
			ibv_cmd_destroy_srq(&srq);
	}
}

/* ---- fork ------------------------------------------------------------------ */

static void run_seq(struct thr *t);
static void teardown(struct thr *t);
static void do_open(struct thr *t);

static void reap_kid(struct thr *t, bool block)
{
	int st;
	pid_t r;

	if (!t->kid)
		return;
	r = waitpid(t->kid, &st, block ? 0 : WNOHANG);
	if (r != t->kid)
		return;
	t->kid = 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		__atomic_fetch_add(&kids_ok, 1, __ATOMIC_RELAXED);
	} else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
		/*
		 * A child forked while another thread held a lock of
		 * libibverbs or of the provider can wait for it forever;
		 * its alarm ends it.  Counted, not a failure.
		 */
		__atomic_fetch_add(&kids_alarm, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&kids_bad, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "verbs_fuzz: thread %d's child ended with status %#x\n",
			t->id, st);
	}
}

static void do_fork(struct thr *t)
{
	struct ibv_pd *pd;
	struct thr *k;
	pid_t pid;
	int i;

	reap_kid(t, false);
	if (t->kid)
		return;
	pid = fork();
	rec(t, V_fork, 0, pid < 0 ? errno : 0);
	if (pid) {
		if (pid > 0)
			t->kid = pid;
		return;
	}
	/* the child: its own tables, the parent's contexts' objects left alone */
	alarm(CHILD_ALARM_S);
	k = calloc(1, sizeof(*k));
	if (!k)
		_exit(0);
	k->id = t->id;
	k->child = true;
	k->rng = t->rng ^ 0xc41dull;
	k->buf = t->buf;	/* a copy of the parent's, private now */
	cur = k;
	/*
	 * On the inherited shared context only a PD (left to the parent's
	 * context half the time): an object that raises events there would
	 * name memory of ours in the parent's event queue.  The rest on
	 * contexts of its own.
	 */
	pd = recp(k, V_alloc_pd, 0, ibv_alloc_pd(shared_ctx));
	if (pd && chance(k, 50))
		rec(k, V_dealloc_pd, 0, ibv_dealloc_pd(pd));
	do_open(k);
	for (i = 0; i < 4; i++)
		run_seq(k);
	if (chance(k, 50))
		teardown(k);	/* else: exit with every object alive */
	_exit(0);
}

/* ---- the sequences ----------------------------------------------------------- */

/* The actions and their weights (per mille), in the order drawn. */
static const struct action {
	const char *name;
	unsigned int weight;
	void (*fn)(struct thr *t);
} actions[] = {
	{ "open", 15, do_open }, { "close", 5, do_close },
	{ "query", 20, do_query }, { "async", 30, do_async },
	{ "pd", 50, do_pd }, { "mr", 70, do_mr }, { "mw", 40, do_mw },
	{ "ch", 30, do_ch }, { "cq", 90, do_cq }, { "xrcd", 30, do_xrcd },
	{ "srq", 60, do_srq }, { "qp", 120, do_qp }, { "wq", 40, do_wq },
	{ "ind", 20, do_ind }, { "flow", 20, do_flow }, { "ah", 40, do_ah },
	{ "mcast", 10, do_mcast }, { "post", 140, do_post },
	{ "postsrq", 50, do_post_srq }, { "scribble", 50, do_scribble },
	{ "udata", 40, do_udata }, { "fork", 5, do_fork },
	{ "poll", 25, do_cq },
};
static bool action_off[sizeof(actions) / sizeof(actions[0])];

static void run_seq(struct thr *t)
{
	int i, n = 1 + (int)below(t, 16);
	unsigned int a, k;

	for (i = 0; i < n && !stop; i++) {
		k = below(t, 1000);
		for (a = 0; k >= actions[a].weight; a++)
			k -= actions[a].weight;
		if (action_off[a] || (t->child && actions[a].fn == do_fork))
			continue;
		actions[a].fn(t);
	}
	t->seqs++;
}

/* Destroy everything left, dependents first; contexts 1.. closed. */
static void teardown(struct thr *t)
{
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < NFLOW; i++)
			if (t->flow[i] && !ibv_destroy_flow(t->flow[i]))
				t->flow[i] = NULL;
		for (i = 0; i < NQP; i++)
			if (t->qp[i].qp && t->qp[i].rss && !ibv_destroy_qp(t->qp[i].qp))
				t->qp[i].qp = NULL;
		for (i = 0; i < NIND; i++)
			if (t->ind[i] && !ibv_destroy_rwq_ind_table(t->ind[i]))
				t->ind[i] = NULL;
		for (i = 0; i < NWQ; i++)
			if (t->wq[i] && !ibv_destroy_wq(t->wq[i]))
				t->wq[i] = NULL;
		for (i = 0; i < NQP; i++)
			if (t->qp[i].qp && !ibv_destroy_qp(t->qp[i].qp))
				t->qp[i].qp = NULL;
		for (i = 0; i < NSRQ; i++)
			if (t->srq[i] && !ibv_destroy_srq(t->srq[i]))
				t->srq[i] = NULL;
		for (i = 0; i < NAH; i++)
			if (t->ah[i] && !ibv_destroy_ah(t->ah[i]))
				t->ah[i] = NULL;
		for (i = 0; i < NMW; i++)
			if (t->mw[i] && !ibv_dealloc_mw(t->mw[i]))
				t->mw[i] = NULL;
		for (i = 0; i < NMR; i++)
			if (t->mr[i] && !ibv_dereg_mr(t->mr[i]))
				t->mr[i] = NULL;
		for (i = 0; i < NCQ; i++)
			if (t->cq[i] && !ibv_destroy_cq(t->cq[i]))
				t->cq[i] = NULL;
		for (i = 0; i < NCH; i++)
			if (t->ch[i] && !ibv_destroy_comp_channel(t->ch[i]))
				t->ch[i] = NULL;
		for (i = 0; i < NXRCD; i++)
			if (t->xrcd[i] && !ibv_close_xrcd(t->xrcd[i]))
				t->xrcd[i] = NULL;
		for (i = 0; i < NPD; i++)
			if (t->pd[i] && !ibv_dealloc_pd(t->pd[i]))
				t->pd[i] = NULL;
	}
	/*
	 * What is still there (a CQ whose QP a raw command destroyed under
	 * the provider, say) goes with its context; on the shared one it
	 * stays until the process exits.
	 */
	for (i = 1; i < NCTX; i++)
		if (t->ctx[i]) {
			ibv_close_device(t->ctx[i]);
			t->ctx[i] = NULL;
			forget_ctx(t, i);
		}
}

/* ---- threads, watchdog, the end ----------------------------------------------- */

static long max_seqs = -1;
static int nthr_done;
static int secs = 60;

static void *worker(void *arg)
{
	struct thr *t = arg;

	cur = t;
	while (!stop) {
		run_seq(t);
		reap_kid(t, false);
		if ((long)__atomic_add_fetch(&total_seqs, 1, __ATOMIC_RELAXED) >=
		    max_seqs && max_seqs >= 0)
			stop = 1;
	}
	reap_kid(t, true);
	teardown(t);
	__atomic_fetch_add(&nthr_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The device still moves data: 3 UD datagrams to ourselves, every byte. */
static bool device_moves_data(void)
{
	return env_moves_data(ibv_get_device_name(dev), gid_index);
}

static void summary(void)
{
	int v, reached = 0;

	printf("verbs_fuzz: %lu sequences, %lu forks (%lu exited, %lu ended by their alarm)\n",
	       total_seqs, kids_ok + kids_alarm + kids_bad, kids_ok, kids_alarm);
	printf("verbs_fuzz: %-22s %9s %9s %9s\n", "verb", "calls", "ok", "failed");
	for (v = 0; v < V_NR; v++) {
		printf("verbs_fuzz: %-22s %9lu %9lu %9lu\n", verb_name[v],
		       cov[v][0], cov[v][1], cov[v][2]);
		reached += cov[v][1] > 0;
	}
	printf("verbs_fuzz: %d of %d verbs succeeded at least once; never: ",
	       reached, V_NR);
	for (v = 0; v < V_NR; v++)
		if (!cov[v][1])
			printf("%s ", verb_name[v]);
	printf("\n");
}

int main(int argc, char **argv)
{
	pthread_t th[MAXTHR];
	unsigned long last[MAXTHR] = {};
	time_t seen[MAXTHR], end;
	bool ok = true;
	int o, i;

	if (argc < 3) {
		fprintf(stderr, "usage: verbs_fuzz DEV GID_INDEX [-s SEED] [-t SECS] [-n SEQS] [-j THREADS] [-x WHAT,...]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);	/* lines as they come */
	gid_index = atoi(argv[2]);
	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	optind = 3;
	while ((o = getopt(argc, argv, "s:t:n:j:x:")) != -1) {
		switch (o) {
		case 'x':
			snprintf(excluded_names, sizeof(excluded_names), ",%s,", optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 'n':
			max_seqs = atol(optarg);
			break;
		case 'j':
			nthr = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (nthr < 1 || nthr > MAXTHR)
		nthr = 3;
	for (i = 0; i < (int)(sizeof(actions) / sizeof(actions[0])); i++) {
		char w[32];

		snprintf(w, sizeof(w), ",%s,", actions[i].name);
		action_off[i] = strstr(excluded_names, w) != NULL;
	}
	no_foreign = strstr(excluded_names, ",foreign,") != NULL;
	no_cmd = strstr(excluded_names, ",cmd,") != NULL;
	printf("verbs_fuzz: seed %#llx, %d threads, %d s, %ld sequences at most (-1: no bound), left out: %s, uid %d\n",
	       (unsigned long long)seed, nthr, secs, max_seqs,
	       excluded_names[0] ? excluded_names : "none", (int)getuid());
	fflush(stdout);
	{
		void *bt[2];

		backtrace(bt, 2);	/* loads libgcc now, not in the handler */
	}
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	signal(SIGABRT, on_crash);
	signal(SIGFPE, on_crash);
	signal(SIGPIPE, SIG_IGN);

	dev = find_dev(argv[1]);
	shared_ctx = dev ? ibv_open_device(dev) : NULL;
	if (!shared_ctx || ibv_query_gid(shared_ctx, 1, gid_index, &my_gid)) {
		printf("not ok - verbs_fuzz: open %s and its GID %d (errno %d)\n",
		       argv[1], gid_index, errno);
		return 1;
	}
	nonblock(shared_ctx->async_fd);
	for (i = 0; i < nthr; i++) {
		struct thr *t = calloc(1, sizeof(*t));

		if (!t || posix_memalign((void **)&t->buf, 4096, BUFSZ))
			return 1;
		memset(t->buf, 0x5a, BUFSZ);	/* touched: no page faults later */
		t->id = i;
		t->rng = (seed + (uint64_t)i) | 1;
		t->ctx[0] = shared_ctx;
		thrs[i] = t;
		seen[i] = time(NULL);
		pthread_create(&th[i], NULL, worker, t);
	}
	/* the watchdog watches the teardown too */
	end = time(NULL) + secs;
	while (__atomic_load_n(&nthr_done, __ATOMIC_ACQUIRE) < nthr) {
		time_t now = time(NULL);

		if (now >= end)
			stop = 1;
		for (i = 0; i < nthr; i++) {
			unsigned long p = __atomic_load_n(&progress[i], __ATOMIC_RELAXED);

			if (p != last[i]) {
				last[i] = p;
				seen[i] = now;
			} else if (now - seen[i] > WATCHDOG_S) {
				char why[64];

				snprintf(why, sizeof(why),
					 "thread %d made no call for %d s", i,
					 WATCHDOG_S);
				dump_all(why);
				printf("not ok - verbs_fuzz: no thread stuck (seed %#llx)\n",
				       (unsigned long long)seed);
				fflush(stdout);
				_exit(1);
			}
		}
		sleep(1);
	}
	for (i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
	summary();
	if (kids_bad) {
		dump_all("a forked child crashed");
		ok = false;
	}
	printf("%s - verbs_fuzz: %lu sequences, no forked child crashed (seed %#llx)\n",
	       !kids_bad ? "ok" : "not ok", total_seqs, (unsigned long long)seed);
	if (!device_moves_data()) {
		dump_all("the device moves no data after the fuzz");
		ok = false;
		printf("not ok - verbs_fuzz: the device still moves data (seed %#llx)\n",
		       (unsigned long long)seed);
	} else {
		printf("ok - verbs_fuzz: the device still moves data (3 datagrams, every byte)\n");
	}
	ibv_close_device(shared_ctx);
	return ok ? 0 : 1;
}
