// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dxfer: verified RC transfers of RDMA WRITE, RDMA READ and SEND messages
 * over one connection (RDMA CM), by count or for as long as asked, for the
 * direct-path suite (scripts/e2e/direct.sh).  Every message is checked
 * byte for byte and every completion's status, opcode and length:
 *
 *   WRITE  the client fills slot s with the pattern of message i, writes it
 *          into the server's slot s and sends VERIFY(i, s); the server
 *          compares its slot and answers RESULT(i, ok).
 *   SEND   the client sends a header and the pattern of message i; the
 *          server compares the received payload and answers RESULT(i, ok).
 *   READ   the client asks FILL(i, s); the server fills its slot s with
 *          the pattern of message i and answers READY(i, s); the client
 *          reads the slot and compares what arrived.
 *
 * Messages cycle through the operations given with -o; up to -w of them
 * are under way at once (each in its own slot).  At the end the client
 * sends FIN (messages started) and the server answers FIN_ACK (messages
 * verified, bad ones); the server disconnects once its answer completed.
 *
 *   dxfer -s -a ADDR [-p PORT] [-W SECS]                             server
 *   dxfer -c -a ADDR [-p PORT] [-o wrs] [-S SIZE] [-n MSGS] [-T SECS]
 *         [-w SLOTS] [-W SECS] [-P FILE] [-t ACKTO]                  client
 *
 * -o  the operations, letters w (WRITE), r (READ), s (SEND); default wrs
 * -S  message size in bytes, K or M suffix allowed (default 64K)
 * -n  number of messages per operation (default 4); with -T, the least
 * -T  keep going for SECS seconds (or until SIGUSR1, which also ends a
 *     count-limited run early, after its messages under way)
 * -w  slots, messages under way at once (default 2, at most 64)
 * -W  watchdog: give up after SECS seconds without any progress (default 60)
 * -P  write the number of messages completed so far into FILE (rewritten
 *     about every 0.2 s: a shell reads it without starting a process)
 * -t  local ACK timeout exponent set on the QP (default 14: ~67 ms)
 *
 * Both ends print their pid first ("dxfer client: pid N ...").
 * Exit status: 0 every message verified; 1 a message arrived wrong (data,
 * length or opcode); 2 usage or setup error; 3 the connection broke (an
 * error completion, a disconnect or the device's removal); 4 the watchdog
 * fired (no progress for -W seconds).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include "e2e_lib.h"

#define MAGIC		0x64786672u	/* "dxfr" */
#define MAX_SLOTS	64
#define MAX_SIZE	(64u << 20)

enum { EX_OK = 0, EX_BAD = 1, EX_SETUP = 2, EX_BROKEN = 3, EX_STALLED = 4 };
enum { OP_WRITE = 1, OP_READ = 2, OP_SEND = 4 };
enum { M_DATA = 1, M_VERIFY, M_FILL, M_RESULT, M_READY, M_FIN, M_FIN_ACK };

struct conn_req {		/* client -> server, CM private data */
	uint32_t magic;
	uint32_t ops;
	uint32_t slots;
	uint32_t size;
	uint64_t seed;
};

struct hdr {			/* every SEND starts with one */
	uint32_t magic;
	uint16_t type;
	uint16_t slot;
	uint64_t msg;
	uint32_t len;
	uint32_t ok;
	uint64_t count;		/* FIN: messages started; FIN_ACK: verified */
	uint64_t bad;		/* FIN_ACK: messages that arrived wrong */
};

/* wr_id: kind in the top byte, buffer index below */
#define WR(kind, idx)	((uint64_t)(kind) << 56 | (idx))
#define WR_KIND(id)	((unsigned int)((id) >> 56))
#define WR_IDX(id)	((unsigned int)((id) & 0xffffff))
enum { K_RECV = 1, K_CTRL, K_DATA, K_READ, K_WRITE };

struct slot {			/* client side */
	int busy;
	int op;
	uint64_t msg;
	int wrs;		/* send WRs not yet completed */
	int waiting;		/* RESULT or READY still due */
	int reading;		/* READ posted, completion due */
};

struct ctx {
	struct cm_ep ep;
	/* server: slots of the target region; client: [hdr][data] per slot */
	uint8_t *data, *recv, *ctrl;
	struct ibv_mr *data_mr, *recv_mr, *ctrl_mr;
	size_t data_stride, recv_size;
	unsigned int nrecv, nctrl;
	int ctrl_busy[MAX_SLOTS + 1];
	struct conn_req req;
	struct cm_rep rep;
	int watchdog, ack_timeout;
	double last_progress;
	uint64_t verified, bad;
};

static volatile sig_atomic_t stop_req;

static void on_usr1(int sig)
{
	(void)sig;
	stop_req = 1;
}

static double boottime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* say - one line "ROLE: ..." on stdout, stamped (boot time, as dmesg) */
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("[%.2f] %s: ", boottime(), e2e_name);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void quit(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	e2e_vwarn(fmt, ap);
	va_end(ap);
	printf("%s: exit %d\n", e2e_name, code);
	fflush(stdout);
	exit(code);
}

/* Word w of message msg: unique to the message and to the position. */
static uint64_t word(uint64_t seed, uint64_t msg, uint64_t w)
{
	uint64_t z = seed ^ (msg + 1) * 0x9e3779b97f4a7c15ull;

	return (z + w * 0xd1b54a32d192ed03ull) ^ (w << 40 | msg);
}

static void fill(uint8_t *p, uint32_t len, uint64_t seed, uint64_t msg)
{
	uint64_t v;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		v = word(seed, msg, i / 8);
		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		v = word(seed, msg, i / 8);
		memcpy(p + i, &v, len - i);
	}
}

