// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tm_stress: tag matching (IBV_SRQT_TM, rdma-core's
 * Documentation/tag_matching.md) under a random stream, between two
 * devices, with the receiver acting as a minimal MPI runtime.
 *
 *   tm_stress -r -d DEV -g GIDX [-p PORT] [options]            receiver
 *   tm_stress -c -d DEV -g GIDX -a ADDR [-p PORT] [options]    sender
 *   options (the same on both sides; checked in the handshake):
 *     -s SEED  plan seed (default 1)      -n MSGS   messages (default 320)
 *     -w WIN   messages a window (16)     -m BYTES  largest message (65536)
 *     -C       require every path to have been taken (coverage)
 *
 * The sender has a plain RC QP (receives posted for the FIN messages);
 * the receiver an RC QP on a TM SRQ whose CQ is an extended CQ with
 * IBV_WC_EX_WITH_TM_INFO.  Both derive the same plan from the seed:
 * message i is EAGER (TMH + payload, 0..BYTES), RNDV (TMH + RVH + 0..32
 * bytes naming a buffer of 1..BYTES on the sender) or NO_TAG, with a
 * random 64-bit tag whose low bits are i; some are "anonymous" (a tag
 * class that wildcard receives take in order).  Sizes cluster around the
 * path MTU (1024) so messages are single- and multi-packet.  Payload byte
 * k of message i is pat(i, k).
 *
 * The receiver posts one receive per tagged message: a specific one
 * (tag & mask, full or partial mask) or a wildcard one (mask 0 but the
 * tag class).  Some receives are offered to the device (IBV_WR_TAG_ADD),
 * others stay in software; some are posted before the message is sent,
 * some after it arrived (then it is unexpected), some while the stream
 * runs; some ADDs are deleted again before or while the stream runs;
 * never-sent "decoy" tags come and go.  Ops carry IBV_OPS_TM_SYNC with
 * the count of unexpected messages seen, or not (then a later ADD is out
 * of phase).  Messages flow in windows: the receiver posts, says GO over
 * TCP, the sender sends the window, the receiver handles every
 * completion like an MPI runtime (an unexpected message is matched in
 * software against the posted receives, whose device entry is deleted,
 * or queued for a later receive; an unexpected or incomplete rendezvous
 * is READ in software and answered with a FIN), then DONE.
 *
 * Checked (each violation is a "not ok" line with the message, the
 * completion and what was expected):
 *   - every byte of every message, wherever it landed (tagged buffers
 *     scattered over 1-4 SGEs with guard bytes between them that must
 *     stay untouched, ordinary SRQ buffers with the whole message);
 *   - completions: opcode, status, flags (MATCH, DATA_VALID, SYNC_REQ),
 *     byte_len, tm_info tag and priv (app_ctx), wr_id, qp_num;
 *   - each tagged buffer completes exactly once (MATCH then DATA_VALID,
 *     or both at once for a single-packet eager message), never after it
 *     was deleted; each message arrives exactly once;
 *   - where the outcome is determined (the receives posted before GO:
 *     the device's list is then known, as is the phase), the receiver
 *     predicts which entry each message matches - the oldest armed one
 *     with (tag & mask) == entry tag - or that it is unexpected, and the
 *     device must agree; an ADD made out of phase never matches; op
 *     completions carry SYNC_REQ exactly when the phases differ;
 *   - a DEL of an entry whose message arrived unexpected succeeds; a DEL
 *     right after its MATCH (data still arriving) fails with
 *     IBV_WC_TM_ERR; a DEL racing the stream fails only if the entry
 *     was consumed (its MATCH came first);
 *   - an RNDV whose tagged buffer is too small completes with
 *     IBV_WC_TM_RNDV_INCOMPLETE and the headers in the buffer;
 *   - the sender: every SEND succeeds, each rendezvous buffer gets
 *     exactly one FIN (op FIN, the original tag, app_ctx and RVH);
 *   - ibv_destroy_srq while the QP uses the TM SRQ, ibv_destroy_cq while
 *     the TM SRQ uses its CQ: EBUSY; then both go (a tag still listed).
 * The receiver ends with "tm_stress: tally ..." (what the device's
 * counters must have counted) and TAP lines "ok - tm_stress: ...".
 * Exit status 0 only when every check passed.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "e2e_lib.h"

#define MTU_BYTES	1024
#define MTU		IBV_MTU_1024
#define TMH		16
#define RVH		16
#define HDR_MAX		64	/* the device's max_rndv_hdr_size */
#define MAX_SGE		4	/* tm_caps.max_sge */
#define ANON_MAX	8192	/* anonymous messages and wildcard buffers */
#define HOLE		64	/* guard bytes around each SGE */
#define SENTINEL	0xee
#define NDECOY		8
#define WAIT_MS		120000	/* without any progress; TCG is slow */
#define MAX_FAIL	20

/* tags: class in bits 63-62, the message index in the low IDX_BITS */
#define CLASS_MASK	(3ULL << 62)
#define CL_NORMAL	0ULL
#define CL_ANON		(1ULL << 62)
#define CL_DECOY	(2ULL << 62)
#define IDX_BITS	22
#define IDX_MASK	((1ULL << IDX_BITS) - 1)

/* wr_ids */
#define WR_KIND(x)	((x) >> 56)
#define WR_IDX(x)	((x) & ((1ULL << 56) - 1))
#define WR(k, i)	(((uint64_t)(k) << 56) | (uint64_t)(i))
enum { WK_TAG = 1, WK_SLOT, WK_OP, WK_READ, WK_FIN, WK_BYE };

#define BYE_OP		0xb7	/* first byte of the receiver's last SEND */

/* sender memory: window slot j holds message i's bytes; RNDV payload at RNDV_OFF */
#define RNDV_OFF	4096

enum { K_EAGER, K_RNDV, K_NOTAG };
enum { W_EARLY, W_RACE, W_LATE };

/* tokens on the TCP socket */
#define TOK_GO		0x746d0000u
#define TOK_DONE	0x746e0000u
#define TOK_BYE		0x746fffffu

struct msg {
	/* the message (both sides) */
	uint8_t kind;
	uint8_t anon;		/* class ANON: any wildcard receive takes it */
	uint32_t size;		/* payload (EAGER, NO_TAG) or RVH len (RNDV) */
	uint32_t extra;		/* RNDV: bytes after the RVH */
	uint32_t app_ctx;
	uint64_t tag;
	/* its receive (receiver only; none for NO_TAG) */
	uint8_t when;		/* posted before GO, while the stream runs, after */
	uint8_t hw;		/* offered to the device (ADD) */
	uint8_t del_early;	/* and deleted again before GO */
	uint8_t race_del;	/* or deleted while the stream runs */
	uint8_t nsge;
	uint32_t buflen;	/* what its SGEs hold */
	uint32_t sge_len[MAX_SGE];
	uint64_t rtag, rmask;	/* its list entry */
};

struct win {
	uint32_t a, b;		/* messages a .. b - 1 */
	uint8_t race;		/* receives and DELs posted while it runs */
};

struct opts {
	char mode;
	const char *dev, *addr, *port;
	int gidx;
	uint64_t seed;
	uint32_t n, w, maxsz;
	bool coverage;
};

static struct msg *plan;
static struct win *wins;
static uint32_t nwin;
static uint32_t sslot_sz, rslot_sz, uslot_sz;

/* ------------------------------------------------------------------ */

/* A failed check: reported, and the run ends after MAX_FAIL of them. */
static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	va_list ap;

	failures++;
	printf("not ok - tm_stress: %s: ", side);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (failures >= MAX_FAIL) {
		printf("# tm_stress: %s: giving up after %d failures\n", side,
		       failures);
		exit(1);
	}
}

/* splitmix64: the same plan on both sides */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rndn(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return rndn(r, 100) < pct;
}

static uint8_t pat(uint32_t i, uint32_t k)
{
	return (uint8_t)(k * 7 + (k >> 8) * 3 + (k >> 16) + i * 97 +
			 (i >> 8) * 17 + 1);
}

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t pick_size(struct rng *r, uint32_t cap)
{
	static const uint32_t edge[] = { 1007, 1008, 1009, 2031, 2032, 2033,
					 1024, 4080 };
	uint32_t s;

	switch (rndn(r, 10)) {
	case 0: case 1: case 2:
		s = rndn(r, 65);			/* 0..64 */
		break;
	case 3: case 4:
		s = 984 + rndn(r, 48);			/* one packet or two */
		break;
	case 5:
		s = edge[rndn(r, sizeof(edge) / sizeof(edge[0]))];
		break;
	default:
		s = rndn(r, cap + 1);
		break;
	}
	return min32(s, cap);
}

static void make_msg(struct rng *r, uint32_t i, bool race, uint32_t maxsz)
{
	struct msg *m = &plan[i];
	uint32_t k = rndn(r, 100), cap, left, s;
	uint64_t hi;

	memset(m, 0, sizeof(*m));
	if (k < 5) {
		m->kind = K_NOTAG;
	} else if (k < 17) {
		m->anon = 1;
		m->kind = chance(r, 60) ? K_EAGER : K_RNDV;
	} else {
		m->kind = k < 62 ? K_EAGER : K_RNDV;
	}
	cap = m->anon || m->kind == K_NOTAG ? min32(maxsz, ANON_MAX) : maxsz;
	m->size = pick_size(r, cap);
	if (m->kind == K_RNDV && !m->size)
		m->size = 1;
	m->extra = m->kind == K_RNDV ? rndn(r, HDR_MAX - TMH - RVH + 1) : 0;
	m->app_ctx = (uint32_t)rnd(r) | 1;
	hi = rnd(r) & ~CLASS_MASK & ~IDX_MASK;
	m->tag = hi | (m->anon ? CL_ANON : CL_NORMAL) | i;
	if (m->kind == K_NOTAG)
		return;

	k = rndn(r, 100);
	if (race)
		m->when = k < 55 ? W_EARLY : k < 85 ? W_RACE : W_LATE;
	else
		m->when = k < 75 ? W_EARLY : W_LATE;
	m->hw = m->when != W_LATE && chance(r, 80);
	m->del_early = m->hw && m->when == W_EARLY && chance(r, 10);
	m->race_del = race && m->hw && m->when == W_EARLY && !m->del_early &&
		      chance(r, 25);
	if (m->anon) {
		m->rtag = CL_ANON;
		m->rmask = CLASS_MASK;
		m->buflen = cap + rndn(r, 65);
	} else {
		if (chance(r, 50)) {
			m->rmask = ~0ULL;
		} else {
			/* clear random bits above the index, keep the class */
			m->rmask = ~(rnd(r) & ~CLASS_MASK & ~IDX_MASK);
		}
		m->rtag = m->tag & m->rmask;
		if (m->kind == K_RNDV && m->size >= 256 && chance(r, 20))
			/* too small: IBV_WC_TM_RNDV_INCOMPLETE if matched */
			m->buflen = HDR_MAX + rndn(r, m->size - HDR_MAX);
		else
			m->buflen = m->size + (chance(r, 50) ? 0 : rndn(r, 65));
	}
	if (!m->buflen)
		m->nsge = 0;
	else
		m->nsge = (uint8_t)min32(1 + rndn(r, MAX_SGE), m->buflen);
	left = m->buflen;
	for (k = 0; k < m->nsge; k++) {
		uint32_t others = m->nsge - 1 - k;

		s = others ? 1 + rndn(r, left - others) : left;
		m->sge_len[k] = s;
		left -= s;
	}
}

