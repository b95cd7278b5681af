// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xrcshare: XRC between two namespaces, with the target side shared by two
 * processes (ibv_open_xrcd(3) on a file, ibv_create_srq_ex(3) with
 * IBV_SRQT_XRC, ibv_open_qp(3), XRC_SEND and XRC_RECV QPs).
 *
 *   xrcshare -t -d DEV -g GIDX -f FILE [-p PORT]    target side
 *   xrcshare -i -d DEV -g GIDX -a ADDR [-p PORT]    initiator side
 *   xrcshare -C -d DEV -f FILE                      holder: XRCD, XRC SRQ and
 *                                                   target QP; prints the QPN
 *   xrcshare -O -d DEV -f FILE -q QPN               holder: opens the XRCD and
 *                                                   that QP
 *
 * The target side is two processes.  The owner (a child, forked before
 * either opens the device) opens the XRCD through FILE with O_CREAT,
 * creates XRC SRQ S1 with its own PD and CQ and the target QP T0.  The
 * main process opens the same XRCD through FILE, opens T0 with
 * ibv_open_qp(), creates its own XRC SRQ S2 (and the target QPs T1-T3),
 * connects T0-T3 to the initiator's XRC_SEND QPs I0-I3 over a TCP socket
 * (QPNs, PSNs, GIDs, SRQ numbers, an R_Key) and checks:
 *   - O_CREAT|O_EXCL on the existing XRCD, an XRCD-less file without
 *     O_CREAT, ibv_open_qp of a QPN that does not exist or with the wrong
 *     type: refused; ibv_close_xrcd while an SRQ or a QP uses it: EBUSY;
 *   - phase 1, through T0: SENDs naming S1 and S2 interleaved, SEND with
 *     immediate, RDMA WRITE, WRITE with immediate, READ, fetch-and-add and
 *     compare-and-swap naming S2 (the R_Key is in S2's PD), and a SEND and
 *     a WRITE posted with ibv_wr_*() and ibv_wr_set_xrc_srqn(): every
 *     completion on the CQ of the SRQ named (status, opcode, length,
 *     immediate, qp_num = T0), every byte, the atomics' results;
 *   - the owner is killed with SIGKILL; T0 lives on (the main process holds
 *     it open) and phase 2 moves SENDs and a WRITE through it again;
 *   - a SEND naming an SRQ of another XRCD (I1), a basic SRQ (I2) or the
 *     dead owner's S1 (I3) completes in error on the initiator
 *     (XRC_BAD_SRQ_STATUS), and nothing lands in those SRQs' buffers;
 *   - teardown in the wrong order first (EBUSY), then in the right one;
 *     ibv_destroy_srq of a basic SRQ while an RC or a UD QP (created with
 *     huge max_recv_wr/max_recv_sge, ignored with an SRQ) uses it: EBUSY.
 * Each side prints TAP lines "ok - xrcshare: ..." / "not ok - ...".
 * Exit status 0 only when every case passed.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "e2e_lib.h"

#define NPAIR		4	/* T0/I0 traffic; T1-T3/I1-I3 refused SRQs */
#define SLOT		4096	/* receive buffer per WQE */
#define NSLOT		48
#define OWNER_MSGS	8	/* SENDs naming S1 */
#define S2_MSGS		8	/* plain SENDs naming S2 in phase 1 */
#define P2_MSGS		4	/* SENDs naming S2 after the owner died */
#define WAIT_MS		120000	/* any single wait; TCG is slow */

/* The RDMA area of the main process (PD of S2) */
#define RDMA_LEN	65536
#define OFF_WRITE	0
#define LEN_WRITE	10000	/* ten packets at MTU 1024 */
#define OFF_WIMM	10240
#define LEN_WIMM	2000
#define OFF_READ	16384
#define LEN_READ	9000
#define OFF_FADD	32768
#define OFF_CSWP	32776
#define OFF_EXTW	36864
#define LEN_EXTW	3000
#define OFF_P2W		40960
#define LEN_P2W		5000
#define FADD_START	100ULL
#define FADD_ADD	5ULL
#define CSWP_START	7ULL
#define CSWP_SWAP	0xabcULL
#define IMM_SEND	0xfeed0001u
#define IMM_WRITE	0xfeed0002u
#define SENTINEL	0xee

/* message ids (the first four bytes of each SEND) */
#define M_OWNER		0	/* .. OWNER_MSGS - 1 */
#define M_S2		100	/* .. + S2_MSGS - 1 */
#define M_IMM		200
#define M_EXT		201
#define M_P2		300	/* .. + P2_MSGS - 1 */
#define M_BAD		400	/* + pair */
#define SEEN_WIMM	999	/* seen[]: the WRITE with immediate */
#define NOSUCH_SRQN	0xfffff0	/* no SRQ has this number */
/*
 * What a request naming an SRQ outside the target's XRC domain completes
 * with at the initiator: shca NAKs it as a remote access error (the R_Key
 * PD comes from the named SRQ; rc_resp.c).
 */
#define XRC_BAD_SRQ_STATUS	IBV_WC_REM_ACCESS_ERR

/* tokens on the TCP socket */
#define TOK_READY	0x70680000u
#define TOK_PH1_DONE	0x70680001u
#define TOK_PH2		0x70680002u
#define TOK_PH2_DONE	0x70680003u
#define TOK_BYE		0x70680004u


static uint8_t pat(unsigned int tag, size_t i)
{
	return (uint8_t)(tag * 37 + i * 13 + (i >> 8) * 7 + 1);
}

static void fill(uint8_t *p, size_t len, unsigned int tag)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(tag, i);
}

/* Offset of the first byte of @p that is not pat(@tag), or @len. */
static size_t check_fill(const uint8_t *p, size_t len, unsigned int tag)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(tag, i))
			return i;
	return len;
}

static size_t msg_len(unsigned int m)
{
	return 16 + (m * 997u) % 4000u;	/* 16..4015: one to four packets */
}

