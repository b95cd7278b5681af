// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * a2a_cm: an all-to-all connect between two hosts through RDMA CM, the
 * control path of many QPs (issue 38).  N processes on each side; every
 * (client process, server process) pair gets one RC QP of its own, N*N in
 * all, each made the whole way: address and route resolution, a connect
 * request with private data, accept, established.
 *
 *   a2a_cm -s -a ADDR [-p PORT] [-n N] [-d DEV] [-W SECS]      server
 *   a2a_cm -c -a ADDR [-p PORT] [-n N] [-d DEV] [-W SECS]      client
 *
 * -a  the server's address (IPv4 or IPv6); the server binds to it
 * -p  the first port (default 7490): server process i listens on PORT+i
 * -n  processes per side (default 2, at most 64): N*N connections
 * -d  the RDMA device every connection must resolve to (default: any)
 * -W  watchdog: a process gives up after SECS seconds without a CM event
 *     or a completion while it waits for one (default 120; TCG is slow)
 *
 * The server forks N processes; process i listens on PORT+i and accepts N
 * connections, one from each client process.  The client forks N
 * processes, which start together once each has set up librdmacm (its
 * event channel: the device list read); client process j connects to
 * every server process at once
 * (one rdma_cm_id each on one event channel, no busy polling: poll(2) on
 * the event channel and the completion channel).  Every connect request
 * names its pair (client j, server i, N, the run's nonce) and the accept
 * echoes it; both sides check it.  Once all of a client process's
 * connections are established it tells its parent, and when every client
 * process has, the parent lets them go: each posts one 64-byte SEND on each
 * of its QPs.  A server process checks the message (completion status,
 * opcode, QP, length and every byte: the bytes name the pair and the
 * nonce) and answers on that QP with its own message, which carries its
 * verdict; the client checks it the same way and its own SEND's
 * completion.  The server disconnects each connection once its answer
 * completed and the connection was established (a client whose SEND's
 * completion or answer the disconnect overtook waits for them, up to -W
 * seconds); both sides then destroy the QPs, the CQ, the MR, the PD and
 * the ids.  Every process has one thread and no lock; a side's processes
 * share nothing but two pipes to and from their parent (reports up; the
 * client's start and go down, a byte per process each).
 *
 * Each side's parent prints one summary line when its processes ended:
 *
 *   a2a_cm client: summary: n=4 connections=16 established_s=3.210
 *     verified_s=4.020 done_s=5.110 result=ok
 *
 * (one line), times from the first connect (the client processes' start,
 * just before their rdma_resolve_addr calls; the server's first connect
 * request) to the last
 * connection established, to the last pair's messages verified, and to
 * the last process's exit.  result=FAILED and a reason when anything went
 * wrong.  A "phases:" line before it says when every process was through
 * each step: the client's addresses resolved, routes resolved, connect
 * requests sent (their QPs made), established, verified; the server's
 * requests accepted (their QPs made), established, verified.  Every line is stamped with the boot time, as dmesg's.
 * The server prints "a2a_cm server: listening" once all its processes
 * listen.
 *
 * Exit status: 0 every connection established and every message verified
 * both ways, 1 anything else (the reason printed), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include "e2e_lib.h"

#define MAGIC		0x61326163u	/* "a2ac" */
#define MAX_N		64
#define BUF_LEN		128		/* a receive buffer: room to see a long message */
#define RESOLVE_MS	20000

enum { DIR_C2S = 1, DIR_S2C = 2 };

/* What a connect request carries, and its accept echoes. */
struct pair_pd {
	uint32_t magic;
	uint32_t n;
	uint32_t cli;		/* the client process */
	uint32_t srv;		/* the server process (PORT + srv) */
	uint64_t nonce;		/* the client side's run */
};

/* The one message each way on every connection: 64 bytes. */
struct msg {
	uint32_t magic;
	uint32_t dir;
	uint32_t cli;
	uint32_t srv;
	uint64_t nonce;
	uint32_t ok;		/* DIR_S2C: the server's verdict on DIR_C2S */
	uint32_t pad;
	uint8_t pat[32];
};
_Static_assert(sizeof(struct msg) == 64, "a 64-byte message");

/* A process's report to its parent, through one pipe (atomic writes). */
enum { R_LISTEN = 1, R_READY, R_FIRST, R_ADDR, R_ROUTE, R_SENT, R_ACC, R_EST, R_VER, R_KINDS };
struct report {
	uint32_t idx;
	uint32_t kind;
	double t;
};

/*
 * One connection of a process, indexed by the other side's process.  A
 * client's connection that the server disconnected before both of its
 * messages were done waits for them from @gone (its time) on.
 */
struct conn {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	bool est, sent, got, verified, disc_sent, done;
	double gone;
};

/*
 * One process of either side: its event channel, the verbs objects its
 * connections share (made with the first connection's device) and its
 * connections.  Used by that process's one thread only.
 */
struct proc {
	bool server;
	unsigned int idx, n;
	const char *dev;
	int watchdog;
	uint64_t nonce;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen_id;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* per connection: send buffer, receive buffer */
	struct conn conn[MAX_N];
	unsigned int naddr, nroute, nsent, nacc, nest, nver, ndone;
	bool armed, go_wait, go;
	double last;
	int report_fd, go_fd;
};

static const char *who = "a2a_cm";
static char who_buf[48];

static double boottime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* say - one line "WHO: ..." on stdout, stamped with the boot time. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("[%.2f] %s: ", boottime(), who);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* fail - "WHO: FAILED: ..." and exit 1. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("[%.2f] %s: FAILED: ", boottime(), who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(1);
}

/* ---- the messages ------------------------------------------------------- */

static void make_msg(struct msg *m, uint32_t dir, uint32_t cli, uint32_t srv, uint64_t nonce)
{
	unsigned int k;

	memset(m, 0, sizeof(*m));
	m->magic = MAGIC;
	m->dir = dir;
	m->cli = cli;
	m->srv = srv;
	m->nonce = nonce;
	m->ok = dir == DIR_S2C;
	for (k = 0; k < sizeof(m->pat); k++)
		m->pat[k] = (uint8_t)(nonce >> (8 * (k % 8))) ^
			    (uint8_t)(cli * 37 + srv * 101 + dir * 13 + k * 7);
}

/* ---- one process ---------------------------------------------------------- */

static void report(struct proc *p, uint32_t kind, double t)
{
	struct report r = { .idx = p->idx, .kind = kind, .t = t };

	if (write_all(p->report_fd, &r, sizeof(r)))
		fail("cannot report to the parent: %s", strerror(errno));
}

static void nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		fail("fcntl: %s", strerror(errno));
}

static uint8_t *sbuf(struct proc *p, unsigned int c)
{
	return p->buf + (size_t)c * 2 * BUF_LEN;
}

static uint8_t *rbuf(struct proc *p, unsigned int c)
{
	return sbuf(p, c) + BUF_LEN;
}

/*
 * use_verbs - the device of @id: the one of -d, and the same for all of
 * this process's connections; the shared PD, completion channel, CQ (room
 * for every connection's SEND and receive) and MR come with the first.
 */
static void use_verbs(struct proc *p, struct rdma_cm_id *id, const char *what)
{
	const char *name;

	if (!id->verbs)
		fail("%s: no device behind the address", what);
	name = ibv_get_device_name(id->verbs->device);
	if (p->dev && strcmp(name, p->dev))
		fail("%s: resolved to device %s, not %s", what, name, p->dev);
	if (p->verbs) {
		if (p->verbs != id->verbs)
			fail("%s: device %s, another context than the first connection's", what,
			     name);
		return;
	}
	p->verbs = id->verbs;
	p->pd = ibv_alloc_pd(p->verbs);
	p->cch = ibv_create_comp_channel(p->verbs);
	if (!p->pd || !p->cch)
		fail("ibv_alloc_pd/ibv_create_comp_channel on %s: %s", name, strerror(errno));
	nonblock(p->cch->fd);
	p->cq = ibv_create_cq(p->verbs, 4 * p->n + 4, NULL, p->cch, 0);
	if (!p->cq)
		fail("ibv_create_cq(%u) on %s: %s", 4 * p->n + 4, name, strerror(errno));
	p->buf = aligned_alloc(4096, (2 * BUF_LEN * p->n + 4095) & ~(size_t)4095);
	if (!p->buf)
		fail("out of memory");
	memset(p->buf, 0, 2 * BUF_LEN * p->n);
	p->mr = ibv_reg_mr(p->pd, p->buf, 2 * BUF_LEN * p->n, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		fail("ibv_reg_mr: %s", strerror(errno));
}

/* make_qp - connection @c's RC QP on @id, its one receive posted. */
static void make_qp(struct proc *p, unsigned int c, struct rdma_cm_id *id, const char *what)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)c << 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	use_verbs(p, id, what);
	qa.send_cq = qa.recv_cq = p->cq;
	if (rdma_create_qp(id, p->pd, &qa))
		fail("%s: rdma_create_qp: %s", what, strerror(errno));
	p->conn[c].qp = id->qp;
	sge = (struct ibv_sge){ .addr = (uintptr_t)rbuf(p, c), .length = BUF_LEN,
				.lkey = p->mr->lkey };
	if (ibv_post_recv(id->qp, &wr, &bad))
		fail("%s: ibv_post_recv: %s", what, strerror(errno));
}