static void make_plan(const struct opts *o)
{
	struct rng r = { o->seed * 0x2545f4914f6cdd1dULL + 0x5eed };
	uint32_t w, i;

	nwin = (o->n + o->w - 1) / o->w;
	plan = calloc(o->n, sizeof(*plan));
	wins = calloc(nwin, sizeof(*wins));
	if (!plan || !wins)
		die("calloc");
	for (w = 0; w < nwin; w++) {
		wins[w].a = w * o->w;
		wins[w].b = min32(o->n, wins[w].a + o->w);
		wins[w].race = chance(&r, 30);
		for (i = wins[w].a; i < wins[w].b; i++)
			make_msg(&r, i, wins[w].race, o->maxsz);
	}
	sslot_sz = (RNDV_OFF + o->maxsz + 4095) & ~4095u;
	/* the largest tagged buffer, its SGEs apart by HOLE guard bytes */
	rslot_sz = (o->maxsz + 64 + (MAX_SGE + 1) * HOLE + 4095) & ~4095u;
	uslot_sz = (TMH + o->maxsz + 64 + 4095) & ~4095u;
}

/*
 * The bytes of message @i as the sender sends them, into @p; returns the
 * length.  @va, @rkey: the rendezvous buffer it names (RNDV).
 */
static uint32_t msg_bytes(uint32_t i, uint8_t *p, uint64_t va, uint32_t rkey)
{
	const struct msg *m = &plan[i];
	struct ibv_tmh t = {
		.opcode = m->kind == K_EAGER ? IBV_TMH_EAGER :
			  m->kind == K_RNDV ? IBV_TMH_RNDV : IBV_TMH_NO_TAG,
		.app_ctx = htobe32(m->app_ctx),
		.tag = htobe64(m->tag),
	};
	uint32_t k;

	memcpy(p, &t, TMH);
	if (m->kind == K_RNDV) {
		struct ibv_rvh v = {
			.va = htobe64(va), .rkey = htobe32(rkey),
			.len = htobe32(m->size),
		};

		memcpy(p + TMH, &v, RVH);
		for (k = 0; k < m->extra; k++)
			p[TMH + RVH + k] = pat(i ^ 0xfffff, k);
		return TMH + RVH + m->extra;
	}
	for (k = 0; k < m->size; k++)
		p[TMH + k] = pat(i, k);
	return TMH + m->size;
}

static const char *kind_str(const struct msg *m)
{
	static const char *const k[] = { "EAGER", "RNDV", "NO_TAG" };

	return k[m->kind];
}

/* ------------------------------------------------------------------ */
/* TCP and verbs plumbing                                             */

/* Token @tok to the peer; the run ends if it cannot be sent. */
static void tell_peer(int fd, uint32_t tok)
{
	send_tok(fd, tok, "send a token to the peer");
}

/* The peer's next token, which must be @want; the run ends if not. */
static void expect_tok(int fd, uint32_t want)
{
	uint32_t tok = read_tok(fd, "read a token from the peer");

	if (tok != want) {
		printf("not ok - tm_stress: %s: token %#x from the peer, want %#x\n",
		       side, tok, want);
		exit(1);
	}
}

/* What each side tells the other. */
struct hello {
	uint64_t seed;
	uint32_t n, w, maxsz, magic;
	uint8_t gid[16];
	uint32_t qpn, psn;
	uint64_t base;		/* sender: its slots (RVH va) */
	uint32_t rkey, pad;
};
#define HELLO_MAGIC	0x746d3031u

static void hello_check(const struct opts *o, const struct hello *h)
{
	if (h->magic != HELLO_MAGIC || h->seed != o->seed || h->n != o->n ||
	    h->w != o->w || h->maxsz != o->maxsz) {
		printf("not ok - tm_stress: %s: the peer runs another plan (seed %llu n %u w %u m %u)\n",
		       side, (unsigned long long)h->seed, h->n, h->w, h->maxsz);
		exit(1);
	}
}

/* RTR then RTS towards @peer's QP; dies on a failure. */
static void qp_connect(struct ibv_qp *qp, const struct hello *peer, int gidx,
		       uint32_t sq_psn)
{
	struct ibv_ah_attr ah;

	gid_ah(&ah, peer->gid, gidx, 64);
	if (qp_rtr(qp, &ah, peer->qpn, peer->psn, 4, 12))
		die("modify QP to RTR");
	if (qp_rts(qp, sq_psn, 14, 7, 7, 4))
		die("modify QP to RTS");
}

/* What this side tells the peer: the plan of @o, its GID, QP and PSN. */
static void hello_make(struct hello *me, const struct opts *o,
		       const union ibv_gid *gid, uint32_t qpn, uint32_t psn)
{
	me->magic = HELLO_MAGIC;
	me->seed = o->seed;
	me->n = o->n;
	me->w = o->w;
	me->maxsz = o->maxsz;
	memcpy(me->gid, gid->raw, 16);
	me->qpn = qpn;
	me->psn = psn;
}

/* Accept the sender's connection on @port. */
static int tcp_listen_accept(const char *port)
{
	int lfd = tcp_listen(port), fd;

	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);
	set_timeouts(fd, 900);
	return fd;
}

/* ================================================================== */
/* receiver                                                           */
/* ================================================================== */

enum { RS_IDLE, RS_POSTED, RS_HWDATA, RS_SWREAD, RS_SWFIN, RS_DONE };
enum { MS_NONE, MS_HW, MS_SW, MS_QUEUED, MS_DONE };
enum { OP_ADD, OP_DEL, OP_SYNC };
enum { EX_OK, EX_ERR, EX_ANY };
#define PRED_UNKNOWN	-2
#define PRED_UNEXP	-1

struct rcv {
	uint8_t st;
	uint8_t hw;		/* its entry is (as far as we know) listed */
	uint8_t armed;		/* the entry was added in phase (quiescent) */
	uint8_t known_out;	/* the ADD was made knowing it is out of phase */
	uint8_t via_hw;		/* the device matched it */
	uint8_t del_sent;	/* a DEL of its entry has been posted */
	uint8_t err_first;	/* its racing DEL failed before its MATCH was seen */
	int del_op;		/* that DEL (an index into ops) */
	int got;		/* the message it took, -1 */
	uint32_t handle;
	uint64_t order;		/* ADD order */
};

struct mst {
	uint8_t st;
	int rcv;		/* the receive that took it */
	int pred;		/* PRED_*, or the receive the device must match */
	uint8_t pred_incomplete;
};

struct op {
	uint8_t kind, expect, signaled, done;
	int8_t sync_req;	/* -1: unknown */
	int rcv;		/* >= 0 receive, < 0: decoy -(d + 1), or none */
};

struct decoy {
	uint8_t listed;
	uint32_t handle;
	uint64_t tag, mask;
};

struct twc {
	uint64_t wr_id;
	int status, opcode;
	unsigned int flags;
	uint32_t byte_len, qp_num;
	uint64_t tag;
	uint32_t priv;
};

struct tally {
	unsigned int matched, unexpected, no_tag, rndv_reads,
		     incomplete, op_errs;
	/* coverage */
	unsigned int hw_eager1, hw_eagerN, hw_rndv, hw_anon, hw_masked,
		     hw_multisge, unexp_eager, unexp_rndv, sw_queued,
		     sw_posted, sw_rndv, out_of_phase,
		     del_ok, del_consumed, race_del_ok, race_del_err,
		     sync_req_set, sync_req_clear, predicted, decoys, ops,
		     chains;
};

struct rx {
	const struct opts *o;
	int fd;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *tmcq;
	struct ibv_cq *scq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t rslots, uslots, swbufs, finbufs, decoybufs, memlen;
	uint32_t nu;		/* ordinary SRQ receives */
	struct hello peer;
	uint32_t max_tags, max_ops;

	struct rcv *rc;
	struct mst *ms;
	struct op *ops;
	size_t nops, cap_ops;
	int pending_ops;	/* signaled ops not completed yet */
	struct decoy dec[NDECOY];
	struct rng rng;

	/* phases */
	uint32_t unexp_seen;	/* unexpected messages seen (software's count) */
	uint32_t reported;	/* the count the device has from us */
	bool quiet;		/* nothing in flight: the device's count is unexp_seen */
	uint64_t add_order;

	/* the current window */
	const struct win *cw;
	uint32_t cwn;
	int *posted;		/* receives in posting order */
	uint32_t nposted;
	int *queue;		/* unexpected messages, in arrival order */
	uint32_t nqueue;
	uint32_t arrived, done_rcv, outstanding_sends;
	long long last_progress;

	struct tally t;
};

static uint8_t *rslot(struct rx *x, uint32_t i)
{
	return x->mem + x->rslots + (size_t)(i - x->cw->a) * rslot_sz;
}

static uint8_t *uslot(struct rx *x, uint32_t u)
{
	return x->mem + x->uslots + (size_t)u * uslot_sz;
}

static uint8_t *swbuf(struct rx *x, uint32_t i)
{
	return x->mem + x->swbufs + (size_t)(i - x->cw->a) * x->o->maxsz;
}

static uint8_t *finbuf(struct rx *x, uint32_t i)
{
	return x->mem + x->finbufs + (size_t)(i - x->cw->a) * 64;
}

static uint64_t peer_va(struct rx *x, uint32_t i)
{
	return x->peer.base + (uint64_t)(i - x->cw->a) * sslot_sz + RNDV_OFF;
}

/* SGE k of receive r lies HOLE bytes after the end of SGE k - 1. */
static uint8_t *sge_addr(struct rx *x, uint32_t r, uint32_t k)
{
	uint8_t *p = rslot(x, r) + HOLE;
	uint32_t j;

	for (j = 0; j < k; j++)
		p += plan[r].sge_len[j] + HOLE;
	return p;
}