/* The offset of the first wrong byte, or len. */
static uint32_t first_bad(const uint8_t *p, uint32_t len, uint64_t seed, uint64_t msg)
{
	uint64_t v;
	uint32_t i, j;

	for (i = 0; i < len; i += 8) {
		v = word(seed, msg, i / 8);
		j = len - i < 8 ? len - i : 8;
		if (memcmp(p + i, &v, j)) {
			for (j = 0; p[i + j] == ((uint8_t *)&v)[j]; j++)
				;
			return i + j;
		}
	}
	return len;
}

static const char *op_name(int op)
{
	return op == OP_WRITE ? "WRITE" : op == OP_READ ? "READ" : "SEND";
}

/* ---- CM and completion plumbing ----------------------------------------- */

static void cm_event_broken(struct ctx *c, struct rdma_cm_event *ev)
{
	enum rdma_cm_event_type t = ev->event;
	int st = ev->status;

	rdma_ack_cm_event(ev);
	(void)c;
	quit(EX_BROKEN, "connection lost: CM event %s (status %d)", rdma_event_str(t), st);
}

/*
 * wait_cm - the next CM event, which must be @want; any other event means
 * the connection (or the device) is gone.  Waits at most the watchdog.
 */
static struct rdma_cm_event *wait_cm(struct ctx *c, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = c->ep.ech->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ret;

	for (;;) {
		if (rdma_get_cm_event(c->ep.ech, &ev) == 0)
			break;
		if (errno != EAGAIN)
			quit(EX_BROKEN, "rdma_get_cm_event: %s", strerror(errno));
		ret = poll(&pfd, 1, c->watchdog * 1000);
		if (ret == 0)
			quit(EX_STALLED, "no CM event %s within %d s", rdma_event_str(want),
			     c->watchdog);
		if (ret < 0 && errno != EINTR)
			quit(EX_BROKEN, "poll: %s", strerror(errno));
	}
	if (ev->event != want) {
		if (want == RDMA_CM_EVENT_ESTABLISHED || want == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			cm_event_broken(c, ev);
		quit(EX_SETUP, "CM event %s (status %d), expected %s", rdma_event_str(ev->event),
		     ev->status, rdma_event_str(want));
	}
	return ev;
}

static void nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		quit(EX_SETUP, "fcntl: %s", strerror(errno));
}

/*
 * poll_some - up to @max completions.  When there are none, sleep on the
 * completion channel and the CM channel for up to 200 ms (so a stop
 * request and the progress file are seen) and return 0.  A CM event during
 * the transfer means the connection broke; so does the watchdog.
 */