static void post_msg(struct proc *p, unsigned int c, uint32_t dir, uint32_t cli, uint32_t srv)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf(p, c), .length = sizeof(struct msg),
			       .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)c << 1 | 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	make_msg((struct msg *)sbuf(p, c), dir, cli, srv, p->nonce);
	if (ibv_post_send(p->conn[c].qp, &wr, &bad))
		fail("ibv_post_send on the QP of pair (client %u, server %u): %s", cli, srv,
		     strerror(errno));
}

/* A connection's pair, (client, server), in messages. */
static void pair_of(struct proc *p, unsigned int c, uint32_t *cli, uint32_t *srv)
{
	*cli = p->server ? c : p->idx;
	*srv = p->server ? p->idx : c;
}

/*
 * finish - connection @c was disconnected by the other side: the client
 * answers the server's disconnect (rdma_disconnect() sends the reply);
 * its QP goes.  The id stays until teardown().
 */
static void finish(struct proc *p, unsigned int c)
{
	struct conn *cn = &p->conn[c];

	if (!p->server && rdma_disconnect(cn->id))
		fail("connection to server %u: rdma_disconnect: %s", c, strerror(errno));
	cn->done = true;
	rdma_destroy_qp(cn->id);
	cn->qp = NULL;
	p->ndone++;
}