/*
 * Tagged buffer of receive @r against @want (@n bytes): the first @n bytes
 * gathered from its SGEs must equal @want, the rest of them and every
 * guard byte must still be SENTINEL.  Returns NULL or what is wrong.
 */
static const char *check_tagged(struct rx *x, uint32_t r, const uint8_t *want,
				uint32_t n)
{
	static char why[160];
	const struct msg *m = &plan[r];
	uint32_t k, b, off = 0;
	uint8_t *p;

	p = rslot(x, r);
	for (b = 0; b < HOLE; b++)
		if (p[b] != SENTINEL)
			goto hole;
	for (k = 0; k < m->nsge; k++) {
		p = sge_addr(x, r, k);
		for (b = 0; b < m->sge_len[k]; b++, off++) {
			uint8_t w = off < n ? want[off] : SENTINEL;

			if (p[b] != w) {
				snprintf(why, sizeof(why),
					 "byte %u (SGE %u of %u, +%u) is %#x, want %#x%s",
					 off, k, m->nsge, b, p[b], w,
					 off < n ? "" : " (beyond the data: untouched)");
				return why;
			}
		}
		for (b = 0; b < HOLE; b++)
			if (p[m->sge_len[k] + b] != SENTINEL)
				goto hole;
	}
	if (n > off) {
		snprintf(why, sizeof(why), "%u bytes expected in a %u-byte buffer",
			 n, off);
		return why;
	}
	return NULL;
hole:
	snprintf(why, sizeof(why), "a guard byte between the SGEs was written");
	return why;
}

static void wc_str(const struct twc *c, char *s, size_t len)
{
	snprintf(s, len, "wr_id %#llx status %s (%d) opcode %#x flags %#x byte_len %u tag %#llx priv %#x qp %u",
		 (unsigned long long)c->wr_id, ibv_wc_status_str(c->status),
		 c->status, c->opcode, c->flags, c->byte_len,
		 (unsigned long long)c->tag, c->priv, c->qp_num);
}

static void msg_str(uint32_t i, char *s, size_t len)
{
	const struct msg *m = &plan[i];

	snprintf(s, len, "message %u (%s%s, %u bytes%s, tag %#llx)", i,
		 m->anon ? "anonymous " : "", kind_str(m), m->size,
		 m->kind == K_EAGER && TMH + m->size > MTU_BYTES ? ", multi-packet" : "",
		 (unsigned long long)m->tag);
}

static void rcv_str(uint32_t r, char *s, size_t len)
{
	const struct msg *m = &plan[r];

	snprintf(s, len, "receive %u (%s, entry tag %#llx mask %#llx, %u bytes in %u SGEs)",
		 r, m->anon ? "wildcard" : "specific",
		 (unsigned long long)m->rtag, (unsigned long long)m->rmask,
		 m->buflen, m->nsge);
}

static size_t new_op(struct rx *x, uint8_t kind, int rcv, uint8_t expect,
		     bool signaled, int sync_req)
{
	struct op *op;

	if (x->nops == x->cap_ops) {
		x->cap_ops = x->cap_ops ? 2 * x->cap_ops : 1024;
		x->ops = realloc(x->ops, x->cap_ops * sizeof(*x->ops));
		if (!x->ops)
			die("realloc");
	}
	op = &x->ops[x->nops];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->rcv = rcv;
	op->expect = expect;
	op->signaled = signaled;
	op->sync_req = (int8_t)sync_req;
	if (signaled)
		x->pending_ops++;
	x->t.ops++;
	return x->nops++;
}

/*
 * The SYNC flag and count of the next op: usually the count seen; now and
 * then none, or a stale count (the op is then out of phase).  Updates
 * what the device knows; returns the phase the op leaves behind: true if
 * in phase (meaningful while quiet).
 */
static bool op_sync(struct rx *x, struct ibv_ops_wr *wr, bool force)
{
	uint32_t k = rndn(&x->rng, 100);

	if (force || k < 80) {
		wr->flags |= IBV_OPS_TM_SYNC;
		wr->tm.unexpected_cnt = x->unexp_seen;
	} else if (k < 85 && x->unexp_seen) {
		wr->flags |= IBV_OPS_TM_SYNC;
		wr->tm.unexpected_cnt = x->unexp_seen - 1 - rndn(&x->rng, x->unexp_seen);
	}
	if (wr->flags & IBV_OPS_TM_SYNC)
		x->reported = wr->tm.unexpected_cnt;
	return (uint16_t)x->reported == (uint16_t)x->unexp_seen;
}

static void post_ops(struct rx *x, struct ibv_ops_wr *wr, const char *what)
{
	struct ibv_ops_wr *badw = NULL;
	int ret = ibv_post_srq_ops(x->srq, wr, &badw);

	if (ret) {
		errno = ret;
		printf("# tm_stress: ibv_post_srq_ops(%s) failed at wr_id %#llx\n",
		       what, badw ? (unsigned long long)badw->wr_id : 0ULL);
		die("ibv_post_srq_ops");
	}
}

/* ADD the entry of receive @r. */
static void add_entry(struct rx *x, uint32_t r)
{
	const struct msg *m = &plan[r];
	struct ibv_sge sge[MAX_SGE];
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_ADD };
	bool signaled = chance(&x->rng, 40), in;
	uint32_t k;
	size_t op;

	memset(rslot(x, r), SENTINEL, rslot_sz);
	for (k = 0; k < m->nsge; k++) {
		sge[k].addr = (uintptr_t)sge_addr(x, r, k);
		sge[k].length = m->sge_len[k];
		sge[k].lkey = x->mr->lkey;
	}
	wr.flags = signaled ? IBV_OPS_SIGNALED : 0;
	in = op_sync(x, &wr, false);
	wr.tm.add.recv_wr_id = WR(WK_TAG, r);
	wr.tm.add.sg_list = sge;
	wr.tm.add.num_sge = m->nsge;
	wr.tm.add.tag = m->rtag;
	wr.tm.add.mask = m->rmask;
	/*
	 * Out of phase for sure when software knows of more unexpected
	 * messages than it reported; in phase for sure only while quiet.
	 */
	op = new_op(x, OP_ADD, (int)r, EX_OK, signaled,
		    !in ? 1 : x->quiet ? 0 : -1);
	wr.wr_id = WR(WK_OP, op);
	post_ops(x, &wr, "ADD");
	x->rc[r].hw = 1;
	x->rc[r].handle = wr.tm.handle;
	x->rc[r].order = ++x->add_order;
	x->rc[r].armed = in && x->quiet;
	x->rc[r].known_out = !in;
	if (!in)
		x->t.out_of_phase++;
}

/* DEL the entry of receive @r, expecting @expect. */
static void del_entry(struct rx *x, uint32_t r, uint8_t expect, bool signaled)
{
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_DEL };
	bool in;
	size_t op;

	wr.flags = signaled ? IBV_OPS_SIGNALED : 0;
	in = op_sync(x, &wr, false);
	wr.tm.handle = x->rc[r].handle;
	op = new_op(x, OP_DEL, (int)r, expect, signaled,
		    !in ? 1 : x->quiet ? 0 : -1);
	wr.wr_id = WR(WK_OP, op);
	post_ops(x, &wr, "DEL");
	x->rc[r].del_sent = 1;
	x->rc[r].del_op = (int)op;
	/* a DEL expected to succeed has: the entry is gone now */
	if (expect == EX_OK)
		x->rc[r].hw = 0;
}

static void sync_op(struct rx *x, bool signaled)
{
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_SYNC };
	bool in;
	size_t op;

	wr.flags = signaled ? IBV_OPS_SIGNALED : 0;
	in = op_sync(x, &wr, true);
	op = new_op(x, OP_SYNC, -1, EX_OK, signaled,
		    !in ? 1 : x->quiet ? 0 : -1);
	wr.wr_id = WR(WK_OP, op);
	post_ops(x, &wr, "SYNC");
}

static void decoy_add(struct rx *x, int d)
{
	struct decoy *dc = &x->dec[d];
	struct ibv_sge sge = {
		.addr = (uintptr_t)(x->mem + x->decoybufs + (size_t)d * 256),
		.length = 256, .lkey = x->mr->lkey,
	};
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_ADD };
	bool signaled = chance(&x->rng, 50), in;
	size_t op;

	memset(x->mem + x->decoybufs + (size_t)d * 256, SENTINEL, 256);
	dc->mask = chance(&x->rng, 50) ? ~0ULL :
		   ~(rnd(&x->rng) & ~CLASS_MASK);
	dc->tag = (rnd(&x->rng) & ~CLASS_MASK) | CL_DECOY;
	if (!chance(&x->rng, 70))
		/* bits outside its mask: could not match even its class */
		dc->tag |= ~dc->mask & ~CLASS_MASK;
	else
		dc->tag &= dc->mask;
	wr.flags = signaled ? IBV_OPS_SIGNALED : 0;
	in = op_sync(x, &wr, false);
	wr.tm.add.recv_wr_id = WR(WK_TAG, (1ULL << 40) | (uint64_t)d);
	wr.tm.add.sg_list = &sge;
	wr.tm.add.num_sge = 1;
	wr.tm.add.tag = dc->tag;
	wr.tm.add.mask = dc->mask;
	op = new_op(x, OP_ADD, -(d + 1), EX_OK, signaled,
		    !in ? 1 : x->quiet ? 0 : -1);
	wr.wr_id = WR(WK_OP, op);
	post_ops(x, &wr, "ADD decoy");
	dc->listed = 1;
	dc->handle = wr.tm.handle;
	x->t.decoys++;
}

static void decoy_del(struct rx *x, int d)
{
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_DEL };
	bool signaled = chance(&x->rng, 50), in;
	size_t op;

	wr.flags = signaled ? IBV_OPS_SIGNALED : 0;
	in = op_sync(x, &wr, false);
	wr.tm.handle = x->dec[d].handle;
	op = new_op(x, OP_DEL, -(d + 1), EX_OK, signaled,
		    !in ? 1 : x->quiet ? 0 : -1);
	wr.wr_id = WR(WK_OP, op);
	post_ops(x, &wr, "DEL decoy");
	x->dec[d].listed = 0;
}

/* A chain of up to max_ops SYNCs in one call (every one signaled). */
static void sync_chain(struct rx *x)
{
	struct ibv_ops_wr wr[4];
	uint32_t n = min32(x->max_ops, 2 + rndn(&x->rng, 3)), k;
	bool in = true;

	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		wr[k].opcode = IBV_WR_TAG_SYNC;
		wr[k].flags = IBV_OPS_SIGNALED;
		in = op_sync(x, &wr[k], k == n - 1);
		wr[k].wr_id = WR(WK_OP, new_op(x, OP_SYNC, -1, EX_OK, true,
					       !in ? 1 : x->quiet ? 0 : -1));
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	post_ops(x, wr, "SYNC chain");
	x->t.chains++;
}