static int poll_some(struct ctx *c, struct ibv_wc *wc, int max)
{
	struct pollfd pfd[2] = { { .fd = c->ep.cch->fd, .events = POLLIN },
				 { .fd = c->ep.ech->fd, .events = POLLIN } };
	struct rdma_cm_event *ev;
	struct ibv_cq *cq;
	void *cq_ctx;
	int n;

	n = ibv_poll_cq(c->ep.cq, max, wc);
	if (n < 0)
		quit(EX_BROKEN, "ibv_poll_cq failed");
	if (n > 0) {
		c->last_progress = now_s();
		return n;
	}
	if (ibv_req_notify_cq(c->ep.cq, 0))
		quit(EX_BROKEN, "ibv_req_notify_cq: %s", strerror(errno));
	n = ibv_poll_cq(c->ep.cq, max, wc);	/* what raced with the arming */
	if (n != 0) {
		if (n < 0)
			quit(EX_BROKEN, "ibv_poll_cq failed");
		c->last_progress = now_s();
		return n;
	}
	if (poll(pfd, 2, 200) < 0 && errno != EINTR)
		quit(EX_BROKEN, "poll: %s", strerror(errno));
	if (pfd[0].revents & POLLIN) {
		if (ibv_get_cq_event(c->ep.cch, &cq, &cq_ctx) == 0)
			ibv_ack_cq_events(cq, 1);
		else if (errno != EAGAIN)
			quit(EX_BROKEN, "ibv_get_cq_event: %s", strerror(errno));
	}
	if (pfd[0].revents & (POLLERR | POLLHUP))
		quit(EX_BROKEN, "the completion channel reports an error (device gone?)");
	if (pfd[1].revents & POLLIN) {
		/*
		 * What completed before the event is taken first: the
		 * server disconnects once our QP acknowledged its FIN_ACK,
		 * whose completion is then already in the CQ.
		 */
		n = ibv_poll_cq(c->ep.cq, max, wc);
		if (n > 0) {
			c->last_progress = now_s();
			return n;
		}
		if (rdma_get_cm_event(c->ep.ech, &ev) == 0)
			cm_event_broken(c, ev);
	}
	if (now_s() - c->last_progress > c->watchdog)
		quit(EX_STALLED, "no completion for %d s", c->watchdog);
	return 0;
}

static void wc_check(const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS)
		quit(EX_BROKEN, "error completion: %s (status %d, opcode %d, kind %u, vendor_err 0x%x)",
		     ibv_wc_status_str(wc->status), wc->status, wc->opcode,
		     WR_KIND(wc->wr_id), wc->vendor_err);
}

static void post_recv(struct ctx *c, unsigned int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->recv + i * c->recv_size),
			       .length = c->recv_size, .lkey = c->recv_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR(K_RECV, i), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->ep.qp, &wr, &bad))
		quit(EX_BROKEN, "ibv_post_recv: %s", strerror(errno));
}

static void post_send(struct ctx *c, uint64_t wr_id, enum ibv_wr_opcode opc, void *addr,
		      uint32_t len, uint32_t lkey, uint64_t raddr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = opc, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = c->rep.rkey;
	if (ibv_post_send(c->ep.qp, &wr, &bad))
		quit(EX_BROKEN, "ibv_post_send(%d): %s", opc, strerror(errno));
}

/* send_ctrl - send header @h from control buffer @i (free, checked by the caller) */
static void send_ctrl(struct ctx *c, unsigned int i, const struct hdr *h)
{
	struct hdr *p = (struct hdr *)(c->ctrl + i * sizeof(*h));

	*p = *h;
	p->magic = MAGIC;
	c->ctrl_busy[i] = 1;
	post_send(c, WR(K_CTRL, i), IBV_WR_SEND, p, sizeof(*p), c->ctrl_mr->lkey, 0);
}

static void setup_qp(struct ctx *c, struct rdma_cm_id *id, unsigned int sq, unsigned int rq)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = sq, .max_recv_wr = rq, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	uint8_t to = c->ack_timeout;

	c->ep.pd = ibv_alloc_pd(id->verbs);
	c->ep.cch = ibv_create_comp_channel(id->verbs);
	if (!c->ep.pd || !c->ep.cch)
		quit(EX_SETUP, "ibv_alloc_pd/create_comp_channel: %s", strerror(errno));
	nonblock(c->ep.cch->fd);
	c->ep.cq = ibv_create_cq(id->verbs, 2 * (sq + rq), NULL, c->ep.cch, 0);
	if (!c->ep.cq)
		quit(EX_SETUP, "ibv_create_cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = c->ep.cq;
	if (rdma_create_qp(id, c->ep.pd, &qa))
		quit(EX_SETUP, "rdma_create_qp: %s", strerror(errno));
	c->ep.qp = id->qp;
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &to, sizeof(to)))
		fprintf(stderr, "%s: cannot set the ACK timeout: %s\n", e2e_name, strerror(errno));
}

static void *alloc_reg(struct ctx *c, size_t len, int access, struct ibv_mr **mr)
{
	void *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	if (!p)
		quit(EX_SETUP, "cannot allocate %zu bytes", len);
	memset(p, 0, len);
	*mr = ibv_reg_mr(c->ep.pd, p, len, access);
	if (!*mr)
		quit(EX_SETUP, "ibv_reg_mr(%zu): %s", len, strerror(errno));
	return p;
}

/* ---- server ---------------------------------------------------------------- */

/*
 * The server answers every message (RESULT, READY, FIN_ACK) from a free
 * control buffer; an answer waits in pending[] (one per slot, the client
 * has at most one message under way per slot; the last entry is FIN_ACK)
 * while none is free.
 */