/* A SEND's bytes: its id, then pat(id). */
static void fill_msg(uint8_t *p, unsigned int m)
{
	fill(p, msg_len(m), m);
	memcpy(p, &m, 4);
}

/* The id of the message in @p if it is intact and @len long, else -1. */
static int check_msg(const uint8_t *p, uint32_t len)
{
	unsigned int m;
	size_t i;

	if (len < 4)
		return -1;
	memcpy(&m, p, 4);
	if (m >= SEEN_WIMM || len != msg_len(m))
		return -1;
	for (i = 4; i < len; i++)
		if (p[i] != pat(m, i))
			return -1;
	return (int)m;
}

/* Poll @cq for one completion within WAIT_MS; 1 if one came. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long long end = now_ms() + WAIT_MS;

	while (now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n)
			return 1;
		usleep(200);
	}
	return 0;
}

/* The peer's next token, which must be @want; die() if not. */
static void expect_tok(int fd, uint32_t want)
{
	if (read_tok(fd, "read token") != want) {
		errno = EPROTO;
		die("unexpected token");
	}
}

/* ---------------------------------------------------------------- */

struct opts {
	char mode;
	const char *dev;
	const char *file;
	const char *addr;
	const char *port;
	int gidx;
	uint32_t qpn;
};

/* What the target side tells the initiator. */
struct tinfo {
	uint8_t gid[16];
	uint32_t qpn[NPAIR];
	uint32_t psn[NPAIR];
	uint32_t srqn_owner;		/* S1, the owner's */
	uint32_t srqn_main;		/* S2 */
	uint32_t srqn_other_xrcd;	/* S3: in another XRCD */
	uint32_t srqn_basic;		/* S4: a basic SRQ */
	uint64_t va;
	uint32_t rkey;
	uint32_t pad;
};

/* What the initiator tells the target side. */
struct iinfo {
	uint8_t gid[16];
	uint32_t qpn[NPAIR];
	uint32_t psn[NPAIR];
};

static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct ibv_context *ctx, struct ibv_xrcd *x,
			       struct ibv_pd *pd, struct ibv_cq *cq,
			       uint32_t max_wr, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq *srq;

	xrc_srq_attr(&a, x, pd, cq, max_wr);
	srq = ibv_create_srq_ex(ctx, &a);
	if (!srq)
		die("ibv_create_srq_ex(IBV_SRQT_XRC)");
	if (a.attr.max_wr < max_wr)
		tap(false, "create_srq_ex writes back max_wr", "%u < %u",
		    a.attr.max_wr, max_wr);
	if (ibv_get_srq_num(srq, srqn))
		die("ibv_get_srq_num");
	return srq;
}

/* Post @n receives of SLOT bytes from @buf (slot i gets wr_id i). */
static void post_slots(struct ibv_srq *srq, struct ibv_mr *mr, uint8_t *buf,
		       unsigned int first, unsigned int n)
{
	unsigned int i;

	for (i = first; i < first + n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + (size_t)i * SLOT,
			.length = SLOT, .lkey = mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			die("ibv_post_srq_recv");
	}
}

static struct ibv_qp *tgt_qp(struct ibv_context *ctx, struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

	if (!qp)
		die("ibv_create_qp_ex(IBV_QPT_XRC_RECV)");
	if (qp_init(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC))
		die("modify XRC_RECV QP to INIT");
	return qp;
}

/* RTR then RTS (an XRC_RECV QP's RTS takes the timeout and PSN only). */
static int connect_qp(struct ibv_qp *qp, const uint8_t *dgid, int gidx,
		      uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_ah_attr ah;

	gid_ah(&ah, dgid, gidx, 64);
	if (qp_rtr(qp, &ah, dqpn, rq_psn, 4, 12) ||
	    qp_rts(qp, sq_psn, 14, 7, 7, 4))
		return -1;
	return 0;
}

static uint32_t rand_psn(void)
{
	return (uint32_t)lrand48() & 0xffffff;
}

/* ================================================================ */
/* target side: the owner process                                   */
/* ================================================================ */

struct owner_info {
	uint32_t qpn;
	uint32_t srqn;
};

/*
 * The owner: XRCD through @file with O_CREAT, XRC SRQ S1 with OWNER_MSGS
 * receives, target QP T0 in INIT.  Reports QPN and SRQN on @to, then waits
 * for a byte on @from, checks OWNER_MSGS completions on its CQ and writes
 * its verdict (a line) on @to; then waits to be killed.
 */