static void post_slot(struct rx *x, uint32_t u)
{
	struct ibv_sge sge = { .addr = (uintptr_t)uslot(x, u),
			       .length = uslot_sz, .lkey = x->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR(WK_SLOT, u), .sg_list = &sge,
				  .num_sge = 1 }, *badw;

	memset(uslot(x, u), SENTINEL, uslot_sz);
	if (ibv_post_srq_recv(x->srq, &wr, &badw))
		die("ibv_post_srq_recv");
}

static void post_send(struct rx *x, uint64_t wr_id, enum ibv_wr_opcode opc,
		      uint8_t *buf, uint32_t len, uint64_t va, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len,
			       .lkey = x->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = opc,
				  .send_flags = IBV_SEND_SIGNALED }, *badw;

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(x->qp, &wr, &badw))
		die("ibv_post_send");
	x->outstanding_sends++;
}

/* The receive @r took message @i in software (or after an INCOMPLETE). */
static void sw_take(struct rx *x, uint32_t r, uint32_t i)
{
	const struct msg *m = &plan[i];

	x->rc[r].got = (int)i;
	x->ms[i].rcv = (int)r;
	x->ms[i].st = MS_SW;
	if (m->kind == K_EAGER) {
		/* its bytes were checked where they landed */
		x->rc[r].st = RS_DONE;
		x->ms[i].st = MS_DONE;
		x->done_rcv++;
		return;
	}
	/* rendezvous in software: READ, then FIN */
	memset(swbuf(x, i), SENTINEL, x->o->maxsz);
	post_send(x, WR(WK_READ, r), IBV_WR_RDMA_READ, swbuf(x, i), m->size,
		  peer_va(x, i), x->peer.rkey);
	x->rc[r].st = RS_SWREAD;
	x->t.sw_rndv++;
}

/* @r, posted, takes @i in software: its device entry must go first. */
static void sw_match_posted(struct rx *x, uint32_t r, uint32_t i)
{
	struct rcv *rc = &x->rc[r];

	if (rc->hw) {
		if (rc->del_sent) {
			/* a racing DEL is on its way: it must succeed */
			x->ops[rc->del_op].expect = EX_OK;
		} else {
			del_entry(x, r, EX_OK, chance(&x->rng, 50));
		}
		rc->hw = 0;
	}
	x->t.sw_posted++;
	sw_take(x, r, i);
}

static bool rcv_takes(uint32_t r, uint32_t i)
{
	return (plan[i].tag & plan[r].rmask) == plan[r].rtag;
}

/* Post receive @r: from the unexpected queue, or offered to the device. */
static void post_rcv(struct rx *x, uint32_t r)
{
	uint32_t q;

	for (q = 0; q < x->nqueue; q++) {
		uint32_t i = (uint32_t)x->queue[q];

		if (!rcv_takes(r, i))
			continue;
		memmove(&x->queue[q], &x->queue[q + 1],
			(x->nqueue - q - 1) * sizeof(*x->queue));
		x->nqueue--;
		x->t.sw_queued++;
		sw_take(x, r, i);
		return;
	}
	x->rc[r].st = RS_POSTED;
	x->posted[x->nposted++] = (int)r;
	if (plan[r].hw)
		add_entry(x, r);
}

static void check_pred(struct rx *x, uint32_t i, int got, bool incomplete)
{
	struct mst *s = &x->ms[i];
	char a[160];

	if (s->pred == PRED_UNKNOWN)
		return;
	x->t.predicted++;
	msg_str(i, a, sizeof(a));
	if (s->pred != got) {
		char b[200] = "no entry", c[200] = "no entry";

		if (s->pred >= 0)
			rcv_str((uint32_t)s->pred, b, sizeof(b));
		if (got >= 0)
			rcv_str((uint32_t)got, c, sizeof(c));
		bad("%s %s (%s), but the list before GO says %s (%s)", a,
		    got < 0 ? "arrived unexpected" : "was matched", c,
		    s->pred < 0 ? "unexpected: no armed entry matches it" :
		    "the oldest armed entry that matches it", b);
	} else if (got >= 0 && s->pred_incomplete != incomplete) {
		bad("%s: %s, want %s", a,
		    incomplete ? "IBV_WC_TM_RNDV_INCOMPLETE" : "a complete rendezvous",
		    s->pred_incomplete ? "IBV_WC_TM_RNDV_INCOMPLETE" : "a complete rendezvous");
	}
}

/* The message a TMH tag names, or -1 (with a failure reported). */
static int tag_msg(struct rx *x, uint64_t tag, const char *where)
{
	uint64_t i = tag & IDX_MASK;

	if (i < x->cw->a || i >= x->cw->b || plan[i].tag != tag) {
		bad("%s: tag %#llx is no message of this window (%u..%u)",
		    where, (unsigned long long)tag, x->cw->a, x->cw->b - 1);
		return -1;
	}
	return (int)i;
}

static void on_match(struct rx *x, uint32_t r, const struct twc *c)
{
	struct rcv *rc = &x->rc[r];
	char a[160], b[200], w[300];
	const struct msg *m;
	bool dv = c->flags & IBV_WC_TM_DATA_VALID;
	uint8_t want[TMH + HDR_MAX];
	const char *why;
	int i;

	wc_str(c, w, sizeof(w));
	rcv_str(r, b, sizeof(b));
	if (rc->st != RS_POSTED || !rc->hw) {
		bad("%s: a MATCH completion, but it is %s: %s", b,
		    rc->st == RS_POSTED ? "deleted from the list" :
		    rc->st == RS_IDLE ? "not posted" : "taken already", w);
		return;
	}
	i = tag_msg(x, c->tag, b);
	if (i < 0)
		return;
	m = &plan[i];
	msg_str((uint32_t)i, a, sizeof(a));
	if (!rcv_takes(r, (uint32_t)i) || m->kind == K_NOTAG)
		bad("%s matched %s, which it does not match: %s", a, b, w);
	if (x->ms[i].st != MS_NONE)
		bad("%s matched %s after it arrived already (state %d): %s",
		    a, b, x->ms[i].st, w);
	if (c->priv != m->app_ctx)
		bad("%s: tm_info.priv %#x, want its app_ctx %#x: %s", a,
		    c->priv, m->app_ctx, w);
	if (c->qp_num != x->qp->qp_num)
		bad("%s: qp_num %u, want %u", a, c->qp_num, x->qp->qp_num);
	if (rc->known_out)
		bad("%s matched %s, whose ADD was made out of phase (reported %u, seen more): %s",
		    a, b, x->reported, w);
	check_pred(x, (uint32_t)i, (int)r, c->status == IBV_WC_TM_RNDV_INCOMPLETE);
	rc->got = i;
	rc->hw = 0;
	rc->via_hw = 1;
	x->ms[i].st = MS_HW;
	x->ms[i].rcv = (int)r;
	x->arrived++;
	x->t.matched++;
	if (m->anon)
		x->t.hw_anon++;
	if (m->rmask != ~0ULL && !m->anon)
		x->t.hw_masked++;
	if (m->nsge > 1)
		x->t.hw_multisge++;

	if (c->status == IBV_WC_TM_RNDV_INCOMPLETE) {
		x->t.incomplete++;
		if (m->kind != K_RNDV || m->buflen >= m->size)
			bad("%s into %s: IBV_WC_TM_RNDV_INCOMPLETE, but the buffer holds it: %s",
			    a, b, w);
		if (!dv || !(c->flags & IBV_WC_TM_MATCH))
			bad("%s: IBV_WC_TM_RNDV_INCOMPLETE without MATCH|DATA_VALID: %s",
			    a, w);
		why = check_tagged(x, r, want, msg_bytes((uint32_t)i, want,
							 peer_va(x, (uint32_t)i),
							 x->peer.rkey));
		if (why)
			bad("%s: IBV_WC_TM_RNDV_INCOMPLETE: the headers in the tagged buffer: %s",
			    a, why);
		/* software does the rendezvous */
		sw_take(x, r, (uint32_t)i);
		return;
	}
	if (m->kind == K_RNDV && m->buflen < m->size)
		bad("%s into %s (%u bytes): matched with success, want IBV_WC_TM_RNDV_INCOMPLETE: %s",
		    a, b, m->buflen, w);
	if (m->kind == K_EAGER && dv) {
		if (TMH + m->size > MTU_BYTES)
			bad("%s: one completion with MATCH|DATA_VALID for a multi-packet message: %s",
			    a, w);
		if (c->byte_len != m->size)
			bad("%s: byte_len %u, want %u: %s", a, c->byte_len,
			    m->size, w);
		msg_bytes((uint32_t)i, x->mem + x->memlen, 0, 0);
		why = check_tagged(x, r, x->mem + x->memlen + TMH, m->size);
		if (why)
			bad("%s in %s: %s", a, b, why);
		x->t.hw_eager1++;
		rc->st = RS_DONE;
		x->ms[i].st = MS_DONE;
		x->done_rcv++;
		return;
	}
	if (dv)
		bad("%s: MATCH|DATA_VALID at once for a rendezvous: %s", a, w);
	if (m->kind == K_EAGER && TMH + m->size <= MTU_BYTES)
		bad("%s: a single-packet message completed with MATCH only: %s",
		    a, w);
	rc->st = RS_HWDATA;
	/*
	 * Its data is still coming: the entry is consumed, a DEL of it now
	 * must fail with IBV_WC_TM_ERR (its handle is not back yet: the
	 * DATA_VALID completion has not been polled).
	 */
	if (chance(&x->rng, 25)) {
		del_entry(x, r, EX_ERR, chance(&x->rng, 50));
		x->t.del_consumed++;
	}
}