struct srv {
	struct ctx *c;
	struct hdr pending[MAX_SLOTS + 1];
	int has[MAX_SLOTS + 1];
	uint64_t fin_count;
	int fin, fin_sent, fin_done;
};

static void srv_flush(struct srv *sv)
{
	struct ctx *c = sv->c;
	unsigned int i, b;

	for (i = 0; i <= c->req.slots; i++) {
		if (!sv->has[i])
			continue;
		for (b = 0; b < c->nctrl && c->ctrl_busy[b]; b++)
			;
		if (b == c->nctrl)
			return;
		send_ctrl(c, b, &sv->pending[i]);
		sv->has[i] = 0;
		if (sv->pending[i].type == M_FIN_ACK)
			sv->fin_sent = b + 1;
	}
}

/* srv_recv - check one received message and queue its answer */
static void srv_recv(struct srv *sv, const struct ibv_wc *wc)
{
	struct ctx *c = sv->c;
	const uint8_t *p = c->recv + WR_IDX(wc->wr_id) * c->recv_size;
	struct hdr h, a = { 0 };
	uint8_t *slot;
	uint32_t at;

	if (wc->opcode != IBV_WC_RECV || wc->byte_len < sizeof(h))
		quit(EX_BAD, "unexpected receive: opcode %d, %u bytes", wc->opcode, wc->byte_len);
	memcpy(&h, p, sizeof(h));
	if (h.magic != MAGIC || (h.type != M_FIN && h.slot >= c->req.slots) ||
	    h.len > c->req.size || (h.type != M_FIN && sv->has[h.slot]) || sv->fin)
		quit(EX_BAD, "bad header: magic %#x type %u slot %u len %u", h.magic, h.type,
		     h.slot, h.len);
	slot = c->data + (size_t)h.slot * c->data_stride;
	a.slot = h.slot;
	a.msg = h.msg;
	switch (h.type) {
	case M_DATA:	/* a SEND's payload follows the header */
		at = wc->byte_len != sizeof(h) + h.len ? 0 :
		     first_bad(p + sizeof(h), h.len, c->req.seed, h.msg);
		a.type = M_RESULT;
		a.ok = wc->byte_len == sizeof(h) + h.len && at == h.len;
		if (!a.ok)
			fprintf(stderr, "%s: SEND #%" PRIu64 ": %u bytes for %u, first bad byte %u\n",
				e2e_name, h.msg, wc->byte_len, (uint32_t)(sizeof(h) + h.len), at);
		break;
	case M_VERIFY:	/* a WRITE landed in the slot before this SEND */
		at = first_bad(slot, h.len, c->req.seed, h.msg);
		a.type = M_RESULT;
		a.ok = at == h.len;
		if (!a.ok)
			fprintf(stderr, "%s: WRITE #%" PRIu64 " (slot %u): first bad byte %u of %u\n",
				e2e_name, h.msg, h.slot, at, h.len);
		break;
	case M_FILL:	/* the client reads it after READY */
		fill(slot, h.len, c->req.seed, h.msg);
		a.type = M_READY;
		a.ok = 1;
		break;
	case M_FIN:
		sv->fin = 1;
		sv->fin_count = h.count;
		a.type = M_FIN_ACK;
		a.count = c->verified;
		a.bad = c->bad;
		a.slot = c->req.slots;
		sv->pending[c->req.slots] = a;
		sv->has[c->req.slots] = 1;
		return;
	default:
		quit(EX_BAD, "unknown message type %u", h.type);
	}
	if (h.type != M_FILL) {
		if (a.ok)
			c->verified++;
		else
			c->bad++;
	}
	post_recv(c, WR_IDX(wc->wr_id));
	sv->pending[h.slot] = a;
	sv->has[h.slot] = 1;
}