static void owner(const struct opts *o, int from, int to)
{
	struct ibv_context *ctx = open_dev_or_die(o->dev);
	struct owner_info info;
	struct ibv_xrcd *x;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	char verdict[256] = "1 all checked";
	bool seen[OWNER_MSGS] = { false };
	uint8_t *buf;
	char c;
	int fd, i;

	side = "owner";
	/* never outlive the main process, whatever happens to it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		exit(1);
	fd = open(o->file, O_RDONLY | O_CREAT, 0600);
	if (fd < 0)
		die("open FILE");
	x = open_xrcd(ctx, fd, O_CREAT);
	if (!x)
		die("ibv_open_xrcd(O_CREAT)");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, (size_t)OWNER_MSGS * SLOT);
	if (!pd || !cq || !buf)
		die("PD, CQ or buffer");
	memset(buf, 0, (size_t)OWNER_MSGS * SLOT);
	mr = ibv_reg_mr(pd, buf, (size_t)OWNER_MSGS * SLOT,
			IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	srq = xrc_srq(ctx, x, pd, cq, OWNER_MSGS, &info.srqn);
	post_slots(srq, mr, buf, 0, OWNER_MSGS);
	qp = tgt_qp(ctx, x);
	info.qpn = qp->qp_num;
	if (write_all(to, &info, sizeof(info)))
		die("report to the main process");

	if (read_all(from, &c, 1))
		exit(1);
	for (i = 0; i < OWNER_MSGS; i++) {
		struct ibv_wc wc;
		int m;

		if (poll_one(cq, &wc) != 1) {
			snprintf(verdict, sizeof(verdict),
				 "0 completion %d of %d never came", i,
				 OWNER_MSGS);
			break;
		}
		m = wc.status == IBV_WC_SUCCESS && wc.wr_id < OWNER_MSGS ?
		    check_msg(buf + wc.wr_id * SLOT, wc.byte_len) : -1;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.qp_num != info.qpn || wc.wc_flags & IBV_WC_WITH_IMM ||
		    m < M_OWNER || m >= M_OWNER + OWNER_MSGS ||
		    seen[m - M_OWNER]) {
			snprintf(verdict, sizeof(verdict),
				 "0 bad completion: status %s opcode %d qp %u (T0 %u) len %u wr_id %llu msg %d",
				 ibv_wc_status_str(wc.status), wc.opcode,
				 wc.qp_num, info.qpn, wc.byte_len,
				 (unsigned long long)wc.wr_id, m);
			break;
		}
		seen[m - M_OWNER] = true;
		/* in posting order: slot i holds the i-th message to arrive */
		if (wc.wr_id != (uint64_t)i || m != M_OWNER + i) {
			snprintf(verdict, sizeof(verdict),
				 "0 completion %d consumed WQE %llu with message %d",
				 i, (unsigned long long)wc.wr_id, m);
			break;
		}
	}
	if (write_all(to, verdict, sizeof(verdict)))
		exit(1);
	for (;;)
		pause();	/* until SIGKILL */
}

/* ================================================================ */
/* target side: the main process                                    */
/* ================================================================ */

struct target {
	struct ibv_context *ctx;
	struct ibv_xrcd *x, *x2;
	struct ibv_pd *pd;
	struct ibv_cq *cq2, *cq3;
	struct ibv_srq *s2, *s3, *s4;
	struct ibv_mr *rmr, *smr, *rdma;
	uint8_t *rbuf, *sbuf, *area;
	struct ibv_qp *t[NPAIR];
	unsigned int slots_posted;
	struct tinfo ti;
};

/* ibv_open_qp(@oa) must fail: case @name. */
static void open_qp_refused(struct target *tg, struct ibv_qp_open_attr *oa,
			    const char *name)
{
	struct ibv_qp *qp = ibv_open_qp(tg->ctx, oa);

	tap(!qp, name, "opened QP %u", qp ? qp->qp_num : 0);
	if (qp)
		ibv_destroy_qp(qp);
}

static void target_checks_open(const struct opts *o, struct target *tg,
			       uint32_t owner_qpn)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.xrcd = tg->x,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrcd *x;
	char path[4096];
	int fd;

	fd = open(o->file, O_RDONLY);
	x = fd < 0 ? NULL : open_xrcd(tg->ctx, fd, O_CREAT | O_EXCL);
	tap(!x, "O_CREAT|O_EXCL on a file with an XRCD refused",
	    "ibv_open_xrcd succeeded");
	if (x)
		ibv_close_xrcd(x);
	if (fd >= 0)
		close(fd);

	snprintf(path, sizeof(path), "%s.none", o->file);
	fd = open(path, O_RDONLY | O_CREAT, 0600);
	x = fd < 0 ? NULL : open_xrcd(tg->ctx, fd, 0);
	tap(fd >= 0 && !x, "no O_CREAT on a file without an XRCD refused",
	    "fd %d, ibv_open_xrcd %s", fd, x ? "succeeded" : "failed");
	if (x)
		ibv_close_xrcd(x);
	if (fd >= 0)
		close(fd);
	unlink(path);

	oa.qp_num = 0xfffffe;
	open_qp_refused(tg, &oa, "ibv_open_qp of a QPN that does not exist refused");
	oa.qp_num = owner_qpn;
	oa.qp_type = IBV_QPT_RC;
	open_qp_refused(tg, &oa, "ibv_open_qp of the target QP as RC refused");
	oa.qp_type = IBV_QPT_XRC_RECV;
	tg->t[0] = ibv_open_qp(tg->ctx, &oa);
	tap(tg->t[0] && tg->t[0]->qp_num == owner_qpn &&
	    tg->t[0]->qp_type == IBV_QPT_XRC_RECV,
	    "ibv_open_qp of the owner's target QP", "errno %d, qp_num %u",
	    errno, tg->t[0] ? tg->t[0]->qp_num : 0);
	if (!tg->t[0])
		die("ibv_open_qp");
}