static void on_data_valid(struct rx *x, uint32_t r, const struct twc *c)
{
	struct rcv *rc = &x->rc[r];
	char a[160], b[200], w[300];
	const struct msg *m;
	const char *why;

	wc_str(c, w, sizeof(w));
	rcv_str(r, b, sizeof(b));
	if (rc->st != RS_HWDATA) {
		bad("%s: DATA_VALID without a MATCH before (state %d): %s", b,
		    rc->st, w);
		return;
	}
	m = &plan[rc->got];
	msg_str((uint32_t)rc->got, a, sizeof(a));
	if (c->status != IBV_WC_SUCCESS) {
		bad("%s into %s: DATA_VALID completion with an error: %s", a, b, w);
		return;
	}
	if (c->tag != 0)
		bad("%s: the DATA_VALID completion carries tag %#llx, want 0: %s",
		    a, (unsigned long long)c->tag, w);
	if (c->byte_len != m->size)
		bad("%s: DATA_VALID byte_len %u, want %u: %s", a, c->byte_len,
		    m->size, w);
	msg_bytes((uint32_t)rc->got, x->mem + x->memlen, 0, 0);
	if (m->kind == K_EAGER) {
		why = check_tagged(x, r, x->mem + x->memlen + TMH, m->size);
		x->t.hw_eagerN++;
	} else {
		uint8_t *p = x->mem + x->memlen + TMH;
		uint32_t k;

		for (k = 0; k < m->size; k++)
			p[k] = pat((uint32_t)rc->got, k);
		why = check_tagged(x, r, p, m->size);
		x->t.hw_rndv++;
		x->t.rndv_reads++;
	}
	if (why)
		bad("%s in %s: %s", a, b, why);
	rc->st = RS_DONE;
	x->ms[rc->got].st = MS_DONE;
	x->done_rcv++;
}

/* An unexpected (tagged, unmatched) or NO_TAG message in slot @u. */
static void on_slot(struct rx *x, uint32_t u, const struct twc *c)
{
	uint8_t *p = uslot(x, u), *want = x->mem + x->memlen;
	char a[160], w[300];
	const struct msg *m;
	struct ibv_tmh t;
	uint32_t len, k, q;
	int i;

	wc_str(c, w, sizeof(w));
	if (c->status != IBV_WC_SUCCESS || c->byte_len < TMH) {
		bad("an ordinary receive completed: %s", w);
		goto repost;
	}
	memcpy(&t, p, TMH);
	i = tag_msg(x, be64toh(t.tag), "an ordinary receive");
	if (i < 0) {
		bad("  it completed %s", w);
		goto repost;
	}
	m = &plan[i];
	msg_str((uint32_t)i, a, sizeof(a));
	if (x->ms[i].st != MS_NONE) {
		bad("%s arrived again (state %d): %s", a, x->ms[i].st, w);
		goto repost;
	}
	len = msg_bytes((uint32_t)i, want, peer_va(x, (uint32_t)i), x->peer.rkey);
	if (c->byte_len != len)
		bad("%s in an ordinary receive: byte_len %u, want %u (the whole message): %s",
		    a, c->byte_len, len, w);
	for (k = 0; k < len + 64 && k < uslot_sz; k++) {
		uint8_t e = k < len ? want[k] : SENTINEL;

		if (p[k] != e) {
			bad("%s in an ordinary receive: byte %u is %#x, want %#x%s",
			    a, k, p[k], e, k < len ? "" : " (beyond: untouched)");
			break;
		}
	}
	if (c->flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID))
		bad("%s in an ordinary receive with MATCH/DATA_VALID: %s", a, w);
	if (c->tag)
		bad("%s in an ordinary receive: tm_info.tag %#llx, want 0: %s",
		    a, (unsigned long long)c->tag, w);
	if (c->qp_num != x->qp->qp_num)
		bad("%s: qp_num %u, want %u", a, c->qp_num, x->qp->qp_num);
	x->arrived++;
	if (m->kind == K_NOTAG) {
		if (c->opcode != IBV_WC_TM_NO_TAG)
			bad("%s: opcode %#x, want IBV_WC_TM_NO_TAG: %s", a,
			    c->opcode, w);
		x->ms[i].st = MS_DONE;
		x->t.no_tag++;
		goto repost;
	}
	if (c->opcode != IBV_WC_TM_RECV)
		bad("%s, unexpected: opcode %#x, want IBV_WC_TM_RECV: %s", a,
		    c->opcode, w);
	x->unexp_seen++;
	x->t.unexpected++;
	if (m->kind == K_EAGER)
		x->t.unexp_eager++;
	else
		x->t.unexp_rndv++;
	check_pred(x, (uint32_t)i, PRED_UNEXP, false);
	x->ms[i].st = MS_QUEUED;
	/* a posted receive takes it, the oldest first */
	for (q = 0; q < x->nposted; q++) {
		uint32_t r = (uint32_t)x->posted[q];

		if (x->rc[r].st == RS_POSTED && rcv_takes(r, (uint32_t)i)) {
			sw_match_posted(x, r, (uint32_t)i);
			goto repost;
		}
	}
	x->queue[x->nqueue++] = i;
repost:
	post_slot(x, u);
}

static void on_op(struct rx *x, size_t opi, const struct twc *c)
{
	struct op *op;
	char w[300];
	static const int opc[] = { IBV_WC_TM_ADD, IBV_WC_TM_DEL, IBV_WC_TM_SYNC };
	static const char *const name[] = { "ADD", "DEL", "SYNC" };

	wc_str(c, w, sizeof(w));
	if (opi >= x->nops || x->ops[opi].done) {
		bad("a completion for no op outstanding: %s", w);
		return;
	}
	op = &x->ops[opi];
	op->done = 1;
	if (op->signaled)
		x->pending_ops--;
	else if (c->status == IBV_WC_SUCCESS)
		bad("a completion for an unsignaled, successful %s: %s",
		    name[op->kind], w);
	if (c->status == IBV_WC_SUCCESS) {
		if (c->opcode != opc[op->kind])
			bad("%s completion with opcode %#x, want %#x: %s",
			    name[op->kind], c->opcode, opc[op->kind], w);
		if (op->sync_req >= 0 &&
		    !!(c->flags & IBV_WC_TM_SYNC_REQ) != op->sync_req)
			bad("%s completion: SYNC_REQ %s, but the device counted %u unexpected messages and was told %u: %s",
			    name[op->kind], op->sync_req ? "missing" : "set",
			    x->unexp_seen, x->reported, w);
		if (c->flags & IBV_WC_TM_SYNC_REQ)
			x->t.sync_req_set++;
		else
			x->t.sync_req_clear++;
	}
	if (op->kind != OP_DEL || op->rcv < 0) {
		if (c->status != IBV_WC_SUCCESS)
			bad("%s (%s) failed: %s", name[op->kind],
			    op->rcv < 0 && op->kind != OP_SYNC ? "decoy" : "-", w);
		return;
	}
	/* a DEL of a receive's entry */
	{
		struct rcv *rc = &x->rc[op->rcv];
		char b[200];

		rcv_str((uint32_t)op->rcv, b, sizeof(b));
		if (c->status == IBV_WC_SUCCESS) {
			if (op->expect == EX_ERR)
				bad("DEL of %s right after its MATCH succeeded, want IBV_WC_TM_ERR (consumed): %s",
				    b, w);
			if (rc->via_hw)
				bad("DEL of %s succeeded, yet the device matched it: %s",
				    b, w);
			if (op->expect == EX_ANY)
				x->t.race_del_ok++;
			else
				x->t.del_ok++;
			rc->hw = 0;
		} else if (c->status == IBV_WC_TM_ERR) {
			x->t.op_errs++;
			if (op->expect == EX_OK)
				bad("DEL of %s: IBV_WC_TM_ERR, want success (its message was not matched by the device): %s",
				    b, w);
			/*
			 * Consumed: its MATCH must come; the op's completion
			 * may overtake it (only matches and unexpected
			 * messages are ordered among themselves).
			 */
			if (!rc->via_hw)
				rc->err_first = 1;
			if (op->expect == EX_ANY)
				x->t.race_del_err++;
		} else {
			bad("DEL of %s: %s", b, w);
		}
	}
}

static void on_tm(struct rx *x, const struct twc *c)
{
	uint64_t k = WR_KIND(c->wr_id), idx = WR_IDX(c->wr_id);
	char w[300];

	x->last_progress = now_ms();
	switch (k) {
	case WK_TAG:
		if (idx >= x->o->n || idx < x->cw->a || idx >= x->cw->b) {
			wc_str(c, w, sizeof(w));
			bad("a completion for %s: %s", idx >> 40 ? "a decoy tag" :
			    "a receive of no running window", w);
			return;
		}
		if (c->opcode != IBV_WC_TM_RECV && c->status == IBV_WC_SUCCESS) {
			wc_str(c, w, sizeof(w));
			bad("a tagged buffer completed with opcode %#x: %s",
			    c->opcode, w);
			return;
		}
		if (c->status == IBV_WC_TM_RNDV_INCOMPLETE ||
		    (c->status == IBV_WC_SUCCESS && (c->flags & IBV_WC_TM_MATCH)))
			on_match(x, (uint32_t)idx, c);
		else if (c->flags & IBV_WC_TM_DATA_VALID ||
			 c->status != IBV_WC_SUCCESS)
			on_data_valid(x, (uint32_t)idx, c);
		else {
			wc_str(c, w, sizeof(w));
			bad("a tagged buffer completed without MATCH or DATA_VALID: %s", w);
		}
		return;
	case WK_SLOT:
		if (idx >= x->nu)
			break;
		on_slot(x, (uint32_t)idx, c);
		return;
	case WK_OP:
		on_op(x, (size_t)idx, c);
		return;
	}
	wc_str(c, w, sizeof(w));
	bad("a completion with a wr_id never posted: %s", w);
}

static void on_send(struct rx *x, const struct ibv_wc *wc)
{
	uint64_t k = WR_KIND(wc->wr_id), r = WR_IDX(wc->wr_id);
	struct rcv *rc;
	char a[160];

	x->last_progress = now_ms();
	x->outstanding_sends--;
	if (wc->status != IBV_WC_SUCCESS) {
		bad("receiver's %s (wr_id %#llx) failed: %s", k == WK_READ ? "RDMA READ" :
		    k == WK_FIN ? "FIN" : "SEND", (unsigned long long)wc->wr_id,
		    ibv_wc_status_str(wc->status));
		exit(1);
	}
	if (k == WK_BYE)
		return;
	if ((k != WK_READ && k != WK_FIN) || r < x->cw->a || r >= x->cw->b) {
		bad("a send completion with a wr_id never posted: %#llx",
		    (unsigned long long)wc->wr_id);
		return;
	}
	rc = &x->rc[r];
	msg_str((uint32_t)rc->got, a, sizeof(a));
	if (k == WK_READ && rc->st == RS_SWREAD) {
		uint32_t i = (uint32_t)rc->got, n = plan[i].size, j;
		uint8_t *p = swbuf(x, i), *f = finbuf(x, i);
		struct ibv_tmh t;

		for (j = 0; j < n + 64 && j < x->o->maxsz; j++) {
			uint8_t e = j < n ? pat(i, j) : SENTINEL;

			if (p[j] != e) {
				bad("%s: software RDMA READ: byte %u is %#x, want %#x",
				    a, j, p[j], e);
				break;
			}
		}
		/* FIN: the TMH with op FIN, then the RVH */
		msg_bytes(i, f, peer_va(x, i), x->peer.rkey);
		memcpy(&t, f, TMH);
		t.opcode = IBV_TMH_FIN;
		memcpy(f, &t, TMH);
		post_send(x, WR(WK_FIN, r), IBV_WR_SEND, f, TMH + RVH, 0, 0);
		rc->st = RS_SWFIN;
	} else if (k == WK_FIN && rc->st == RS_SWFIN) {
		rc->st = RS_DONE;
		x->ms[rc->got].st = MS_DONE;
		x->done_rcv++;
	} else {
		bad("%s: a send completion (kind %llu) in state %d", a,
		    (unsigned long long)k, rc->st);
	}
}