/*
 * step - what connection @c does next: either side counts the pair
 * verified once its SEND completed and the other side's message checked
 * out; the server disconnects once the pair is verified and the
 * connection established; a client finishes a connection the server
 * disconnected once the pair is verified.
 */
static void step(struct proc *p, unsigned int c)
{
	struct conn *cn = &p->conn[c];

	if (cn->sent && cn->got && !cn->verified) {
		cn->verified = true;
		if (++p->nver == p->n)
			report(p, R_VER, now_s());
	}
	if (p->server && cn->verified && cn->est && !cn->disc_sent) {
		cn->disc_sent = true;
		if (rdma_disconnect(cn->id))
			fail("rdma_disconnect (client %u): %s", c, strerror(errno));
	}
	if (!p->server && cn->verified && cn->gone && !cn->done)
		finish(p, c);
}

/* on_wc - one completion: status, opcode, QP; a message also its length and bytes. */
static void on_wc(struct proc *p, const struct ibv_wc *wc)
{
	unsigned int c = wc->wr_id >> 1, k;
	bool send = wc->wr_id & 1;
	struct conn *cn;
	struct msg want;
	uint32_t cli, srv;
	const uint8_t *got;

	if (c >= p->n || !p->conn[c].qp)
		fail("a completion for no connection (wr_id %#" PRIx64 ", QP %#x)", wc->wr_id,
		     wc->qp_num);
	cn = &p->conn[c];
	pair_of(p, c, &cli, &srv);
	if (wc->status != IBV_WC_SUCCESS)
		fail("pair (client %u, server %u): %s completed with %s (status %d, vendor_err %#x)",
		     cli, srv, send ? "the SEND" : "the receive", ibv_wc_status_str(wc->status),
		     wc->status, wc->vendor_err);
	if (wc->qp_num != cn->qp->qp_num)
		fail("pair (client %u, server %u): completion on QP %#x, its QP is %#x", cli, srv,
		     wc->qp_num, cn->qp->qp_num);
	if (send) {
		if (wc->opcode != IBV_WC_SEND || cn->sent)
			fail("pair (client %u, server %u): SEND completed as opcode %d%s", cli, srv,
			     wc->opcode, cn->sent ? ", twice" : "");
		cn->sent = true;
		step(p, c);
		return;
	}
	if (wc->opcode != IBV_WC_RECV || cn->got)
		fail("pair (client %u, server %u): receive completed as opcode %d%s", cli, srv,
		     wc->opcode, cn->got ? ", twice" : "");
	if (wc->byte_len != sizeof(want))
		fail("pair (client %u, server %u): received %u bytes, sent %zu", cli, srv,
		     wc->byte_len, sizeof(want));
	make_msg(&want, p->server ? DIR_C2S : DIR_S2C, cli, srv, p->nonce);
	got = rbuf(p, c);
	for (k = 0; k < sizeof(want) && got[k] == ((uint8_t *)&want)[k]; k++)
		;
	if (k != sizeof(want))
		fail("pair (client %u, server %u): message byte %u is %#x, not %#x", cli, srv, k,
		     got[k], ((uint8_t *)&want)[k]);
	cn->got = true;
	if (p->server)
		post_msg(p, c, DIR_S2C, cli, srv);
	step(p, c);
}