static void target_setup(const struct opts *o, struct target *tg,
			 const struct owner_info *oi)
{
	union ibv_gid gid;
	int fd, i, ret;

	tg->ctx = open_dev_or_die(o->dev);
	if (ibv_query_gid(tg->ctx, 1, o->gidx, &gid))
		die("ibv_query_gid");
	fd = open(o->file, O_RDONLY);
	if (fd < 0)
		die("open FILE");
	/* no O_CREAT: the owner's XRCD must be found */
	tg->x = open_xrcd(tg->ctx, fd, 0);
	tap(tg->x != NULL, "ibv_open_xrcd of the owner's XRCD through its file",
	    "errno %d", errno);
	if (!tg->x)
		die("ibv_open_xrcd");
	close(fd);
	target_checks_open(o, tg, oi->qpn);

	tg->pd = ibv_alloc_pd(tg->ctx);
	tg->cq2 = ibv_create_cq(tg->ctx, 128, NULL, NULL, 0);
	tg->cq3 = ibv_create_cq(tg->ctx, 16, NULL, NULL, 0);
	tg->rbuf = aligned_alloc(4096, (size_t)NSLOT * SLOT);
	tg->sbuf = aligned_alloc(4096, 2 * SLOT);
	tg->area = aligned_alloc(4096, RDMA_LEN);
	if (!tg->pd || !tg->cq2 || !tg->cq3 || !tg->rbuf || !tg->sbuf ||
	    !tg->area)
		die("PD, CQs or buffers");
	memset(tg->rbuf, 0, (size_t)NSLOT * SLOT);
	memset(tg->sbuf, SENTINEL, 2 * SLOT);
	memset(tg->area, 0, RDMA_LEN);
	fill(tg->area + OFF_READ, LEN_READ, 'R');
	*(uint64_t *)(tg->area + OFF_FADD) = FADD_START;
	*(uint64_t *)(tg->area + OFF_CSWP) = CSWP_START;
	tg->rmr = ibv_reg_mr(tg->pd, tg->rbuf, (size_t)NSLOT * SLOT,
			     IBV_ACCESS_LOCAL_WRITE);
	tg->smr = ibv_reg_mr(tg->pd, tg->sbuf, 2 * SLOT,
			     IBV_ACCESS_LOCAL_WRITE);
	tg->rdma = ibv_reg_mr(tg->pd, tg->area, RDMA_LEN,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC);
	if (!tg->rmr || !tg->smr || !tg->rdma)
		die("ibv_reg_mr");

	tg->s2 = xrc_srq(tg->ctx, tg->x, tg->pd, tg->cq2, NSLOT,
			 &tg->ti.srqn_main);
	post_slots(tg->s2, tg->rmr, tg->rbuf, 0, NSLOT);
	tg->slots_posted = NSLOT;

	ret = ibv_close_xrcd(tg->x);
	tap(ret == EBUSY, "ibv_close_xrcd with an SRQ and an opened QP: EBUSY",
	    "returned %d", ret);

	/* another XRCD (no file), its SRQ S3, and a basic SRQ S4 */
	tg->x2 = open_xrcd(tg->ctx, -1, O_CREAT);
	if (!tg->x2)
		die("ibv_open_xrcd(fd -1)");
	tg->s3 = xrc_srq(tg->ctx, tg->x2, tg->pd, tg->cq3, 4,
			 &tg->ti.srqn_other_xrcd);
	post_slots(tg->s3, tg->smr, tg->sbuf, 0, 1);
	{
		struct ibv_srq_init_attr_ex a = {
			.attr = { .max_wr = 4, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
				     IBV_SRQ_INIT_ATTR_PD,
			.srq_type = IBV_SRQT_BASIC,
			.pd = tg->pd,
		};

		tg->s4 = ibv_create_srq_ex(tg->ctx, &a);
		if (!tg->s4)
			die("basic SRQ");
		/*
		 * ibv_get_srq_num() need not work on a basic SRQ: then name
		 * a number that no SRQ has instead.
		 */
		if (ibv_get_srq_num(tg->s4, &tg->ti.srqn_basic)) {
			printf("# target: ibv_get_srq_num() of a basic SRQ fails: I2 names SRQ %#x, which does not exist\n",
			       NOSUCH_SRQN);
			tg->ti.srqn_basic = NOSUCH_SRQN;
		}
		post_slots(tg->s4, tg->smr, tg->sbuf, 1, 1);
	}
	for (i = 1; i < NPAIR; i++)
		tg->t[i] = tgt_qp(tg->ctx, tg->x);

	memcpy(tg->ti.gid, gid.raw, 16);
	for (i = 0; i < NPAIR; i++) {
		tg->ti.qpn[i] = tg->t[i]->qp_num;
		tg->ti.psn[i] = rand_psn();
	}
	tg->ti.srqn_owner = oi->srqn;
	tg->ti.va = (uintptr_t)tg->area;
	tg->ti.rkey = tg->rdma->rkey;
}

/*
 * Reap @n completions from the main process's CQ and check each against
 * what the initiator sent: SENDs by id, the immediates, the WRITE with
 * immediate; *@got counts them.
 */
static void reap_main(struct target *tg, int n, const char *what,
		      bool *seen, int *got)
{
	char why[256] = "";
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_wc wc;
		int m = -1;

		if (poll_one(tg->cq2, &wc) != 1) {
			snprintf(why, sizeof(why), "completion %d of %d never came",
				 i, n);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.qp_num != tg->t[0]->qp_num ||
		    wc.wr_id >= NSLOT) {
			snprintf(why, sizeof(why),
				 "status %s qp %u (T0 %u) wr_id %llu",
				 ibv_wc_status_str(wc.status), wc.qp_num,
				 tg->t[0]->qp_num, (unsigned long long)wc.wr_id);
			break;
		}
		if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			if (!(wc.wc_flags & IBV_WC_WITH_IMM) ||
			    be32toh(wc.imm_data) != IMM_WRITE ||
			    wc.byte_len != LEN_WIMM || seen[SEEN_WIMM]) {
				snprintf(why, sizeof(why),
					 "WRITE with immediate: flags %#x imm %#x len %u",
					 wc.wc_flags, be32toh(wc.imm_data),
					 wc.byte_len);
				break;
			}
			seen[SEEN_WIMM] = true;
			(*got)++;
			continue;
		}
		if (wc.opcode == IBV_WC_RECV)
			m = check_msg(tg->rbuf + wc.wr_id * SLOT, wc.byte_len);
		if (m < 0 || seen[m]) {
			snprintf(why, sizeof(why),
				 "opcode %d len %u slot %llu: message %d corrupt or repeated",
				 wc.opcode, wc.byte_len,
				 (unsigned long long)wc.wr_id, m);
			break;
		}
		if ((m == M_IMM) != !!(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    (m == M_IMM && be32toh(wc.imm_data) != IMM_SEND)) {
			snprintf(why, sizeof(why),
				 "message %d: flags %#x imm %#x", m,
				 wc.wc_flags, be32toh(wc.imm_data));
			break;
		}
		seen[m] = true;
		(*got)++;
	}
	tap(!why[0], what, "%s", why);
}

static void check_area(struct target *tg, size_t off, size_t len,
		       unsigned int tag, const char *what)
{
	size_t d = check_fill(tg->area + off, len, tag);

	tap(d == len, what, "first wrong byte at %zu of %zu", d, len);
}