static int poll_tm(struct ibv_cq_ex *cq, struct twc *w)
{
	struct ibv_poll_cq_attr pa = {};
	struct ibv_wc_tm_info ti = {};
	int ret = ibv_start_poll(cq, &pa);

	if (ret == ENOENT)
		return 0;
	if (ret) {
		errno = ret;
		die("ibv_start_poll");
	}
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->flags = ibv_wc_read_wc_flags(cq);
	w->byte_len = ibv_wc_read_byte_len(cq);
	w->qp_num = ibv_wc_read_qp_num(cq);
	ibv_wc_read_tm_info(cq, &ti);
	w->tag = ti.tag;
	w->priv = ti.priv;
	ibv_end_poll(cq);
	return 1;
}

/* Handle what completed; true if anything did. */
static bool progress(struct rx *x)
{
	struct ibv_wc wc[8];
	struct twc c;
	bool any = false;
	int n, k;

	for (k = 0; k < 16 && poll_tm(x->tmcq, &c); k++) {
		on_tm(x, &c);
		any = true;
	}
	n = ibv_poll_cq(x->scq, 8, wc);
	if (n < 0)
		die("ibv_poll_cq");
	for (k = 0; k < n; k++)
		on_send(x, &wc[k]);
	return any || n > 0;
}

static void dump_window(struct rx *x)
{
	uint32_t i;

	printf("# window %u..%u (%s): %u arrived, %u receives done, %u queued, %d ops and %u sends outstanding, seen %u reported %u\n",
	       x->cw->a, x->cw->b - 1, x->cw->race ? "race" : "serial",
	       x->arrived, x->done_rcv, x->nqueue, x->pending_ops,
	       x->outstanding_sends, x->unexp_seen, x->reported);
	for (i = x->cw->a; i < x->cw->b; i++) {
		char a[160];

		if (x->ms[i].st == MS_DONE &&
		    (plan[i].kind == K_NOTAG || x->rc[i].st == RS_DONE))
			continue;
		msg_str(i, a, sizeof(a));
		printf("#   %s: state %d pred %d; its receive: when %u hw %u state %d got %d\n",
		       a, x->ms[i].st, x->ms[i].pred, plan[i].when, x->rc[i].hw,
		       x->rc[i].st, x->rc[i].got);
	}
}

typedef bool (*cond_fn)(struct rx *x);

static void wait_until(struct rx *x, cond_fn cond, const char *what)
{
	x->last_progress = now_ms();
	while (!cond(x)) {
		if (!progress(x)) {
			if (now_ms() - x->last_progress > WAIT_MS) {
				bad("%s: nothing completed for %d s", what,
				    WAIT_MS / 1000);
				dump_window(x);
				exit(1);
			}
			usleep(100);
		}
	}
}

static bool all_arrived(struct rx *x)
{
	return x->arrived == x->cw->b - x->cw->a;
}

static bool all_done(struct rx *x)
{
	return x->done_rcv == x->cwn && !x->pending_ops &&
	       !x->outstanding_sends;
}

static bool no_ops_pending(struct rx *x)
{
	return !x->pending_ops && !x->outstanding_sends;
}

/*
 * The device's list is known (quiet, before GO): which entry each
 * message of the window must match - the oldest armed, listed one with
 * (tag & mask) == entry tag - or that it is unexpected.  In a racing
 * window only for specific messages whose entry nothing touches.
 */
static void predict(struct rx *x)
{
	const struct win *cw = x->cw;
	int ent[256];
	uint32_t ne = 0, i, e, k;

	for (i = cw->a; i < cw->b; i++) {
		x->ms[i].pred = PRED_UNKNOWN;
		x->ms[i].pred_incomplete = 0;
		if (plan[i].kind == K_NOTAG)
			continue;
		if (x->rc[i].st == RS_POSTED && x->rc[i].hw && x->rc[i].armed)
			ent[ne++] = (int)i;
	}
	/* ADD order */
	for (e = 1; e < ne; e++)
		for (k = e; k > 0 && x->rc[ent[k - 1]].order > x->rc[ent[k]].order; k--) {
			int tmp = ent[k];

			ent[k] = ent[k - 1];
			ent[k - 1] = tmp;
		}
	for (i = cw->a; i < cw->b; i++) {
		const struct msg *m = &plan[i];

		if (m->kind == K_NOTAG)
			continue;
		if (cw->race) {
			const struct rcv *rc = &x->rc[i];

			if (m->anon || m->when == W_RACE)
				continue;
			if (rc->st != RS_POSTED || !rc->hw || !rc->armed)
				x->ms[i].pred = PRED_UNEXP;
			else if (!m->race_del)
				x->ms[i].pred = (int)i;
			if (x->ms[i].pred == (int)i)
				x->ms[i].pred_incomplete = m->kind == K_RNDV &&
							   m->buflen < m->size;
			continue;
		}
		x->ms[i].pred = PRED_UNEXP;
		for (e = 0; e < ne; e++) {
			uint32_t r = (uint32_t)ent[e];

			if (ent[e] < 0 || !rcv_takes(r, i))
				continue;
			x->ms[i].pred = (int)r;
			x->ms[i].pred_incomplete = m->kind == K_RNDV &&
						   plan[r].buflen < m->size;
			ent[e] = -1;
			break;
		}
	}
}

struct action {
	uint8_t del;
	uint32_t r;
};

static void run_window(struct rx *x, uint32_t w)
{
	const struct win *cw = &wins[w];
	struct action act[512];
	uint32_t nact = 0, done_act = 0, i, k, nadd = 0, ndel = 0, ia, id;
	uint32_t adds[256], dels[256];

	x->cw = cw;
	x->nposted = 0;
	x->nqueue = 0;
	x->arrived = 0;
	x->done_rcv = 0;
	x->cwn = 0;
	for (i = cw->a; i < cw->b; i++) {
		x->ms[i].st = MS_NONE;
		x->ms[i].rcv = -1;
		x->rc[i].st = RS_IDLE;
		x->rc[i].got = -1;
		if (plan[i].kind != K_NOTAG)
			x->cwn++;
	}

	/* quiet: post the early receives, decoys come and go */
	x->quiet = true;
	for (i = cw->a; i < cw->b; i++) {
		if (plan[i].kind == K_NOTAG || plan[i].when != W_EARLY)
			continue;
		if (chance(&x->rng, 10)) {
			int d = (int)rndn(&x->rng, NDECOY);

			if (x->dec[d].listed)
				decoy_del(x, d);
			else
				decoy_add(x, d);
		}
		post_rcv(x, i);
		if (chance(&x->rng, 5))
			sync_chain(x);
	}
	for (i = cw->a; i < cw->b; i++)
		if (plan[i].kind != K_NOTAG && plan[i].when == W_EARLY &&
		    plan[i].del_early && x->rc[i].hw)
			del_entry(x, i, EX_OK, chance(&x->rng, 50));
	wait_until(x, no_ops_pending, "the ops before GO");
	predict(x);
	x->quiet = false;

	/* GO: the stream runs; racing receives and DELs meanwhile */
	for (i = cw->a; i < cw->b; i++) {
		if (plan[i].kind == K_NOTAG)
			continue;
		if (plan[i].when == W_RACE)
			adds[nadd++] = i;
		if (plan[i].race_del && x->rc[i].hw)
			dels[ndel++] = i;
	}
	for (k = 0, ia = 0, id = 0; k < nadd + ndel; k++) {
		if (id == ndel || (ia < nadd && chance(&x->rng, 50)))
			act[nact++] = (struct action){ 0, adds[ia++] };
		else
			act[nact++] = (struct action){ 1, dels[id++] };
	}
	tell_peer(x->fd, TOK_GO | w);
	x->last_progress = now_ms();
	while (!all_arrived(x) || done_act < nact) {
		bool any = progress(x);

		if (done_act < nact && (!any || chance(&x->rng, 30))) {
			const struct action *a = &act[done_act++];
			struct rcv *rc = &x->rc[a->r];

			if (!a->del) {
				post_rcv(x, a->r);
			} else if (rc->st == RS_POSTED && rc->hw && !rc->del_sent) {
				/*
				 * Now and then let the stream run unpolled a
				 * moment first: the DEL then also meets
				 * entries consumed behind our back.
				 */
				if (chance(&x->rng, 50))
					usleep(rndn(&x->rng, 4000));
				del_entry(x, a->r, EX_ANY, true);
			}
			continue;
		}
		if (!any) {
			if (now_ms() - x->last_progress > WAIT_MS) {
				bad("window %u: no message arrived for %d s", w,
				    WAIT_MS / 1000);
				dump_window(x);
				exit(1);
			}
			usleep(100);
		}
	}

	/* late receives: their messages wait in the unexpected queue */
	for (i = cw->a; i < cw->b; i++) {
		char a[200];
		uint32_t before;

		if (plan[i].kind == K_NOTAG || plan[i].when != W_LATE)
			continue;
		before = x->nqueue;
		post_rcv(x, i);
		if (x->nqueue == before) {
			rcv_str(i, a, sizeof(a));
			bad("late %s: no unexpected message for it, though every message arrived",
			    a);
			dump_window(x);
			exit(1);
		}
	}
	wait_until(x, all_done, "window's receives");
	if (x->nqueue)
		bad("window %u: %u unexpected messages no receive took (first: message %d)",
		    w, x->nqueue, x->queue[0]);
	for (i = cw->a; i < cw->b; i++) {
		char a[200];

		if (plan[i].kind == K_NOTAG)
			continue;
		rcv_str(i, a, sizeof(a));
		if (x->rc[i].hw)
			bad("%s: still listed after its window", a);
		if (x->rc[i].err_first && !x->rc[i].via_hw)
			bad("%s: a DEL of it failed with IBV_WC_TM_ERR, but the device never matched it",
			    a);
	}

	/* quiet again: the device's count is ours */
	x->quiet = true;
	if (chance(&x->rng, 50)) {
		sync_op(x, true);
		wait_until(x, no_ops_pending, "SYNC");
	}
	tell_peer(x->fd, TOK_DONE | w);
}