static int server(struct ctx *c, struct rdma_addrinfo *ai)
{
	struct rdma_conn_param cp = { .responder_resources = 16, .initiator_depth = 16,
				      .rnr_retry_count = 7 };
	struct srv sv = { .c = c };
	struct rdma_cm_event *ev;
	struct ibv_wc wc[16];
	unsigned int i;
	int k, n, ok, wd;

	e2e_name = "dxfer server";
	say("pid %d", (int)getpid());
	fflush(stdout);
	nonblock(c->ep.ech->fd);
	if (rdma_create_id(c->ep.ech, &c->ep.listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->ep.listen_id, ai->ai_src_addr ? ai->ai_src_addr : ai->ai_dst_addr) ||
	    rdma_listen(c->ep.listen_id, 1))
		quit(EX_SETUP, "listen: %s", strerror(errno));
	say("listening");
	fflush(stdout);
	/* no watchdog before a client comes: the caller's timeout covers it */
	wd = c->watchdog;
	c->watchdog = 24 * 3600;
	ev = wait_cm(c, RDMA_CM_EVENT_CONNECT_REQUEST);
	c->watchdog = wd;
	c->ep.id = ev->id;
	if (ev->param.conn.private_data_len < sizeof(c->req))
		quit(EX_SETUP, "short connect request");
	memcpy(&c->req, ev->param.conn.private_data, sizeof(c->req));
	rdma_ack_cm_event(ev);
	if (c->req.magic != MAGIC || !c->req.size || c->req.size > MAX_SIZE ||
	    !c->req.slots || c->req.slots > MAX_SLOTS || !c->req.ops || c->req.ops & ~7u)
		quit(EX_SETUP, "bad connect request");

	c->nrecv = c->req.slots + 2;
	c->nctrl = 2 * c->req.slots + 2;
	setup_qp(c, c->ep.id, c->nctrl, c->nrecv);
	c->data_stride = (c->req.size + 4095) & ~4095u;
	c->data = alloc_reg(c, c->data_stride * c->req.slots, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &c->data_mr);
	c->recv_size = sizeof(struct hdr) + (c->req.ops & OP_SEND ? c->req.size : 0);
	c->recv = alloc_reg(c, c->recv_size * c->nrecv, IBV_ACCESS_LOCAL_WRITE, &c->recv_mr);
	c->ctrl = alloc_reg(c, sizeof(struct hdr) * c->nctrl, 0, &c->ctrl_mr);
	for (i = 0; i < c->nrecv; i++)
		post_recv(c, i);
	c->rep = (struct cm_rep){ .magic = MAGIC, .rkey = c->data_mr->rkey,
				    .addr = (uintptr_t)c->data };
	cp.private_data = &c->rep;
	cp.private_data_len = sizeof(c->rep);
	if (rdma_accept(c->ep.id, &cp))
		quit(EX_SETUP, "rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(wait_cm(c, RDMA_CM_EVENT_ESTABLISHED));
	say("connected: ops %s%s%s, %u-byte messages, %u slots", c->req.ops & OP_WRITE ? "w" : "",
	    c->req.ops & OP_READ ? "r" : "", c->req.ops & OP_SEND ? "s" : "", c->req.size,
	    c->req.slots);
	fflush(stdout);

	/*
	 * Until FIN_ACK has completed: the client disconnects once it has
	 * read it, and its ACK proves the client's QP took it.
	 */
	c->last_progress = now_s();
	while (!sv.fin_done) {
		srv_flush(&sv);
		n = poll_some(c, wc, 16);
		for (k = 0; k < n; k++) {
			wc_check(&wc[k]);
			switch (WR_KIND(wc[k].wr_id)) {
			case K_RECV:
				srv_recv(&sv, &wc[k]);
				break;
			case K_CTRL:
				c->ctrl_busy[WR_IDX(wc[k].wr_id)] = 0;
				if (sv.fin_sent == (int)WR_IDX(wc[k].wr_id) + 1)
					sv.fin_done = 1;
				break;
			default:
				quit(EX_BAD, "unexpected completion kind %u", WR_KIND(wc[k].wr_id));
			}
		}
	}
	ok = !c->bad;
	if (rdma_disconnect(c->ep.id))
		quit(EX_BROKEN, "rdma_disconnect: %s", strerror(errno));
	rdma_ack_cm_event(wait_cm(c, RDMA_CM_EVENT_DISCONNECTED));
	say("%" PRIu64 " messages verified, %" PRIu64 " bad (client started %" PRIu64 ")",
	    c->verified, c->bad, sv.fin_count);
	say("%s", ok ? "all data verified" : "FAILED");
	return ok ? EX_OK : EX_BAD;
}

/* ---- client ---------------------------------------------------------------- */

struct client {
	struct ctx *c;
	struct slot slot[MAX_SLOTS];
	int ops[3], nops;
	uint64_t next, done, per_op[3], count;
	double t_end;
	const char *progress;
	double progress_at;
};

static uint8_t *cl_hdr(struct client *cl, unsigned int s)
{
	return cl->c->data + s * cl->c->data_stride;
}

static uint8_t *cl_buf(struct client *cl, unsigned int s)
{
	return cl_hdr(cl, s) + sizeof(struct hdr);
}

static void write_progress(struct client *cl, int force)
{
	char buf[32];
	int fd, len;

	if (!cl->progress || (!force && now_s() - cl->progress_at < 0.2))
		return;
	cl->progress_at = now_s();
	len = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", cl->done);
	fd = open(cl->progress, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, len) != len)
		fprintf(stderr, "%s: cannot write %s\n", e2e_name, cl->progress);
	close(fd);
}