/*
 * A QP of @type on the basic SRQ: destroying the SRQ must fail with EBUSY
 * while it exists, and the SRQ must still be whole (it is destroyed last).
 */
static void busy_srq(struct target *tg, enum ibv_qp_type type,
		     const char *what)
{
	struct ibv_qp_init_attr a = {
		.send_cq = tg->cq3, .recv_cq = tg->cq3, .srq = tg->s4,
		.cap = { .max_send_wr = 1, .max_send_sge = 1,
			 /* ignored with an SRQ */
			 .max_recv_wr = 1u << 30, .max_recv_sge = 1u << 20 },
		.qp_type = type,
	};
	struct ibv_qp *qp;
	int ret;

	if (!tg->s4)
		return;
	qp = ibv_create_qp(tg->pd, &a);
	if (!qp) {
		tap(false, what, "ibv_create_qp with the SRQ (huge max_recv_*): errno %d",
		    errno);
		return;
	}
	ret = ibv_destroy_srq(tg->s4);
	tap(ret == EBUSY, what, "returned %d", ret);
	if (!ret)
		tg->s4 = NULL;	/* destroyed under a QP: the bug is reported */
	if (ibv_destroy_qp(qp))
		tap(false, what, "ibv_destroy_qp: errno %d", errno);
}

static int run_target(const struct opts *o)
{
	int to_owner[2], from_owner[2], lfd, fd, ret, status, i, got;
	struct owner_info oi;
	struct target tg = {};
	struct iinfo ii;
	bool seen[SEEN_WIMM + 1] = { false };
	char verdict[256];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_wc wc;
	pid_t pid;

	side = "target";
	if (pipe(to_owner) || pipe(from_owner))
		die("pipe");
	/* fork before this process touches the device */
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(to_owner[1]);
		close(from_owner[0]);
		owner(o, to_owner[0], from_owner[1]);
		exit(1);
	}
	close(to_owner[0]);
	close(from_owner[1]);
	if (read_all(from_owner[0], &oi, sizeof(oi)))
		die("the owner's report");
	pass("owner: XRCD through the file, XRC SRQ and target QP created");

	target_setup(o, &tg, &oi);
	lfd = tcp_listen(o->port);
	printf("# target: listening on %s: T0 %u (owner's), S1 %u, S2 %u, S3 %u (other XRCD), S4 %u (basic)\n",
	       o->port, tg.ti.qpn[0], tg.ti.srqn_owner, tg.ti.srqn_main,
	       tg.ti.srqn_other_xrcd, tg.ti.srqn_basic);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);
	set_timeouts(fd, 600);
	if (write_all(fd, &tg.ti, sizeof(tg.ti)) || read_all(fd, &ii, sizeof(ii)))
		die("exchange");
	for (i = 0; i < NPAIR; i++) {
		/* T0 through the opened handle: the owner only made it INIT */
		ret = connect_qp(tg.t[i], ii.gid, o->gidx, ii.qpn[i],
				 ii.psn[i], tg.ti.psn[i]);
		if (ret)
			die("connect a target QP");
	}
	pass("the opened target QP taken to RTR and RTS");
	send_tok(fd, TOK_READY, "send token");

	/* phase 1 */
	expect_tok(fd, TOK_PH1_DONE);
	if (write_all(to_owner[1], "c", 1) ||
	    read_all(from_owner[0], verdict, sizeof(verdict)))
		die("the owner's verdict");
	verdict[sizeof(verdict) - 1] = 0;
	tap(verdict[0] == '1',
	    "owner: the SENDs naming S1 arrived on S1's CQ, in order, byte for byte",
	    "%s", verdict + 2);
	got = 0;
	reap_main(&tg, S2_MSGS + 3, "SENDs, SEND with immediate, WRITE with immediate and an ibv_wr_send() naming S2 on S2's CQ",
		  seen, &got);
	for (i = 0; i < S2_MSGS; i++)
		if (!seen[M_S2 + i])
			break;
	tap(got == S2_MSGS + 3 && i == S2_MSGS && seen[M_IMM] && seen[M_EXT] &&
	    seen[SEEN_WIMM], "every message naming S2 delivered once",
	    "got %d, S2 messages %d of %d, imm %d ext %d write-imm %d", got, i,
	    S2_MSGS, seen[M_IMM], seen[M_EXT], seen[SEEN_WIMM]);
	check_area(&tg, OFF_WRITE, LEN_WRITE, 'W', "RDMA WRITE naming S2 landed byte for byte");
	check_area(&tg, OFF_WIMM, LEN_WIMM, 'I', "RDMA WRITE with immediate landed byte for byte");
	check_area(&tg, OFF_EXTW, LEN_EXTW, 'E', "ibv_wr_rdma_write() with ibv_wr_set_xrc_srqn() landed");
	tap(*(uint64_t *)(tg.area + OFF_FADD) == FADD_START + FADD_ADD,
	    "fetch-and-add naming S2 added", "value %llu",
	    (unsigned long long)*(uint64_t *)(tg.area + OFF_FADD));
	tap(*(uint64_t *)(tg.area + OFF_CSWP) == CSWP_SWAP,
	    "compare-and-swap naming S2 swapped", "value %#llx",
	    (unsigned long long)*(uint64_t *)(tg.area + OFF_CSWP));
	tap(ibv_poll_cq(tg.cq2, 1, &wc) == 0,
	    "no completion for the RDMA WRITE, READ or atomics", "one more");

	/* kill -9 of the owner, which created T0 and S1 */
	kill(pid, SIGKILL);
	ret = waitpid(pid, &status, 0);
	tap(ret == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	    "owner killed with SIGKILL", "waitpid %d status %#x", ret, status);
	memset(&qa, 0, sizeof(qa));
	ret = ibv_query_qp(tg.t[0], &qa, IBV_QP_STATE, &qia);
	tap(!ret && qa.qp_state == IBV_QPS_RTS,
	    "the target QP outlives its creator (RTS through the opened handle)",
	    "query %d state %d", ret, qa.qp_state);
	send_tok(fd, TOK_PH2, "send token");

	/* phase 2 */
	expect_tok(fd, TOK_PH2_DONE);
	got = 0;
	reap_main(&tg, P2_MSGS, "after the owner died: SENDs naming S2 through its target QP",
		  seen, &got);
	for (i = 0; i < P2_MSGS; i++)
		if (!seen[M_P2 + i])
			break;
	tap(got == P2_MSGS && i == P2_MSGS, "after the owner died: every SEND delivered once",
	    "got %d, %d of %d", got, i, P2_MSGS);
	check_area(&tg, OFF_P2W, LEN_P2W, 'P', "after the owner died: RDMA WRITE landed byte for byte");
	tap(ibv_poll_cq(tg.cq3, 1, &wc) == 0,
	    "nothing completed on the other XRCD's SRQ", "a completion, status %s",
	    ibv_wc_status_str(wc.status));
	for (i = 0; i < 2 * SLOT; i++)
		if (tg.sbuf[i] != SENTINEL)
			break;
	tap(i == 2 * SLOT,
	    "nothing landed in the buffers of the other XRCD's SRQ or the basic SRQ",
	    "byte %d changed to %#x", i, i < 2 * SLOT ? tg.sbuf[i] : 0);
	tap(ibv_poll_cq(tg.cq2, 1, &wc) == 0,
	    "no stray completion on S2's CQ", "status %s len %u",
	    ibv_wc_status_str(wc.status), wc.byte_len);

	/* teardown, the wrong order first */
	for (i = 1; i < NPAIR; i++)
		if (ibv_destroy_qp(tg.t[i]))
			tap(false, "destroy a target QP", "T%d", i);
	ret = ibv_destroy_srq(tg.s2);
	tap(!ret, "destroy the XRC SRQ", "returned %d", ret);
	ret = ibv_close_xrcd(tg.x);
	tap(ret == EBUSY, "ibv_close_xrcd with an opened QP still in it: EBUSY",
	    "returned %d", ret);
	ret = ibv_destroy_qp(tg.t[0]);
	tap(!ret, "ibv_destroy_qp of the opened QP (its last handle)",
	    "returned %d", ret);
	ret = ibv_close_xrcd(tg.x);
	tap(!ret, "ibv_close_xrcd once nothing uses it", "returned %d", ret);
	ret = ibv_close_xrcd(tg.x2);
	tap(ret == EBUSY, "ibv_close_xrcd of the other XRCD with its SRQ: EBUSY",
	    "returned %d", ret);
	busy_srq(&tg, IBV_QPT_RC, "ibv_destroy_srq while an RC QP uses it: EBUSY");
	busy_srq(&tg, IBV_QPT_UD, "ibv_destroy_srq while a UD QP uses it: EBUSY");
	if (ibv_destroy_srq(tg.s3) || (tg.s4 && ibv_destroy_srq(tg.s4)) ||
	    ibv_close_xrcd(tg.x2))
		tap(false, "tear down the other XRCD and the basic SRQ", "errno %d",
		    errno);
	send_tok(fd, TOK_BYE, "send token");
	ibv_dereg_mr(tg.rmr);
	ibv_dereg_mr(tg.smr);
	ibv_dereg_mr(tg.rdma);
	ibv_destroy_cq(tg.cq2);
	ibv_destroy_cq(tg.cq3);
	ibv_dealloc_pd(tg.pd);
	ibv_close_device(tg.ctx);
	close(fd);
	printf("# target: %d failed\n", failures);
	return failures ? 1 : 0;
}