static void rx_setup(struct rx *x)
{
	const struct opts *o = x->o;
	struct ibv_device_attr_ex da;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4096,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_srq_init_attr_ex sa = {};
	struct ibv_qp_init_attr qa = {};
	uint32_t want_tags = o->w + NDECOY + 8, u;

	x->ctx = open_dev_or_die(o->dev);
	if (ibv_query_device_ex(x->ctx, NULL, &da))
		die("ibv_query_device_ex");
	tap(da.tm_caps.flags & IBV_TM_CAP_RC && da.tm_caps.max_num_tags >= want_tags &&
	    da.tm_caps.max_sge >= MAX_SGE && da.tm_caps.max_rndv_hdr_size >= HDR_MAX,
	    "tm_caps: RC tag matching, enough tags, SGEs and header room",
	    "flags %#x max_num_tags %u max_sge %u max_rndv_hdr_size %u",
	    da.tm_caps.flags, da.tm_caps.max_num_tags, da.tm_caps.max_sge,
	    da.tm_caps.max_rndv_hdr_size);
	x->pd = ibv_alloc_pd(x->ctx);
	x->tmcq = ibv_create_cq_ex(x->ctx, &ca);
	x->scq = ibv_create_cq(x->ctx, 4 * o->w + 64, NULL, NULL, 0);
	if (!x->pd || !x->tmcq || !x->scq)
		die("PD or CQs");
	x->nu = o->w + 16;
	sa.attr.max_wr = x->nu;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	sa.srq_type = IBV_SRQT_TM;
	sa.pd = x->pd;
	sa.cq = ibv_cq_ex_to_cq(x->tmcq);
	sa.tm_cap.max_num_tags = want_tags;
	sa.tm_cap.max_ops = 8;
	x->srq = ibv_create_srq_ex(x->ctx, &sa);
	if (!x->srq)
		die("ibv_create_srq_ex(IBV_SRQT_TM)");
	tap(sa.tm_cap.max_num_tags >= want_tags && sa.tm_cap.max_ops >= 8,
	    "ibv_create_srq_ex(IBV_SRQT_TM) writes back tm_cap",
	    "max_num_tags %u (asked %u) max_ops %u (asked 8)",
	    sa.tm_cap.max_num_tags, want_tags, sa.tm_cap.max_ops);
	x->max_tags = sa.tm_cap.max_num_tags;
	x->max_ops = sa.tm_cap.max_ops;
	qa.send_cq = x->scq;
	qa.recv_cq = ibv_cq_ex_to_cq(x->tmcq);
	qa.srq = x->srq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * o->w + 16;
	qa.cap.max_send_sge = 1;
	x->qp = ibv_create_qp(x->pd, &qa);
	if (!x->qp)
		die("ibv_create_qp(RC on the TM SRQ)");
	if (qp_init(x->qp, 0))
		die("modify QP to INIT");

	x->rslots = 0;
	x->uslots = x->rslots + (size_t)o->w * rslot_sz;
	x->swbufs = x->uslots + (size_t)x->nu * uslot_sz;
	x->finbufs = x->swbufs + (size_t)o->w * o->maxsz;
	x->decoybufs = x->finbufs + (size_t)o->w * 64 + 64;
	x->memlen = x->decoybufs + NDECOY * 256;
	/* scratch (an expected message) after the registered part */
	x->mem = aligned_alloc(4096, (x->memlen + TMH + o->maxsz + 64 + 4095) & ~(size_t)4095);
	if (!x->mem)
		die("aligned_alloc");
	memset(x->mem, SENTINEL, x->memlen);
	x->mr = ibv_reg_mr(x->pd, x->mem, x->memlen, IBV_ACCESS_LOCAL_WRITE);
	if (!x->mr)
		die("ibv_reg_mr");
	for (u = 0; u < x->nu; u++)
		post_slot(x, u);
	x->rc = calloc(o->n, sizeof(*x->rc));
	x->ms = calloc(o->n, sizeof(*x->ms));
	x->posted = calloc(o->w, sizeof(int));
	x->queue = calloc(o->w, sizeof(int));
	if (!x->rc || !x->ms || !x->posted || !x->queue)
		die("calloc");
}

static void rx_teardown(struct rx *x)
{
	int d, ret, last = -1;

	/* the decoys go, but one (a tag still listed when the SRQ goes) */
	x->quiet = true;
	for (d = 0; d < NDECOY; d++)
		if (x->dec[d].listed) {
			if (last >= 0)
				decoy_del(x, last);
			last = d;
		}
	if (last < 0)
		decoy_add(x, 0);
	wait_until(x, no_ops_pending, "the last DELs");
	progress(x);
	ret = ibv_destroy_srq(x->srq);
	tap(ret == EBUSY, "ibv_destroy_srq while an RC QP uses the TM SRQ: EBUSY",
	    "returned %d", ret);
	if (!ret)
		exit(1);
	if (ibv_destroy_qp(x->qp))
		die("ibv_destroy_qp");
	ret = ibv_destroy_cq(ibv_cq_ex_to_cq(x->tmcq));
	tap(ret == EBUSY, "ibv_destroy_cq while the TM SRQ uses it: EBUSY",
	    "returned %d", ret);
	if (!ret)
		exit(1);
	ret = ibv_destroy_srq(x->srq);
	tap(!ret, "ibv_destroy_srq of the TM SRQ once no QP uses it (a tag still listed)",
	    "returned %d", ret);
	ret = ibv_destroy_cq(ibv_cq_ex_to_cq(x->tmcq));
	tap(!ret, "ibv_destroy_cq of its CQ then", "returned %d", ret);
	ibv_destroy_cq(x->scq);
	ibv_dereg_mr(x->mr);
	ibv_dealloc_pd(x->pd);
	ibv_close_device(x->ctx);
}

static bool bye_sent(struct rx *x)
{
	return !x->outstanding_sends;
}

static int run_receiver(const struct opts *o)
{
	struct rx x = { .o = o };
	struct hello me = {}, peer;
	union ibv_gid gid;
	uint32_t w, i, psn;
	struct tally *t = &x.t;
	unsigned int msgs[3] = {}, bytes_k = 0;

	side = "receiver";
	x.rng.s = o->seed ^ 0x7e57ab1eULL;
	rx_setup(&x);
	if (ibv_query_gid(x.ctx, 1, o->gidx, &gid))
		die("ibv_query_gid");
	psn = (uint32_t)(rnd(&x.rng) & 0xffffff);
	hello_make(&me, o, &gid, x.qp->qp_num, psn);
	printf("# tm_stress: receiver listening on %s\n", o->port);
	fflush(stdout);
	x.fd = tcp_listen_accept(o->port);
	if (write_all(x.fd, &me, sizeof(me)) || read_all(x.fd, &peer, sizeof(peer)))
		die("exchange");
	hello_check(o, &peer);
	x.peer = peer;
	qp_connect(x.qp, &peer, o->gidx, psn);

	for (w = 0; w < nwin; w++)
		run_window(&x, w);

	/* the last SEND on the QP: after every FIN */
	{
		uint8_t *b = x.mem + x.finbufs + (size_t)o->w * 64;

		memset(b, 0, 32);
		b[0] = BYE_OP;
		x.cw = &wins[nwin - 1];
		post_send(&x, WR(WK_BYE, 0), IBV_WR_SEND, b, 32, 0, 0);
		wait_until(&x, bye_sent, "the last SEND");
	}
	tell_peer(x.fd, TOK_BYE);
	expect_tok(x.fd, TOK_BYE);
	rx_teardown(&x);

	for (i = 0; i < o->n; i++) {
		msgs[plan[i].kind]++;
		bytes_k += plan[i].size / 1024;
	}
	printf("# tm_stress: %u messages (%u eager, %u rendezvous, %u no-tag), ~%u KiB, %u windows, seed %llu\n",
	       o->n, msgs[K_EAGER], msgs[K_RNDV], msgs[K_NOTAG], bytes_k, nwin,
	       (unsigned long long)o->seed);
	printf("# tm_stress: device matched %u (eager: %u one packet, %u more; rendezvous %u, incomplete %u; anonymous %u, masked %u, multi-SGE %u); unexpected %u (eager %u, rendezvous %u); software took %u from posted receives, %u from the queue, %u rendezvous\n",
	       t->matched, t->hw_eager1, t->hw_eagerN, t->hw_rndv, t->incomplete,
	       t->hw_anon, t->hw_masked, t->hw_multisge, t->unexpected,
	       t->unexp_eager, t->unexp_rndv, t->sw_posted, t->sw_queued,
	       t->sw_rndv);
	printf("# tm_stress: %u ops (%u chains), %u ADDs out of phase, %u DELs ok, %u DELs of consumed entries, racing DELs %u ok %u TM_ERR, SYNC_REQ set %u clear %u, %u outcomes predicted, %u decoys\n",
	       t->ops, t->chains, t->out_of_phase, t->del_ok, t->del_consumed,
	       t->race_del_ok, t->race_del_err, t->sync_req_set,
	       t->sync_req_clear, t->predicted, t->decoys);
	printf("tm_stress: tally matched=%u unexpected=%u no_tag=%u rndv_reads=%u rndv_incomplete=%u op_errs=%u\n",
	       t->matched, t->unexpected, t->no_tag, t->rndv_reads,
	       t->incomplete, t->op_errs);
	tap(true, "every message arrived once, every tagged buffer completed once, every byte checked",
	    "-");
	if (o->coverage) {
		struct {
			const char *what;
			unsigned int n;
		} cov[] = {
			{ "single-packet eager matched", t->hw_eager1 },
			{ "multi-packet eager matched", t->hw_eagerN },
			{ "rendezvous matched (device READ)", t->hw_rndv },
			{ "rendezvous incomplete", t->incomplete },
			{ "anonymous message matched by a wildcard entry", t->hw_anon },
			{ "match through a partial mask", t->hw_masked },
			{ "match into several SGEs", t->hw_multisge },
			{ "unexpected eager", t->unexp_eager },
			{ "unexpected rendezvous", t->unexp_rndv },
			{ "software match with a posted receive", t->sw_posted },
			{ "software match from the unexpected queue", t->sw_queued },
			{ "no-tag message", t->no_tag },
			{ "ADD out of phase", t->out_of_phase },
			{ "DEL of a consumed entry", t->del_consumed },
			{ "DEL that succeeded", t->del_ok },
			{ "SYNC_REQ on an op completion", t->sync_req_set },
			{ "outcome predicted and confirmed", t->predicted },
			{ "chain of ops in one call", t->chains },
		};
		char miss[512] = "";
		size_t k;

		for (k = 0; k < sizeof(cov) / sizeof(cov[0]); k++)
			if (!cov[k].n)
				snprintf(miss + strlen(miss), sizeof(miss) - strlen(miss),
					 "%s%s", miss[0] ? ", " : "", cov[k].what);
		tap(!miss[0], "coverage: every path of the plan was taken",
		    "never: %s", miss);
	}
	close(x.fd);
	printf("# tm_stress: receiver: %d failed\n", failures);
	return failures ? 1 : 0;
}