static void cl_start(struct client *cl, unsigned int s)
{
	struct ctx *c = cl->c;
	struct slot *sl = &cl->slot[s];
	uint32_t len = c->req.size;
	struct hdr h = { .slot = s, .len = len };
	int op_i = cl->next % cl->nops;

	*sl = (struct slot){ .busy = 1, .op = cl->ops[op_i], .msg = cl->next++ };
	h.msg = sl->msg;
	cl->per_op[op_i]++;
	switch (sl->op) {
	case OP_WRITE:
		fill(cl_buf(cl, s), len, c->req.seed, sl->msg);
		post_send(c, WR(K_WRITE, s), IBV_WR_RDMA_WRITE, cl_buf(cl, s), len,
			  c->data_mr->lkey, c->rep.addr + (uint64_t)s * ((len + 4095) & ~4095u));
		h.type = M_VERIFY;
		send_ctrl(c, s, &h);
		sl->wrs = 2;
		sl->waiting = 1;
		break;
	case OP_SEND:
		h.type = M_DATA;
		h.magic = MAGIC;
		memcpy(cl_hdr(cl, s), &h, sizeof(h));
		fill(cl_buf(cl, s), len, c->req.seed, sl->msg);
		post_send(c, WR(K_DATA, s), IBV_WR_SEND, cl_hdr(cl, s), sizeof(h) + len,
			  c->data_mr->lkey, 0);
		sl->wrs = 1;
		sl->waiting = 1;
		break;
	case OP_READ:
		memset(cl_buf(cl, s), 0xa5, len);
		h.type = M_FILL;
		send_ctrl(c, s, &h);
		sl->wrs = 1;
		sl->waiting = 1;
		break;
	}
}

static void cl_maybe_free(struct client *cl, unsigned int s)
{
	struct slot *sl = &cl->slot[s];

	if (sl->busy && !sl->wrs && !sl->waiting && !sl->reading &&
	    !cl->c->ctrl_busy[s]) {
		sl->busy = 0;
		cl->done++;
	}
}

static void cl_answer(struct client *cl, const struct ibv_wc *wc)
{
	struct ctx *c = cl->c;
	const uint8_t *p = c->recv + WR_IDX(wc->wr_id) * c->recv_size;
	struct slot *sl;
	struct hdr h;
	uint32_t len = c->req.size;

	if (wc->opcode != IBV_WC_RECV || wc->byte_len != sizeof(h))
		quit(EX_BAD, "unexpected receive: opcode %d, %u bytes", wc->opcode, wc->byte_len);
	memcpy(&h, p, sizeof(h));
	post_recv(c, WR_IDX(wc->wr_id));
	if (h.magic != MAGIC)
		quit(EX_BAD, "bad answer: magic %#x", h.magic);
	if (h.type == M_FIN_ACK) {
		cl->count = h.count;
		c->bad += h.bad;
		c->verified = h.count;
		return;
	}
	if (h.slot >= c->req.slots || !cl->slot[h.slot].busy || !cl->slot[h.slot].waiting ||
	    cl->slot[h.slot].msg != h.msg)
		quit(EX_BAD, "answer type %u for slot %u message %" PRIu64 " not expected",
		     h.type, h.slot, h.msg);
	sl = &cl->slot[h.slot];
	sl->waiting = 0;
	if (h.type == M_RESULT && (sl->op == OP_WRITE || sl->op == OP_SEND)) {
		if (!h.ok) {
			fprintf(stderr, "%s: %s #%" PRIu64 " arrived wrong (server's check)\n",
				e2e_name, op_name(sl->op), sl->msg);
			c->bad++;
		}
	} else if (h.type == M_READY && sl->op == OP_READ) {
		post_send(c, WR(K_READ, h.slot), IBV_WR_RDMA_READ, cl_buf(cl, h.slot), len,
			  c->data_mr->lkey,
			  c->rep.addr + (uint64_t)h.slot * ((len + 4095) & ~4095u));
		sl->reading = 1;
	} else {
		quit(EX_BAD, "answer type %u for a %s", h.type, op_name(sl->op));
	}
	cl_maybe_free(cl, h.slot);
}