/* ================================================================ */
/* initiator side                                                   */
/* ================================================================ */

struct init {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[NPAIR];
	struct ibv_qp *qp[NPAIR];
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	uint8_t *buf;		/* SEND sources, WRITE sources, READ sink */
	struct tinfo ti;
};

#define IB_SEND(m)	((size_t)(m) * SLOT)	/* SEND source of id m */
#define IB_WRITE	((size_t)1000 * SLOT)
#define IB_READ		(IB_WRITE + 16384)
#define IB_ATOM		(IB_READ + 16384)
#define IB_LEN		(IB_ATOM + 4096)

static struct ibv_qp *ini_qp(struct init *in, int i, bool ext)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = in->cq[i],
		.cap = { .max_send_wr = 64, .max_send_sge = 1 },
		.sq_sig_all = 1,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = in->pd,
	};
	struct ibv_qp *qp;

	if (ext) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND |
				   IBV_QP_EX_WITH_RDMA_WRITE;
	}
	qp = ibv_create_qp_ex(in->ctx, &a);
	if (!qp)
		die("ibv_create_qp_ex(IBV_QPT_XRC_SEND)");
	if (qp_init(qp, 0))
		die("modify XRC_SEND QP to INIT");
	return qp;
}

static void post(struct init *in, int q, uint64_t wr_id,
		 enum ibv_wr_opcode op, size_t off, uint32_t len,
		 uint32_t srqn, uint64_t raddr, uint64_t cmp_add, uint64_t swap,
		 uint32_t imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)in->buf + off,
			       .length = len, .lkey = in->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = op }, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	wr.imm_data = htobe32(imm);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = in->ti.rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = in->ti.rkey;
	}
	if (ibv_post_send(in->qp[q], &wr, &bad))
		die("ibv_post_send");
}

static void post_msg(struct init *in, int q, unsigned int m, uint32_t srqn)
{
	post(in, q, m, m == M_IMM ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
	     IB_SEND(m), (uint32_t)msg_len(m), srqn, 0, 0, 0, IMM_SEND);
}

/* Reap @n send completions on QP @q; all must succeed. */
static void reap_sends(struct init *in, int q, int n, const char *what)
{
	char why[256] = "";
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_wc wc;

		if (poll_one(in->cq[q], &wc) != 1) {
			snprintf(why, sizeof(why), "completion %d of %d never came",
				 i, n);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			snprintf(why, sizeof(why), "wr_id %llu: status %s (%d)",
				 (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status), wc.status);
			break;
		}
	}
	tap(!why[0], what, "%s", why);
}