/* ================================================================== */
/* sender                                                             */
/* ================================================================== */

static int run_sender(const struct opts *o)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_qp_init_attr qa = {};
	struct hello me = {}, peer;
	union ibv_gid gid;
	uint8_t *mem, *slots, *fins;
	uint32_t nf = 2 * o->w + 16, psn, w, i, k, rndv_total = 0, fins_got = 0;
	uint8_t *fin_cnt;
	size_t len;
	bool bye = false;
	int fd;

	side = "sender";
	ctx = open_dev_or_die(o->dev);
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 2 * o->w + 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, nf + 16, NULL, NULL, 0);
	if (!pd || !scq || !rcq)
		die("PD or CQs");
	qa.send_cq = scq;
	qa.recv_cq = rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = o->w + 8;
	qa.cap.max_recv_wr = nf;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &qa);
	if (!qp)
		die("ibv_create_qp");
	if (qp_init(qp, IBV_ACCESS_REMOTE_READ))
		die("modify QP to INIT");
	len = (size_t)o->w * sslot_sz + (size_t)nf * 64;
	mem = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	fin_cnt = calloc(o->n, 1);
	if (!mem || !fin_cnt)
		die("alloc");
	memset(mem, 0, len);
	slots = mem;
	fins = mem + (size_t)o->w * sslot_sz;
	mr = ibv_reg_mr(pd, mem, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr");
	for (k = 0; k < nf; k++) {
		struct ibv_sge sge = { (uintptr_t)(fins + k * 64), 64, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *badw;

		memset(fins + k * 64, SENTINEL, 64);
		if (ibv_post_recv(qp, &wr, &badw))
			die("ibv_post_recv");
	}
	if (ibv_query_gid(ctx, 1, o->gidx, &gid))
		die("ibv_query_gid");
	srand48((long)o->seed);
	psn = (uint32_t)lrand48() & 0xffffff;
	hello_make(&me, o, &gid, qp->qp_num, psn);
	me.base = (uintptr_t)slots;
	me.rkey = mr->rkey;
	fd = tcp_connect(o->addr, o->port, "connect to the receiver", 900);
	if (read_all(fd, &peer, sizeof(peer)) || write_all(fd, &me, sizeof(me)))
		die("exchange");
	hello_check(o, &peer);
	qp_connect(qp, &peer, o->gidx, psn);

	for (w = 0; w <= nwin; w++) {
		const struct win *cw = &wins[w < nwin ? w : nwin - 1];
		uint32_t need = 0, got = 0, sent = 0;
		long long last;

		if (w == nwin) {
			/* the receiver's last SEND, after every FIN */
			expect_tok(fd, TOK_BYE);
		} else {
			expect_tok(fd, TOK_GO | w);
			for (i = cw->a; i < cw->b; i++) {
				uint8_t *p = slots + (size_t)(i - cw->a) * sslot_sz;
				uint64_t va = (uintptr_t)p + RNDV_OFF;
				struct ibv_sge sge = { (uintptr_t)p, 0, mr->lkey };
				struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge,
							  .num_sge = 1, .opcode = IBV_WR_SEND,
							  .send_flags = IBV_SEND_SIGNALED }, *badw;

				sge.length = msg_bytes(i, p, va, mr->rkey);
				if (plan[i].kind == K_RNDV) {
					for (k = 0; k < plan[i].size; k++)
						p[RNDV_OFF + k] = pat(i, k);
					need++;
				}
				if (ibv_post_send(qp, &wr, &badw))
					die("ibv_post_send");
			}
			rndv_total += need;
			last = now_ms();
			while (sent < cw->b - cw->a) {
				struct ibv_wc wc;
				int n = ibv_poll_cq(scq, 1, &wc);

				if (n < 0)
					die("ibv_poll_cq");
				if (!n) {
					if (now_ms() - last > WAIT_MS) {
						bad("window %u: %u of %u SENDs completed in %d s",
						    w, sent, cw->b - cw->a, WAIT_MS / 1000);
						exit(1);
					}
					usleep(100);
					continue;
				}
				last = now_ms();
				if (wc.status != IBV_WC_SUCCESS || wc.wr_id != cw->a + sent) {
					bad("SEND of message %llu: %s (want message %u, success)",
					    (unsigned long long)wc.wr_id,
					    ibv_wc_status_str(wc.status), cw->a + sent);
					exit(1);
				}
				sent++;
			}
			expect_tok(fd, TOK_DONE | w);
		}
		/* the FINs of the window (and, at the end, the receiver's BYE) */
		last = now_ms();
		while (got < need || (w == nwin && !bye)) {
			struct ibv_wc wc;
			struct ibv_recv_wr rw = {}, *badw;
			struct ibv_sge sge;
			struct ibv_tmh t;
			struct ibv_rvh v;
			uint8_t *p;
			int n = ibv_poll_cq(rcq, 1, &wc);
			uint64_t tag;

			if (n < 0)
				die("ibv_poll_cq");
			if (!n) {
				if (now_ms() - last > WAIT_MS) {
					bad("window %u: %u of %u FINs came in %d s%s", w,
					    got, need, WAIT_MS / 1000,
					    w == nwin ? " (waiting for the last SEND)" : "");
					for (i = cw->a; i < cw->b; i++)
						if (plan[i].kind == K_RNDV && !fin_cnt[i])
							printf("#   no FIN for message %u\n", i);
					exit(1);
				}
				usleep(100);
				continue;
			}
			last = now_ms();
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id >= nf) {
				bad("a receive (for FINs) completed: wr_id %llu status %s",
				    (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
				exit(1);
			}
			p = fins + wc.wr_id * 64;
			memcpy(&t, p, TMH);
			memcpy(&v, p + TMH, RVH);
			tag = be64toh(t.tag);
			i = (uint32_t)(tag & IDX_MASK);
			if (p[0] == BYE_OP && wc.byte_len == 32 && w == nwin) {
				bye = true;
			} else if (wc.opcode != IBV_WC_RECV || wc.byte_len != TMH + RVH ||
				   t.opcode != IBV_TMH_FIN) {
				bad("a message that is no FIN: opcode %d byte_len %u TMH op %u",
				    wc.opcode, wc.byte_len, t.opcode);
			} else if (i < cw->a || i >= cw->b || plan[i].tag != tag ||
				   plan[i].kind != K_RNDV) {
				bad("a FIN with tag %#llx: no rendezvous of window %u",
				    (unsigned long long)tag, w);
			} else {
				uint64_t va = (uintptr_t)slots + (uint64_t)(i - cw->a) * sslot_sz + RNDV_OFF;

				if (fin_cnt[i]++)
					bad("message %u: FIN number %u", i, fin_cnt[i]);
				else
					got++;
				fins_got++;
				if (be32toh(t.app_ctx) != plan[i].app_ctx ||
				    t.reserved[0] || t.reserved[1] || t.reserved[2] ||
				    be64toh(v.va) != va || be32toh(v.rkey) != mr->rkey ||
				    be32toh(v.len) != plan[i].size)
					bad("message %u: FIN carries app_ctx %#x va %#llx rkey %#x len %u, want %#x %#llx %#x %u",
					    i, be32toh(t.app_ctx),
					    (unsigned long long)be64toh(v.va),
					    be32toh(v.rkey), be32toh(v.len),
					    plan[i].app_ctx, (unsigned long long)va,
					    mr->rkey, plan[i].size);
				for (k = TMH + RVH; k < 64; k++)
					if (p[k] != SENTINEL) {
						bad("message %u: the FIN wrote beyond 32 bytes", i);
						break;
					}
			}
			memset(p, SENTINEL, 64);
			sge.addr = (uintptr_t)p;
			sge.length = 64;
			sge.lkey = mr->lkey;
			rw.wr_id = wc.wr_id;
			rw.sg_list = &sge;
			rw.num_sge = 1;
			if (ibv_post_recv(qp, &rw, &badw))
				die("ibv_post_recv");
		}
	}
	tell_peer(fd, TOK_BYE);
	tap(fins_got == rndv_total && !failures,
	    "every SEND completed; each rendezvous buffer got exactly one FIN",
	    "%u FINs for %u rendezvous messages", fins_got, rndv_total);
	printf("# tm_stress: sender: %u messages, %u rendezvous, %u FINs\n",
	       o->n, rndv_total, fins_got);
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(scq) || ibv_destroy_cq(rcq) ||
	    ibv_dereg_mr(mr) || ibv_dealloc_pd(pd))
		tap(false, "teardown", "errno %d", errno);
	ibv_close_device(ctx);
	close(fd);
	printf("# tm_stress: sender: %d failed\n", failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = "18700", .gidx = -1, .seed = 1, .n = 320,
			  .w = 16, .maxsz = 65536 };
	int c;

	e2e_name = side = "tm_stress";
	while ((c = getopt(argc, argv, "rcd:g:a:p:s:n:w:m:C")) != -1) {
		switch (c) {
		case 'r': case 'c': o.mode = (char)c; break;
		case 'd': o.dev = optarg; break;
		case 'g': o.gidx = atoi(optarg); break;
		case 'a': o.addr = optarg; break;
		case 'p': o.port = optarg; break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'n': o.n = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': o.w = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'm': o.maxsz = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'C': o.coverage = true; break;
		default: return 2;
		}
	}
	if (!o.mode || !o.dev || o.gidx < 0 || (o.mode == 'c' && !o.addr) ||
	    !o.n || o.n > IDX_MASK || !o.w || o.w > 128 ||
	    o.maxsz < ANON_MAX || o.maxsz > (1u << 24)) {
		fprintf(stderr,
			"usage: tm_stress -r -d DEV -g GIDX [-p PORT] [-s SEED] [-n MSGS] [-w WIN] [-m BYTES] [-C]\n"
			"       tm_stress -c -d DEV -g GIDX -a ADDR [-p PORT] [same -s -n -w -m]\n"
			"       (WIN 1..128, BYTES >= %u)\n", ANON_MAX);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a peer gone: a failed write, reported, not a silent SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	make_plan(&o);
	return o.mode == 'r' ? run_receiver(&o) : run_sender(&o);
}