static void cl_completion(struct client *cl, const struct ibv_wc *wc)
{
	struct ctx *c = cl->c;
	unsigned int s = WR_IDX(wc->wr_id);
	struct slot *sl = &cl->slot[s < MAX_SLOTS ? s : 0];
	uint32_t at;

	wc_check(wc);
	switch (WR_KIND(wc->wr_id)) {
	case K_RECV:
		cl_answer(cl, wc);
		return;
	case K_CTRL:
		c->ctrl_busy[s] = 0;
		if (s == c->nctrl - 1)
			return;	/* FIN */
		if (wc->opcode != IBV_WC_SEND)
			quit(EX_BAD, "control SEND completed as opcode %d", wc->opcode);
		sl->wrs--;
		break;
	case K_WRITE:
		if (wc->opcode != IBV_WC_RDMA_WRITE)
			quit(EX_BAD, "WRITE completed as opcode %d", wc->opcode);
		sl->wrs--;
		break;
	case K_DATA:
		if (wc->opcode != IBV_WC_SEND)
			quit(EX_BAD, "SEND completed as opcode %d", wc->opcode);
		sl->wrs--;
		break;
	case K_READ:
		if (wc->opcode != IBV_WC_RDMA_READ || wc->byte_len != c->req.size)
			quit(EX_BAD, "READ completed as opcode %d, %u bytes", wc->opcode,
			     wc->byte_len);
		at = first_bad(cl_buf(cl, s), c->req.size, c->req.seed, sl->msg);
		if (at != c->req.size) {
			fprintf(stderr, "%s: READ #%" PRIu64 " (slot %u): first bad byte %u of %u\n",
				e2e_name, sl->msg, s, at, c->req.size);
			c->bad++;
		}
		sl->reading = 0;
		break;
	default:
		quit(EX_BAD, "unexpected completion kind %u", WR_KIND(wc->wr_id));
	}
	cl_maybe_free(cl, s);
}

static int cl_want_more(struct client *cl)
{
	if (stop_req)
		return 0;
	if (cl->t_end > 0 && now_s() < cl->t_end)
		return 1;
	return cl->next < cl->count;
}