static int drain_cq(struct proc *p)
{
	struct ibv_wc wc[16];
	int n, k, all = 0;

	if (!p->cq)
		return 0;
	while ((n = ibv_poll_cq(p->cq, 16, wc)) > 0) {
		for (k = 0; k < n; k++)
			on_wc(p, &wc[k]);
		all += n;
	}
	if (n < 0)
		fail("ibv_poll_cq: %d", n);
	return all;
}

static void check_pd(struct proc *p, const struct rdma_conn_param *cp, unsigned int cli,
		     unsigned int srv, const char *what)
{
	struct pair_pd pd;

	if (!cp->private_data || cp->private_data_len < sizeof(pd))
		fail("%s: %u bytes of private data, want %zu", what, cp->private_data_len,
		     sizeof(pd));
	memcpy(&pd, cp->private_data, sizeof(pd));
	if (pd.magic != MAGIC || pd.n != p->n || pd.cli != cli || pd.srv != srv ||
	    (!p->server && pd.nonce != p->nonce))
		fail("%s: private data magic %#x n %u client %u server %u, want n %u client %u server %u",
		     what, pd.magic, pd.n, pd.cli, pd.srv, p->n, cli, srv);
	if (p->server && !p->nonce)
		p->nonce = pd.nonce;
	else if (pd.nonce != p->nonce)
		fail("%s: nonce %#" PRIx64 ", the other connections' %#" PRIx64, what, pd.nonce,
		     p->nonce);
}

/* srv_request - a connect request: check what it names, make its QP, accept. */
static void srv_request(struct proc *p, struct rdma_cm_event *ev)
{
	struct pair_pd pd;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	unsigned int c;

	if (!ev->param.conn.private_data || ev->param.conn.private_data_len < sizeof(pd))
		fail("a connect request with %u bytes of private data",
		     ev->param.conn.private_data_len);
	memcpy(&pd, ev->param.conn.private_data, sizeof(pd));
	c = pd.cli;
	if (c >= p->n || p->conn[c].id)
		fail("a connect request from client %u (n %u)%s", c, p->n,
		     c < p->n ? ": a second one" : "");
	if (!p->armed) {
		p->armed = true;
		report(p, R_FIRST, now_s());
	}
	check_pd(p, &ev->param.conn, c, p->idx, "connect request");
	p->conn[c].id = ev->id;
	ev->id->context = &p->conn[c];
	make_qp(p, c, ev->id, "connect request");
	cp.private_data = &pd;
	cp.private_data_len = sizeof(pd);
	if (rdma_accept(ev->id, &cp))
		fail("rdma_accept (client %u): %s", c, strerror(errno));
	if (++p->nacc == p->n)
		report(p, R_ACC, now_s());
}

/* cli_connect - connection @c's route is there: its QP, then the request. */
static void cli_connect(struct proc *p, unsigned int c)
{
	struct pair_pd pd = { .magic = MAGIC, .n = p->n, .cli = p->idx, .srv = c,
			      .nonce = p->nonce };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7,
				      .private_data = &pd, .private_data_len = sizeof(pd) };
	char what[48];

	snprintf(what, sizeof(what), "connection to server %u", c);
	make_qp(p, c, p->conn[c].id, what);
	if (rdma_connect(p->conn[c].id, &cp))
		fail("%s: rdma_connect: %s", what, strerror(errno));
}