static int run_initiator(const struct opts *o)
{
	struct init in = {};
	struct iinfo ii;
	union ibv_gid gid;
	int fd, i;
	uint32_t tok;
	size_t d;

	side = "initiator";
	in.ctx = open_dev_or_die(o->dev);
	if (ibv_query_gid(in.ctx, 1, o->gidx, &gid))
		die("ibv_query_gid");
	in.pd = ibv_alloc_pd(in.ctx);
	in.buf = aligned_alloc(4096, IB_LEN);
	if (!in.pd || !in.buf)
		die("PD or buffer");
	memset(in.buf, 0, IB_LEN);
	for (i = 0; i < 1000; i++)
		if (i < M_OWNER + OWNER_MSGS || (i >= M_S2 && i < M_S2 + S2_MSGS) ||
		    i == M_IMM || i == M_EXT || (i >= M_P2 && i < M_P2 + P2_MSGS) ||
		    (i >= M_BAD && i < M_BAD + NPAIR))
			fill_msg(in.buf + IB_SEND(i), (unsigned int)i);
	in.mr = ibv_reg_mr(in.pd, in.buf, IB_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!in.mr)
		die("ibv_reg_mr");
	for (i = 0; i < NPAIR; i++) {
		in.cq[i] = ibv_create_cq(in.ctx, 128, NULL, NULL, 0);
		if (!in.cq[i])
			die("ibv_create_cq");
		in.qp[i] = ini_qp(&in, i, i == 0);
		ii.qpn[i] = in.qp[i]->qp_num;
		ii.psn[i] = rand_psn();
	}
	in.qpx = ibv_qp_to_qp_ex(in.qp[0]);
	memcpy(ii.gid, gid.raw, 16);
	pass("XRC_SEND QPs created (one with send_ops_flags)");

	fd = tcp_connect(o->addr, o->port, "connect to the target side", 600);
	if (read_all(fd, &in.ti, sizeof(in.ti)) || write_all(fd, &ii, sizeof(ii)))
		die("exchange");
	for (i = 0; i < NPAIR; i++)
		if (connect_qp(in.qp[i], in.ti.gid, o->gidx, in.ti.qpn[i],
			       in.ti.psn[i], ii.psn[i]))
			die("connect an XRC_SEND QP");
	expect_tok(fd, TOK_READY);

	/* phase 1: everything through T0 */
	for (i = 0; i < OWNER_MSGS || i < S2_MSGS; i++) {
		if (i < OWNER_MSGS)
			post_msg(&in, 0, M_OWNER + i, in.ti.srqn_owner);
		if (i < S2_MSGS)
			post_msg(&in, 0, M_S2 + i, in.ti.srqn_main);
	}
	post_msg(&in, 0, M_IMM, in.ti.srqn_main);
	fill(in.buf + IB_WRITE, LEN_WRITE, 'W');
	post(&in, 0, 1001, IBV_WR_RDMA_WRITE, IB_WRITE, LEN_WRITE,
	     in.ti.srqn_main, in.ti.va + OFF_WRITE, 0, 0, 0);
	reap_sends(&in, 0, OWNER_MSGS + S2_MSGS + 2,
		   "SENDs naming S1 and S2, SEND with immediate, RDMA WRITE");
	fill(in.buf + IB_WRITE, LEN_WIMM, 'I');
	post(&in, 0, 1002, IBV_WR_RDMA_WRITE_WITH_IMM, IB_WRITE, LEN_WIMM,
	     in.ti.srqn_main, in.ti.va + OFF_WIMM, 0, 0, IMM_WRITE);
	post(&in, 0, 1003, IBV_WR_RDMA_READ, IB_READ, LEN_READ,
	     in.ti.srqn_main, in.ti.va + OFF_READ, 0, 0, 0);
	post(&in, 0, 1004, IBV_WR_ATOMIC_FETCH_AND_ADD, IB_ATOM, 8,
	     in.ti.srqn_main, in.ti.va + OFF_FADD, FADD_ADD, 0, 0);
	post(&in, 0, 1005, IBV_WR_ATOMIC_CMP_AND_SWP, IB_ATOM + 8, 8,
	     in.ti.srqn_main, in.ti.va + OFF_CSWP, CSWP_START, CSWP_SWAP, 0);
	reap_sends(&in, 0, 4, "WRITE with immediate, READ and atomics naming S2");
	d = check_fill(in.buf + IB_READ, LEN_READ, 'R');
	tap(d == LEN_READ, "RDMA READ naming S2 returned the bytes",
	    "first wrong byte at %zu", d);
	tap(*(uint64_t *)(in.buf + IB_ATOM) == FADD_START,
	    "fetch-and-add returned the old value", "%llu",
	    (unsigned long long)*(uint64_t *)(in.buf + IB_ATOM));
	tap(*(uint64_t *)(in.buf + IB_ATOM + 8) == CSWP_START,
	    "compare-and-swap returned the old value", "%llu",
	    (unsigned long long)*(uint64_t *)(in.buf + IB_ATOM + 8));

	/* the same QP through ibv_wr_*() */
	fill(in.buf + IB_WRITE + 8192, LEN_EXTW, 'E');
	ibv_wr_start(in.qpx);
	in.qpx->wr_id = M_EXT;
	in.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(in.qpx);
	ibv_wr_set_xrc_srqn(in.qpx, in.ti.srqn_main);
	ibv_wr_set_sge(in.qpx, in.mr->lkey, (uintptr_t)in.buf + IB_SEND(M_EXT),
		       (uint32_t)msg_len(M_EXT));
	in.qpx->wr_id = 1006;
	in.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(in.qpx, in.ti.rkey, in.ti.va + OFF_EXTW);
	ibv_wr_set_xrc_srqn(in.qpx, in.ti.srqn_main);
	ibv_wr_set_sge(in.qpx, in.mr->lkey, (uintptr_t)in.buf + IB_WRITE + 8192,
		       LEN_EXTW);
	i = ibv_wr_complete(in.qpx);
	tap(!i, "ibv_wr_send() and ibv_wr_rdma_write() with ibv_wr_set_xrc_srqn() posted",
	    "ibv_wr_complete: %d", i);
	if (!i)
		reap_sends(&in, 0, 2, "ibv_wr_*() SEND and WRITE naming S2 completed");
	send_tok(fd, TOK_PH1_DONE, "send token");

	/* phase 2: after the owner's death */
	expect_tok(fd, TOK_PH2);
	for (i = 0; i < P2_MSGS; i++)
		post_msg(&in, 0, M_P2 + i, in.ti.srqn_main);
	fill(in.buf + IB_WRITE, LEN_P2W, 'P');
	post(&in, 0, 1007, IBV_WR_RDMA_WRITE, IB_WRITE, LEN_P2W,
	     in.ti.srqn_main, in.ti.va + OFF_P2W, 0, 0, 0);
	reap_sends(&in, 0, P2_MSGS + 1,
		   "after the owner died: SENDs and a WRITE through its target QP");

	/* refused SRQs: one pair each, as the NAK ends the connection */
	{
		static const char *const name[NPAIR] = {
			NULL,
			"a SEND naming an SRQ of another XRCD: refused",
			"a SEND naming a basic SRQ (or no SRQ): refused",
			"a SEND naming the dead owner's SRQ: refused",
		};
		uint32_t srqn[NPAIR] = { 0, in.ti.srqn_other_xrcd,
					 in.ti.srqn_basic, in.ti.srqn_owner };

		for (i = 1; i < NPAIR; i++) {
			struct ibv_wc wc;
			int r;

			post_msg(&in, i, M_BAD + i, srqn[i]);
			r = poll_one(in.cq[i], &wc);
			tap(r == 1 && wc.status == XRC_BAD_SRQ_STATUS &&
			    wc.wr_id == (uint64_t)(M_BAD + i), name[i],
			    "poll %d, status %s (%d), want %s", r,
			    r == 1 ? ibv_wc_status_str(wc.status) : "-",
			    r == 1 ? (int)wc.status : -1,
			    ibv_wc_status_str(XRC_BAD_SRQ_STATUS));
		}
	}
	send_tok(fd, TOK_PH2_DONE, "send token");
	if (read_all(fd, &tok, sizeof(tok)) || tok != TOK_BYE)
		tap(false, "the target side finished", "no goodbye");
	for (i = 0; i < NPAIR; i++) {
		if (ibv_destroy_qp(in.qp[i]) || ibv_destroy_cq(in.cq[i]))
			tap(false, "destroy an XRC_SEND QP and its CQ", "errno %d",
			    errno);
	}
	ibv_dereg_mr(in.mr);
	ibv_dealloc_pd(in.pd);
	ibv_close_device(in.ctx);
	close(fd);
	printf("# initiator: %d failed\n", failures);
	return failures ? 1 : 0;
}