static int client(struct ctx *c, struct rdma_addrinfo *ai, struct client *cl)
{
	struct rdma_conn_param cp = { .responder_resources = 16, .initiator_depth = 16,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct ibv_wc wc[16];
	struct hdr fin = { .type = M_FIN };
	unsigned int s, busy;
	uint64_t want;
	char ops[96];
	double t0, t, t_addr, t_route;
	int k, n, ok, len;

	e2e_name = "dxfer client";
	say("pid %d", (int)getpid());
	fflush(stdout);
	c->req.seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 20;
	nonblock(c->ep.ech->fd);
	t0 = now_s();
	if (rdma_create_id(c->ep.ech, &c->ep.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->ep.id, ai->ai_src_addr, ai->ai_dst_addr, 5000))
		quit(EX_SETUP, "rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(wait_cm(c, RDMA_CM_EVENT_ADDR_RESOLVED));
	t_addr = now_s();
	if (rdma_resolve_route(c->ep.id, 5000))
		quit(EX_SETUP, "rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(wait_cm(c, RDMA_CM_EVENT_ROUTE_RESOLVED));
	t_route = now_s();

	c->nrecv = c->req.slots + 2;
	c->nctrl = c->req.slots + 1;
	setup_qp(c, c->ep.id, 2 * c->req.slots + 2, c->nrecv);
	c->data_stride = (sizeof(struct hdr) + c->req.size + 4095) & ~(size_t)4095;
	c->data = alloc_reg(c, c->data_stride * c->req.slots, IBV_ACCESS_LOCAL_WRITE,
			    &c->data_mr);
	c->recv_size = sizeof(struct hdr);
	c->recv = alloc_reg(c, c->recv_size * c->nrecv, IBV_ACCESS_LOCAL_WRITE, &c->recv_mr);
	c->ctrl = alloc_reg(c, sizeof(struct hdr) * c->nctrl, 0, &c->ctrl_mr);
	for (s = 0; s < c->nrecv; s++)
		post_recv(c, s);

	c->req.magic = MAGIC;
	cp.private_data = &c->req;
	cp.private_data_len = sizeof(c->req);
	if (rdma_connect(c->ep.id, &cp))
		quit(EX_SETUP, "rdma_connect: %s", strerror(errno));
	ev = wait_cm(c, RDMA_CM_EVENT_ESTABLISHED);
	if (ev->param.conn.private_data_len < sizeof(c->rep))
		quit(EX_SETUP, "short connect reply");
	memcpy(&c->rep, ev->param.conn.private_data, sizeof(c->rep));
	rdma_ack_cm_event(ev);
	if (c->rep.magic != MAGIC)
		quit(EX_SETUP, "bad connect reply");
	t = now_s();
	say("connected: %u-byte messages, %u slots, %s (address %.1f s, route %.1f s, "
	    "connection %.1f s)", c->req.size, c->req.slots,
	    cl->t_end > 0 ? "timed run" : "counted run", t_addr - t0, t_route - t_addr,
	    t - t_route);
	fflush(stdout);

	t0 = c->last_progress = now_s();
	if (cl->t_end > 0)
		cl->t_end += t0;
	for (;;) {
		busy = 0;
		for (s = 0; s < c->req.slots; s++) {
			if (!cl->slot[s].busy && cl_want_more(cl))
				cl_start(cl, s);
			busy += cl->slot[s].busy;
		}
		if (!busy)
			break;
		n = poll_some(c, wc, 16);
		for (k = 0; k < n; k++)
			cl_completion(cl, &wc[k]);
		write_progress(cl, 0);
	}
	write_progress(cl, 1);
	t = now_s() - t0;
	fin.count = cl->next;
	fin.slot = c->nctrl - 1;
	cl->count = UINT64_MAX;
	send_ctrl(c, c->nctrl - 1, &fin);
	while (cl->count == UINT64_MAX) {
		n = poll_some(c, wc, 16);
		for (k = 0; k < n; k++)
			cl_completion(cl, &wc[k]);
	}
	/* the server verified every WRITE and SEND; READs were checked here */
	want = 0;
	for (k = 0; k < cl->nops; k++)
		if (cl->ops[k] != OP_READ)
			want += cl->per_op[k];
	ok = !c->bad && cl->count == want && cl->done == cl->next;
	len = 0;
	for (k = 0; k < cl->nops; k++)
		len += snprintf(ops + len, sizeof(ops) - len, "%s%s %" PRIu64, k ? ", " : "",
				op_name(cl->ops[k]), cl->per_op[k]);
	say("%" PRIu64 " messages of %u bytes in %.1f s (%.2f MB/s): %s; the server verified %"
	    PRIu64 " WRITE/SEND (of %" PRIu64 "), %" PRIu64 " bad in all", cl->done, c->req.size,
	    t, cl->done * (double)c->req.size / t / 1e6, ops, cl->count, want, c->bad);
	/* the server disconnects once its FIN_ACK completed */
	rdma_ack_cm_event(wait_cm(c, RDMA_CM_EVENT_DISCONNECTED));
	rdma_disconnect(c->ep.id);
	say("%s", ok ? "all data verified" : "FAILED");
	return ok ? EX_OK : EX_BAD;
}

static uint32_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	return *end || v > MAX_SIZE ? 0 : v;
}

int main(int argc, char **argv)
{
	struct ctx c = { .watchdog = 60, .ack_timeout = 14 };
	struct client cl = { .c = &c };
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	const char *addr = NULL, *port = "7480", *ops = "wrs", *o;
	unsigned long n = 4;
	double secs = 0;
	int opt, srv = -1;

	e2e_name = "dxfer";

	c.req.size = 64 << 10;
	c.req.slots = 2;
	while ((opt = getopt(argc, argv, "sca:p:o:S:n:T:w:W:P:t:")) != -1) {
		switch (opt) {
		case 's': srv = 1; break;
		case 'c': srv = 0; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'o': ops = optarg; break;
		case 'S': c.req.size = parse_size(optarg); break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'T': secs = strtod(optarg, NULL); break;
		case 'w': c.req.slots = strtoul(optarg, NULL, 0); break;
		case 'W': c.watchdog = atoi(optarg); break;
		case 'P': cl.progress = optarg; break;
		case 't': c.ack_timeout = atoi(optarg); break;
		default: srv = -1; addr = NULL; break;
		}
	}
	for (o = ops; *o && cl.nops < 3; o++) {
		int op = *o == 'w' ? OP_WRITE : *o == 'r' ? OP_READ : *o == 's' ? OP_SEND : 0;

		if (!op || c.req.ops & op) {
			cl.nops = 0;
			break;
		}
		c.req.ops |= op;
		cl.ops[cl.nops++] = op;
	}
	if (srv < 0 || !addr || !c.req.size || !c.req.slots || c.req.slots > MAX_SLOTS ||
	    !cl.nops || *o || c.watchdog <= 0 || secs < 0) {
		fprintf(stderr, "usage: dxfer -s|-c -a ADDR [-p PORT] [-o wrs] [-S SIZE] [-n MSGS] "
			"[-T SECS] [-w SLOTS] [-W SECS] [-P FILE] [-t ACKTO]\n");
		return EX_SETUP;
	}
	cl.count = n * cl.nops;
	cl.t_end = secs;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR1, on_usr1);
	if (srv)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		quit(EX_SETUP, "rdma_getaddrinfo(%s): %s", addr, strerror(errno));
	c.ep.ech = rdma_create_event_channel();
	if (!c.ep.ech)
		quit(EX_SETUP, "rdma_create_event_channel: %s", strerror(errno));
	return srv ? server(&c, ai) : client(&c, ai, &cl);
}