static void on_cm(struct proc *p, struct rdma_cm_event *ev)
{
	enum rdma_cm_event_type t = ev->event;
	struct conn *cn = ev->id->context;
	unsigned int c = cn ? (unsigned int)(cn - p->conn) : 0;
	char what[48];

	if (p->server)
		snprintf(what, sizeof(what), "connection from client %u", c);
	else
		snprintf(what, sizeof(what), "connection to server %u", c);
	if (t == RDMA_CM_EVENT_CONNECT_REQUEST && p->server) {
		srv_request(p, ev);
		return;
	}
	if (!cn || c >= p->n) {
		if (t == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			return;
		fail("CM event %s (status %d) for no connection", rdma_event_str(t), ev->status);
	}
	switch (t) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (p->server)
			break;
		if (++p->naddr == p->n)
			report(p, R_ADDR, now_s());
		use_verbs(p, ev->id, what);
		if (rdma_resolve_route(ev->id, RESOLVE_MS))
			fail("%s: rdma_resolve_route: %s", what, strerror(errno));
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (p->server)
			break;
		if (++p->nroute == p->n)
			report(p, R_ROUTE, now_s());
		cli_connect(p, c);
		if (++p->nsent == p->n)
			report(p, R_SENT, now_s());
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (cn->est)
			break;
		if (!p->server)
			check_pd(p, &ev->param.conn, p->idx, c, what);
		cn->est = true;
		if (++p->nest == p->n) {
			report(p, R_EST, now_s());
			if (!p->server)
				p->go_wait = true;
		}
		step(p, c);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* the completions that came before the event first */
		drain_cq(p);
		if (cn->done || cn->gone)
			fail("%s: disconnected twice (status %d)", what, ev->status);
		if (cn->verified) {
			finish(p, c);
			return;
		}
		/*
		 * The server disconnects once its answer completed; the
		 * client's own SEND's completion or the answer's may still
		 * be on their way (an ACK lost and resent): wait for them.
		 */
		if (!p->server && cn->est) {
			cn->gone = now_s();
			return;
		}
		fail("%s: disconnected (status %d) with %s", what, ev->status,
		     !cn->got ? "its message not received" : "its SEND not completed");
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return;
	default:
		break;
	}
	fail("%s: CM event %s (status %d)%s", what, rdma_event_str(t), ev->status,
	     t == RDMA_CM_EVENT_REJECTED ? " (the server process not listening?)" : "");
}

static int drain_cm(struct proc *p)
{
	struct rdma_cm_event *ev;
	int n = 0;

	while (!rdma_get_cm_event(p->ech, &ev)) {
		on_cm(p, ev);
		rdma_ack_cm_event(ev);
		n++;
	}
	if (errno != EAGAIN)
		fail("rdma_get_cm_event: %s", strerror(errno));
	return n;
}

/* take_go - the parent's go: a byte each; its end (the parent died) is a failure. */
static int take_go(struct proc *p)
{
	char b;
	ssize_t r;

	if (!p->go_wait || p->go)
		return 0;
	r = read(p->go_fd, &b, 1);
	if (r < 0 && errno == EAGAIN)
		return 0;
	if (r != 1)
		fail("no go from the parent (%s)", r ? strerror(errno) : "end of file");
	p->go = true;
	p->go_wait = false;
	return 1;
}

/*
 * wait_start - the parent's start byte, which comes when every client
 * process has its event channel (librdmacm set up: its device list read),
 * so that the processes start connecting together; at most -W seconds.
 */
static void wait_start(struct proc *p)
{
	struct pollfd pfd = { .fd = p->go_fd, .events = POLLIN };
	double end = now_s() + p->watchdog;
	ssize_t r;
	char b;

	for (;;) {
		r = read(p->go_fd, &b, 1);
		if (r == 1)
			return;
		if (!r || errno != EAGAIN)
			fail("no start from the parent (%s)", r ? strerror(errno) : "end of file");
		if (now_s() > end)
			fail("no start from the parent within %d s", p->watchdog);
		if (poll(&pfd, 1, 1000) < 0 && errno != EINTR)
			fail("poll: %s", strerror(errno));
	}
}

static void send_all(struct proc *p)
{
	unsigned int c;

	for (c = 0; c < p->n; c++)
		post_msg(p, c, DIR_C2S, p->idx, c);
}

/*
 * run - the process's event loop: CQ and CM channel drained, then a sleep
 * in poll(2) on both channels (and the go pipe while it waits for it);
 * until every connection is disconnected.  The CQ is re-armed and polled
 * once more before each sleep, so no completion is missed.
 */