/* ================================================================ */
/* holders                                                          */
/* ================================================================ */

static int run_holder(const struct opts *o)
{
	struct ibv_context *ctx = open_dev_or_die(o->dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_xrcd *x;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint32_t srqn;
	int fd;

	side = o->mode == 'C' ? "creator" : "opener";
	fd = open(o->file, O_RDONLY | O_CREAT, 0600);
	if (fd < 0 || !pd || !cq)
		die("FILE, PD or CQ");
	x = open_xrcd(ctx, fd, o->mode == 'C' ? O_CREAT : 0);
	if (!x)
		die("ibv_open_xrcd");
	srq = xrc_srq(ctx, x, pd, cq, 16, &srqn);
	if (o->mode == 'C') {
		qp = tgt_qp(ctx, x);
	} else {
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM |
				     IBV_QP_OPEN_ATTR_XRCD |
				     IBV_QP_OPEN_ATTR_TYPE,
			.qp_num = o->qpn, .xrcd = x,
			.qp_type = IBV_QPT_XRC_RECV,
		};

		qp = ibv_open_qp(ctx, &oa);
		if (!qp)
			die("ibv_open_qp");
	}
	printf("xrcshare %s: qpn %u srqn %u\n", side, qp->qp_num, srqn);
	fflush(stdout);
	(void)srq;
	for (;;)
		pause();	/* until killed */
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = "18600", .gidx = -1 };
	int c;

	e2e_name = side = "xrcshare";
	while ((c = getopt(argc, argv, "tiCOd:g:f:a:p:q:")) != -1) {
		switch (c) {
		case 't': case 'i': case 'C': case 'O': o.mode = (char)c; break;
		case 'd': o.dev = optarg; break;
		case 'g': o.gidx = atoi(optarg); break;
		case 'f': o.file = optarg; break;
		case 'a': o.addr = optarg; break;
		case 'p': o.port = optarg; break;
		case 'q': o.qpn = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!o.mode || !o.dev || ((o.mode == 't' || o.mode == 'i') && o.gidx < 0) ||
	    (o.mode != 'i' && !o.file) || (o.mode == 'i' && !o.addr) ||
	    (o.mode == 'O' && !o.qpn)) {
		fprintf(stderr, "usage: xrcshare -t -d DEV -g GIDX -f FILE [-p PORT]\n"
			"       xrcshare -i -d DEV -g GIDX -a ADDR [-p PORT]\n"
			"       xrcshare -C -d DEV -f FILE\n"
			"       xrcshare -O -d DEV -f FILE -q QPN\n");
		return 2;
	}
	srand48((long)getpid() ^ (long)time(NULL));
	setvbuf(stdout, NULL, _IOLBF, 0);
	switch (o.mode) {
	case 't': return run_target(&o);
	case 'i': return run_initiator(&o);
	default: return run_holder(&o);
	}
}