static void run(struct proc *p)
{
	struct pollfd pfd[3];
	struct ibv_cq *cq;
	void *cq_ctx;
	int k, np;

	p->last = now_s();
	while (p->ndone < p->n) {
		if (drain_cq(p) + drain_cm(p)) {
			p->last = now_s();
			continue;
		}
		if (take_go(p)) {
			send_all(p);
			p->last = now_s();
			continue;
		}
		if (p->cq) {
			if (ibv_req_notify_cq(p->cq, 0))
				fail("ibv_req_notify_cq: %s", strerror(errno));
			if (drain_cq(p)) {
				p->last = now_s();
				continue;
			}
		}
		np = 0;
		pfd[np++] = (struct pollfd){ .fd = p->ech->fd, .events = POLLIN };
		if (p->cch)
			pfd[np++] = (struct pollfd){ .fd = p->cch->fd, .events = POLLIN };
		if (p->go_wait)
			pfd[np++] = (struct pollfd){ .fd = p->go_fd, .events = POLLIN };
		if (poll(pfd, np, 1000) < 0 && errno != EINTR)
			fail("poll: %s", strerror(errno));
		for (k = 0; k < np; k++)
			if (p->cch && pfd[k].fd == p->cch->fd && (pfd[k].revents & POLLIN)) {
				if (!ibv_get_cq_event(p->cch, &cq, &cq_ctx))
					ibv_ack_cq_events(cq, 1);
				else if (errno != EAGAIN)
					fail("ibv_get_cq_event: %s", strerror(errno));
			}
		for (k = 0; k < (int)p->n; k++)
			if (p->conn[k].gone && !p->conn[k].done &&
			    now_s() - p->conn[k].gone > p->watchdog)
				fail("connection to server %d: disconnected by the server %d s ago with %s",
				     k, p->watchdog, !p->conn[k].got ? "its answer not received" :
				     "its SEND not completed");
		/* no watchdog while the server waits for its first request or the client for go */
		if (p->armed && !p->go_wait && now_s() - p->last > p->watchdog)
			fail("nothing for %d s: %u of %u connections established, %u verified, %u disconnected",
			     p->watchdog, p->nest, p->n, p->nver, p->ndone);
	}
}

/* teardown - the verbs objects, then the ids and the channel. */
static void teardown(struct proc *p)
{
	unsigned int c;

	if (p->mr && ibv_dereg_mr(p->mr))
		fail("ibv_dereg_mr: %s", strerror(errno));
	if (p->cq && ibv_destroy_cq(p->cq))
		fail("ibv_destroy_cq: %s", strerror(errno));
	if (p->cch && ibv_destroy_comp_channel(p->cch))
		fail("ibv_destroy_comp_channel: %s", strerror(errno));
	if (p->pd && ibv_dealloc_pd(p->pd))
		fail("ibv_dealloc_pd: %s", strerror(errno));
	for (c = 0; c < p->n; c++)
		if (p->conn[c].id && rdma_destroy_id(p->conn[c].id))
			fail("rdma_destroy_id: %s", strerror(errno));
	if (p->listen_id && rdma_destroy_id(p->listen_id))
		fail("rdma_destroy_id (listener): %s", strerror(errno));
	rdma_destroy_event_channel(p->ech);
	free(p->buf);
}

static void set_port(struct sockaddr_storage *ss, unsigned int port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

/* child - process @p->idx of its side, from its start to its exit. */
static void child(struct proc *p, const struct sockaddr *sa, socklen_t salen, unsigned int port)
	__attribute__((noreturn));
static void child(struct proc *p, const struct sockaddr *sa, socklen_t salen, unsigned int port)
{
	struct sockaddr_storage ss;
	unsigned int c;
	char what[48];
	double t0;

	snprintf(who_buf, sizeof(who_buf), "a2a_cm %s %u", p->server ? "server" : "client",
		 p->idx);
	who = who_buf;
	p->ech = rdma_create_event_channel();
	if (!p->ech)
		fail("rdma_create_event_channel: %s", strerror(errno));
	nonblock(p->ech->fd);
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, sa, salen);
	if (p->server) {
		set_port(&ss, port + p->idx);
		if (rdma_create_id(p->ech, &p->listen_id, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(p->listen_id, (struct sockaddr *)&ss) ||
		    rdma_listen(p->listen_id, p->n))
			fail("listen on port %u: %s", port + p->idx, strerror(errno));
		snprintf(what, sizeof(what), "the listener on port %u", port + p->idx);
		if (p->listen_id->verbs)
			use_verbs(p, p->listen_id, what);
		report(p, R_LISTEN, now_s());
	} else {
		/* librdmacm is set up: wait until every client process is */
		report(p, R_READY, now_s());
		wait_start(p);
		p->armed = true;
		t0 = now_s();
		report(p, R_FIRST, t0);
		for (c = 0; c < p->n; c++) {
			set_port(&ss, port + c);
			if (rdma_create_id(p->ech, &p->conn[c].id, &p->conn[c], RDMA_PS_TCP) ||
			    rdma_resolve_addr(p->conn[c].id, NULL, (struct sockaddr *)&ss,
					      RESOLVE_MS))
				fail("connection to server %u: rdma_resolve_addr: %s", c,
				     strerror(errno));
		}
	}
	run(p);
	teardown(p);
	exit(0);
}

/* ---- the parent of a side ------------------------------------------------- */

struct side {
	bool server;
	unsigned int n, port;
	pid_t pid[MAX_N];
	bool exited[MAX_N];
	unsigned int nexited, count[R_KINDS];
	double first[R_KINDS], last[R_KINDS], t_report;
	int report_fd, go_fd;
};

/* since - seconds from the first connect to the last process's report of @kind, or -1. */
static double since(struct side *s, unsigned int kind)
{
	return s->count[kind] == s->n ? s->last[kind] - s->first[R_FIRST] : -1;
}

/*
 * summary - where the time went (each phase done in every process), then
 * the summary line.
 */
static void summary(struct side *s, const char *result)
{
	double t0 = s->first[R_FIRST];
	double est = since(s, R_EST), ver = since(s, R_VER);

	if (s->server)
		say("phases: accepted_s=%.3f established_s=%.3f verified_s=%.3f", since(s, R_ACC),
		    est, ver);
	else
		say("phases: addr_resolved_s=%.3f route_resolved_s=%.3f connect_sent_s=%.3f established_s=%.3f verified_s=%.3f",
		    since(s, R_ADDR), since(s, R_ROUTE), since(s, R_SENT), est, ver);
	say("summary: n=%u connections=%u established_s=%.3f verified_s=%.3f done_s=%.3f result=%s",
	    s->n, s->n * s->n, est, ver, s->count[R_FIRST] ? now_s() - t0 : -1.0, result);
}

/* side_fail - every child still there killed and reaped, the summary, exit 1. */
static void side_fail(struct side *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
static void side_fail(struct side *s, const char *fmt, ...)
{
	char why[256];
	unsigned int i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	for (i = 0; i < s->n; i++)
		if (!s->exited[i] && s->pid[i] > 0)
			kill(s->pid[i], SIGKILL);
	for (i = 0; i < s->n; i++)
		if (!s->exited[i] && s->pid[i] > 0)
			waitpid(s->pid[i], NULL, 0);
	say("FAILED: %s", why);
	summary(s, "FAILED");
	exit(1);
}

static void on_report(struct side *s, const struct report *r)
{
	double now = now_s();
	unsigned int i;
	char go[MAX_N];

	if (r->idx >= s->n || !r->kind || r->kind >= R_KINDS)
		side_fail(s, "a report of kind %u from process %u", r->kind, r->idx);
	s->t_report = now;
	if (!s->count[r->kind] || r->t < s->first[r->kind])
		s->first[r->kind] = r->t;
	if (!s->count[r->kind] || r->t > s->last[r->kind])
		s->last[r->kind] = r->t;
	if (++s->count[r->kind] != s->n)
		return;
	switch (r->kind) {
	case R_LISTEN:
		say("listening: %u processes on ports %u..%u", s->n, s->port, s->port + s->n - 1);
		break;
	case R_READY:
		/* every client process is set up: let them connect */
		for (i = 0; i < s->n; i++)
			go[i] = 's';
		if (write_all(s->go_fd, go, s->n))
			side_fail(s, "cannot tell the processes to start: %s", strerror(errno));
		break;
	case R_EST:
		say("all %u connections established, %.3f s after the first %s", s->n * s->n,
		    s->last[R_EST] - s->first[R_FIRST],
		    s->server ? "connect request" : "connect");
		if (s->server)
			break;
		/* every client process's connections are up: let them send */
		for (i = 0; i < s->n; i++)
			go[i] = 'g';
		if (write_all(s->go_fd, go, s->n))
			side_fail(s, "cannot tell the processes to go: %s", strerror(errno));
		break;
	case R_VER:
		say("all %u pairs verified both ways, %.3f s after the first %s", s->n * s->n,
		    s->last[R_VER] - s->first[R_FIRST],
		    s->server ? "connect request" : "connect");
		break;
	}
}

/*
 * parent - fork the side's processes and follow them: their reports, their
 * exits.  Once the first connect happened, a watchdog of 3 x @watchdog
 * covers a process that hangs without reporting (each has its own).
 */
static int parent(struct proc *tmpl, const struct sockaddr *sa, socklen_t salen,
		  unsigned int port)
{
	struct side s = { .server = tmpl->server, .n = tmpl->n, .port = port };
	int rp[2], gp[2] = { -1, -1 }, st, err;
	struct pollfd pfd;
	struct report r;
	unsigned int i;
	pid_t me = getpid(), pid;
	ssize_t got;

	if (pipe(rp) || (!s.server && pipe(gp)))
		fail("pipe: %s", strerror(errno));
	fflush(stdout);
	for (i = 0; i < s.n; i++) {
		pid = fork();
		if (pid < 0)
			side_fail(&s, "fork: %s", strerror(errno));
		if (!pid) {
			struct proc p = *tmpl;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != me)
				exit(1);
			close(rp[0]);
			p.idx = i;
			p.report_fd = rp[1];
			if (!s.server) {
				close(gp[1]);
				p.go_fd = gp[0];
				nonblock(p.go_fd);
			}
			child(&p, sa, salen, port);
		}
		s.pid[i] = pid;
	}
	close(rp[1]);
	if (!s.server)
		close(gp[0]);
	s.report_fd = rp[0];
	s.go_fd = gp[1];
	pfd = (struct pollfd){ .fd = rp[0], .events = POLLIN };
	while (s.nexited < s.n) {
		if (poll(&pfd, 1, 500) < 0 && errno != EINTR)
			side_fail(&s, "poll: %s", strerror(errno));
		if (pfd.revents & POLLIN) {
			got = read(rp[0], &r, sizeof(r));
			if (got == sizeof(r))
				on_report(&s, &r);
			else if (got > 0)
				side_fail(&s, "a report of %zd bytes", got);
		}
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			for (i = 0; i < s.n && s.pid[i] != pid; i++)
				;
			if (i == s.n)
				continue;
			s.exited[i] = true;
			s.nexited++;
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				side_fail(&s, "%s process %u %s %d", s.server ? "server" : "client", i,
					  WIFEXITED(st) ? "exited" : "was killed by signal",
					  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		}
		if ((s.count[R_FIRST] || s.count[R_READY]) &&
		    now_s() - s.t_report > 3.0 * tmpl->watchdog)
			side_fail(&s, "no process reported for %d s", 3 * tmpl->watchdog);
	}
	/* every report was written before its process exited */
	while ((got = read(rp[0], &r, sizeof(r))) == sizeof(r))
		on_report(&s, &r);
	err = s.count[R_EST] != s.n || s.count[R_VER] != s.n;
	if (err)
		side_fail(&s, "the processes exited with %u of %u established, %u of %u verified",
			  s.count[R_EST], s.n, s.count[R_VER], s.n);
	summary(&s, "ok");
	return 0;
}

int main(int argc, char **argv)
{
	struct proc p = { .n = 2, .watchdog = 120 };
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	const char *addr = NULL;
	unsigned long port = 7490, n = 2;
	int opt, srv = -1, err;

	while ((opt = getopt(argc, argv, "sca:p:n:d:W:")) != -1) {
		switch (opt) {
		case 's': srv = 1; break;
		case 'c': srv = 0; break;
		case 'a': addr = optarg; break;
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'd': p.dev = optarg; break;
		case 'W': p.watchdog = atoi(optarg); break;
		default: srv = -1; break;
		}
	}
	if (srv < 0 || !addr || optind != argc || !n || n > MAX_N || !port ||
	    port + n > 65536 || p.watchdog <= 0) {
		fprintf(stderr, "usage: a2a_cm -s|-c -a ADDR [-p PORT] [-n N (1..%d)] [-d DEV] "
			"[-W SECS]\n", MAX_N);
		return 2;
	}
	p.server = srv;
	p.n = n;
	who = srv ? "a2a_cm server" : "a2a_cm client";
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * The libc's resolver, not rdma_getaddrinfo(): nothing of librdmacm
	 * or libibverbs is set up before the fork, each process has its own.
	 */
	err = getaddrinfo(addr, NULL, &hints, &ai);
	if (err)
		fail("getaddrinfo(%s): %s", addr, gai_strerror(err));
	if (ai->ai_addrlen > sizeof(struct sockaddr_storage) ||
	    (ai->ai_family != AF_INET && ai->ai_family != AF_INET6))
		fail("getaddrinfo(%s): no IPv4 or IPv6 address", addr);
	if (!srv)
		p.nonce = ((uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 20) | 1;
	say("pid %d: %u processes, %lu connections, %s %s ports %lu..%lu%s%s", (int)getpid(),
	    p.n, n * n, srv ? "on" : "to", addr, port, port + n - 1, p.dev ? ", device " : "",
	    p.dev ? p.dev : "");
	return parent(&p, ai->ai_addr, ai->ai_addrlen, port);
}
