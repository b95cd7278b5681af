// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rcstream: push a large RDMA WRITE stream interleaved with SEND messages
 * over one RC connection (RDMA CM), then prove at both ends that every byte
 * arrived: the receiver regenerates the expected pattern and compares it
 * byte for byte, and both ends exchange 64-bit checksums of the target
 * buffer and of the SEND payloads in the final SEND and its reply.
 *
 *   rcstream -s -a ADDR [-p PORT]                       receiver
 *   rcstream -c -a ADDR [-p PORT] [-m MiB] [-k KiB] [-e MSGS] [-t ACKTO]
 *
 * -m  size of the WRITE stream in MiB (default 256)
 * -k  size of one RDMA WRITE in KiB (default 1024)
 * -e  number of SEND messages interleaved with the writes (default 64)
 * -t  local ACK timeout exponent set on the QP (default 15: ~134 ms)
 * Exit status 0 only when all data and checksums match and no completion
 * failed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
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

#define RM_MAX		4096
#define RECV_DEPTH	32
#define SEND_DEPTH	32
#define WRITE_WINDOW	8
#define MAGIC		0x72637374u	/* "rcst" */

enum { RM_DATA = 1, RM_FIN = 2, RM_RESULT = 3 };

struct conn_req {		/* client -> server, CM private data */
	uint32_t magic;
	uint32_t msgs;
	uint64_t size;
	uint64_t seed;
};

struct msg_hdr {
	uint32_t type;
	uint32_t seq;
	uint32_t len;		/* payload bytes after the header */
	uint32_t ok;		/* RM_RESULT: receiver's verdict */
	uint64_t buf_hash;	/* RM_FIN/RESULT */
	uint64_t msg_hash;
	uint64_t bytes;
};

struct ctx {
	struct cm_ep ep;
	uint8_t *buf, *rbuf, *sbuf;
	struct ibv_mr *buf_mr, *rbuf_mr, *sbuf_mr;
	uint64_t size, seed;
	uint32_t msgs, chunk;
	int ack_timeout;
	int send_out, write_out, errors;
	unsigned int sbuf_next;
};


/* wr_id of the receiver's result SEND; receives use their slot number. */
#define RESULT_WR_ID	UINT64_MAX

static void bail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	e2e_vwarn(fmt, ap);
	va_end(ap);
	exit(1);
}

/* splitmix64: the expected contents of 8-byte word i of the stream */
static uint64_t pattern(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill(uint8_t *p, uint64_t len, uint64_t seed)
{
	uint64_t i;

	for (i = 0; i < len / 8; i++)
		memcpy(p + i * 8, &(uint64_t){ pattern(seed, i) }, 8);
}

static uint64_t hash(uint64_t h, const uint8_t *p, uint64_t len)
{
	uint64_t i, w;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = ((h ^ w) << 29 | (h ^ w) >> 35) * 0x9e3779b97f4a7c15ull;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The payload of SEND message seq: its length and contents are derived
 * from the seed, so both sides know them. */
static uint32_t msg_len(uint64_t seed, uint32_t seq)
{
	return 1 + pattern(seed ^ 0x5555, seq) % (RM_MAX - sizeof(struct msg_hdr));
}

static void msg_fill(uint8_t *p, uint64_t seed, uint32_t seq)
{
	uint32_t i, len = msg_len(seed, seq);

	for (i = 0; i < len; i++)
		p[i] = pattern(seed ^ seq, i / 8) >> (8 * (i % 8));
}

static struct rdma_cm_event *get_event(struct ctx *c, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(c->ep.ech, &ev))
		bail("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		bail("CM event %s (status %d), expected %s", rdma_event_str(ev->event),
		    ev->status, rdma_event_str(want));
	return ev;
}

/*
 * Wait up to DISC_WAIT_S for RDMA_CM_EVENT_DISCONNECTED.  ib_cm retries a
 * lost DREQ every few seconds for as long as the cm_id lives, so both ends
 * keep theirs until the event comes.
 */
#define DISC_WAIT_S	90
static int wait_disconnected(struct ctx *c)
{
	struct pollfd pfd = { .fd = c->ep.ech->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ret;

	ret = poll(&pfd, 1, DISC_WAIT_S * 1000);
	if (ret <= 0) {
		fprintf(stderr, "%s: no DISCONNECTED event within %d s\n", e2e_name, DISC_WAIT_S);
		return -1;
	}
	if (rdma_get_cm_event(c->ep.ech, &ev)) {
		fprintf(stderr, "%s: rdma_get_cm_event: %s\n", e2e_name, strerror(errno));
		return -1;
	}
	ret = ev->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : -1;
	if (ret)
		fprintf(stderr, "%s: CM event %s at the end\n", e2e_name, rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	return ret;
}

static void post_recv(struct ctx *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->rbuf + slot * RM_MAX),
		.length = RM_MAX, .lkey = c->rbuf_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->ep.qp, &wr, &bad))
		bail("ibv_post_recv: %s", strerror(errno));
}

static void setup_qp(struct ctx *c, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SEND_DEPTH + WRITE_WINDOW + 1,
			 .max_recv_wr = RECV_DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	unsigned int i;
	uint8_t to = c->ack_timeout;

	c->ep.pd = ibv_alloc_pd(id->verbs);
	c->ep.cch = ibv_create_comp_channel(id->verbs);
	if (!c->ep.pd || !c->ep.cch)
		bail("ibv_alloc_pd/create_comp_channel: %s", strerror(errno));
	c->ep.cq = ibv_create_cq(id->verbs, 2 * (SEND_DEPTH + RECV_DEPTH + WRITE_WINDOW),
			      NULL, c->ep.cch, 0);
	if (!c->ep.cq || ibv_req_notify_cq(c->ep.cq, 0))
		bail("ibv_create_cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = c->ep.cq;
	if (rdma_create_qp(id, c->ep.pd, &qa))
		bail("rdma_create_qp: %s", strerror(errno));
	c->ep.qp = id->qp;
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &to, sizeof(to)))
		fprintf(stderr, "%s: cannot set the ACK timeout: %s\n", e2e_name, strerror(errno));
	c->rbuf = calloc(RECV_DEPTH, RM_MAX);
	c->sbuf = calloc(SEND_DEPTH, RM_MAX);
	if (!c->rbuf || !c->sbuf)
		bail("out of memory");
	c->rbuf_mr = ibv_reg_mr(c->ep.pd, c->rbuf, RECV_DEPTH * RM_MAX, IBV_ACCESS_LOCAL_WRITE);
	c->sbuf_mr = ibv_reg_mr(c->ep.pd, c->sbuf, SEND_DEPTH * RM_MAX, 0);
	if (!c->rbuf_mr || !c->sbuf_mr)
		bail("ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < RECV_DEPTH; i++)
		post_recv(c, i);
}

/* Block until at least one completion, return how many were polled. */
static int wait_cq(struct ctx *c, struct ibv_wc *wc, int max)
{
	struct ibv_cq *cq;
	void *cq_ctx;
	int n;

	for (;;) {
		n = ibv_poll_cq(c->ep.cq, max, wc);
		if (n < 0)
			bail("ibv_poll_cq failed");
		if (n > 0)
			return n;
		if (ibv_get_cq_event(c->ep.cch, &cq, &cq_ctx))
			bail("ibv_get_cq_event: %s", strerror(errno));
		ibv_ack_cq_events(cq, 1);
		if (ibv_req_notify_cq(cq, 0))
			bail("ibv_req_notify_cq: %s", strerror(errno));
	}
}

static void wc_check(const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS)
		bail("completion error: %s (status %d, opcode %d, wr_id %" PRIu64 ", vendor_err 0x%x)",
		    ibv_wc_status_str(wc->status), wc->status, wc->opcode, wc->wr_id,
		    wc->vendor_err);
}

/* ---- receiver ------------------------------------------------------------- */

struct rx_state {
	uint32_t next_seq;
	uint64_t msg_hash;
	int bad_msgs;
	int done;
	struct msg_hdr fin;
};

static void rx_msg(struct ctx *c, struct rx_state *st, const struct ibv_wc *wc)
{
	const uint8_t *p = c->rbuf + wc->wr_id * RM_MAX;
	uint8_t want[RM_MAX];
	struct msg_hdr h;

	if (wc->opcode != IBV_WC_RECV || wc->byte_len < sizeof(h))
		bail("unexpected receive completion: opcode %d, %u bytes", wc->opcode, wc->byte_len);
	memcpy(&h, p, sizeof(h));
	if (h.type == RM_FIN) {
		if (wc->byte_len != sizeof(h))
			bail("FIN of %u bytes", wc->byte_len);
		st->fin = h;
		st->done = 1;
		return;
	}
	if (h.type != RM_DATA || h.seq != st->next_seq || h.len != msg_len(c->seed, h.seq) ||
	    wc->byte_len != sizeof(h) + h.len)
		bail("bad SEND #%u: type %u seq %u len %u byte_len %u", st->next_seq, h.type,
		    h.seq, h.len, wc->byte_len);
	msg_fill(want, c->seed, h.seq);
	if (memcmp(want, p + sizeof(h), h.len)) {
		fprintf(stderr, "%s: SEND #%u payload differs\n", e2e_name, h.seq);
		st->bad_msgs++;
	}
	st->msg_hash = hash(st->msg_hash, p + sizeof(h), h.len);
	st->next_seq++;
	post_recv(c, wc->wr_id);
}

/* The first byte of buf that differs from the expected pattern, or size. */
static uint64_t first_bad(struct ctx *c)
{
	uint64_t i, w;

	for (i = 0; i < c->size / 8; i++) {
		memcpy(&w, c->buf + i * 8, 8);
		if (w != pattern(c->seed, i))
			return i * 8;
	}
	return c->size;
}

static int receiver(struct ctx *c, struct rdma_addrinfo *ai)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct conn_req req;
	struct cm_rep rep;
	struct rx_state st = { 0 };
	struct ibv_wc wc[16];
	struct msg_hdr *res;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	uint64_t bad_at, buf_hash;
	int i, n, ok, done;

	e2e_name = "rcstream receiver";
	if (rdma_create_id(c->ep.ech, &c->ep.listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->ep.listen_id, ai->ai_src_addr ? ai->ai_src_addr : ai->ai_dst_addr) ||
	    rdma_listen(c->ep.listen_id, 1))
		bail("listen: %s", strerror(errno));
	ev = get_event(c, RDMA_CM_EVENT_CONNECT_REQUEST);
	c->ep.id = ev->id;
	if (ev->param.conn.private_data_len < sizeof(req))
		bail("short connect request");
	memcpy(&req, ev->param.conn.private_data, sizeof(req));
	rdma_ack_cm_event(ev);
	if (req.magic != MAGIC || !req.size || req.size % 8 || req.size > (1ull << 34))
		bail("bad connect request");
	c->size = req.size;
	c->seed = req.seed;
	c->msgs = req.msgs;
	setup_qp(c, c->ep.id);
	c->buf = aligned_alloc(4096, c->size);
	if (!c->buf)
		bail("cannot allocate %" PRIu64 " bytes", c->size);
	memset(c->buf, 0, c->size);
	c->buf_mr = ibv_reg_mr(c->ep.pd, c->buf, c->size,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!c->buf_mr)
		bail("ibv_reg_mr(%" PRIu64 "): %s", c->size, strerror(errno));
	rep = (struct cm_rep){ .magic = MAGIC, .rkey = c->buf_mr->rkey,
				 .addr = (uintptr_t)c->buf };
	cp.private_data = &rep;
	cp.private_data_len = sizeof(rep);
	if (rdma_accept(c->ep.id, &cp))
		bail("rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(get_event(c, RDMA_CM_EVENT_ESTABLISHED));
	printf("%s: connected, expecting %" PRIu64 " bytes and %u SENDs\n", e2e_name, c->size, c->msgs);
	fflush(stdout);

	while (!st.done) {
		n = wait_cq(c, wc, 16);
		for (i = 0; i < n; i++) {
			wc_check(&wc[i]);
			if (wc[i].opcode & IBV_WC_RECV)
				rx_msg(c, &st, &wc[i]);
		}
	}
	/* RC ordering: every WRITE before the FIN is now in place. */
	bad_at = first_bad(c);
	buf_hash = hash(0, c->buf, c->size);
	ok = bad_at == c->size && !st.bad_msgs && st.next_seq == c->msgs &&
	     st.fin.buf_hash == buf_hash && st.fin.msg_hash == st.msg_hash &&
	     st.fin.bytes == c->size;
	printf("%s: buffer %" PRIu64 " bytes hash %016" PRIx64 " (sender %016" PRIx64 ")%s, "
	       "%u SENDs hash %016" PRIx64 " (sender %016" PRIx64 "), %d bad\n",
	       e2e_name, c->size, buf_hash, st.fin.buf_hash,
	       bad_at == c->size ? "" : " MISMATCH", st.next_seq, st.msg_hash,
	       st.fin.msg_hash, st.bad_msgs);
	if (bad_at != c->size)
		printf("%s: first bad byte at offset %" PRIu64 "\n", e2e_name, bad_at);

	res = (struct msg_hdr *)c->sbuf;
	*res = (struct msg_hdr){ .type = RM_RESULT, .ok = ok, .buf_hash = buf_hash,
				 .msg_hash = st.msg_hash, .bytes = c->size };
	sge = (struct ibv_sge){ .addr = (uintptr_t)res, .length = sizeof(*res),
				.lkey = c->sbuf_mr->lkey };
	wr.wr_id = RESULT_WR_ID;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(c->ep.qp, &wr, &bad))
		bail("ibv_post_send(result): %s", strerror(errno));
	/*
	 * The receiver ends the connection, and only once the result SEND has
	 * completed: its ACK proves the sender's QP took it.  The sender keeps
	 * its QP in RTS until our DREQ arrives, so the result may not fail,
	 * not even with a flush.
	 */
	for (done = 0; !done;) {
		n = wait_cq(c, wc, 16);
		for (i = 0; i < n; i++) {
			wc_check(&wc[i]);
			if (wc[i].wr_id == RESULT_WR_ID)
				done = 1;
		}
	}
	if (rdma_disconnect(c->ep.id))
		bail("rdma_disconnect: %s", strerror(errno));
	if (wait_disconnected(c))
		ok = 0;
	printf("%s: %s\n", e2e_name, ok ? "all data verified" : "FAILED");
	return ok ? 0 : 1;
}

/* ---- sender --------------------------------------------------------------- */

static void reap(struct ctx *c, struct ibv_wc *wc, int n, struct msg_hdr *result, int *got)
{
	int i;

	for (i = 0; i < n; i++) {
		if (*got && wc[i].status != IBV_WC_SUCCESS)
			continue;	/* after the result: see sender() */
		wc_check(&wc[i]);
		switch (wc[i].opcode) {
		case IBV_WC_RDMA_WRITE:
			c->write_out--;
			break;
		case IBV_WC_SEND:
			c->send_out--;
			break;
		case IBV_WC_RECV:
			if (wc[i].byte_len != sizeof(*result))
				bail("result of %u bytes", wc[i].byte_len);
			memcpy(result, c->rbuf + wc[i].wr_id * RM_MAX, sizeof(*result));
			*got = 1;
			break;
		default:
			bail("unexpected completion opcode %d", wc[i].opcode);
		}
	}
}

static void post_msg(struct ctx *c, const struct msg_hdr *h, const uint8_t *payload)
{
	uint8_t *p = c->sbuf + (c->sbuf_next++ % SEND_DEPTH) * RM_MAX;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = sizeof(*h) + h->len,
			       .lkey = c->sbuf_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memcpy(p, h, sizeof(*h));
	if (h->len)
		memcpy(p + sizeof(*h), payload, h->len);
	if (ibv_post_send(c->ep.qp, &wr, &bad))
		bail("ibv_post_send(SEND): %s", strerror(errno));
	c->send_out++;
}

static void post_write(struct ctx *c, uint64_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + off), .length = len,
			       .lkey = c->buf_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr + off;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(c->ep.qp, &wr, &bad))
		bail("ibv_post_send(WRITE): %s", strerror(errno));
	c->write_out++;
}

static int sender(struct ctx *c, struct rdma_addrinfo *ai)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct conn_req req = { .magic = MAGIC };
	struct cm_rep rep;
	struct rdma_cm_event *ev;
	struct ibv_wc wc[16];
	struct msg_hdr h, result;
	uint8_t payload[RM_MAX];
	uint64_t off = 0, buf_hash, msg_hash = 0, every;
	uint32_t seq = 0, len;
	double t0, t;
	int got = 0, ok;

	e2e_name = "rcstream sender";
	c->seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	if (rdma_create_id(c->ep.ech, &c->ep.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->ep.id, ai->ai_src_addr, ai->ai_dst_addr, 5000))
		bail("rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(get_event(c, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(c->ep.id, 5000))
		bail("rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(get_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED));
	setup_qp(c, c->ep.id);
	c->buf = aligned_alloc(4096, c->size);
	if (!c->buf)
		bail("cannot allocate %" PRIu64 " bytes", c->size);
	fill(c->buf, c->size, c->seed);
	buf_hash = hash(0, c->buf, c->size);
	c->buf_mr = ibv_reg_mr(c->ep.pd, c->buf, c->size, 0);
	if (!c->buf_mr)
		bail("ibv_reg_mr(%" PRIu64 "): %s", c->size, strerror(errno));

	req.size = c->size;
	req.seed = c->seed;
	req.msgs = c->msgs;
	cp.private_data = &req;
	cp.private_data_len = sizeof(req);
	if (rdma_connect(c->ep.id, &cp))
		bail("rdma_connect: %s", strerror(errno));
	ev = get_event(c, RDMA_CM_EVENT_ESTABLISHED);
	if (ev->param.conn.private_data_len < sizeof(rep))
		bail("short connect reply");
	memcpy(&rep, ev->param.conn.private_data, sizeof(rep));
	rdma_ack_cm_event(ev);
	if (rep.magic != MAGIC)
		bail("bad connect reply");
	printf("%s: connected, writing %" PRIu64 " bytes in %u-byte WRITEs and %u SENDs\n",
	       e2e_name, c->size, c->chunk, c->msgs);
	fflush(stdout);

	every = c->msgs ? (c->size + c->msgs - 1) / c->msgs : ~0ull;
	t0 = now_s();
	while (off < c->size || seq < c->msgs) {
		while (c->write_out < WRITE_WINDOW && off < c->size &&
		       (seq >= c->msgs || off < (seq + 1) * every)) {
			len = c->size - off < c->chunk ? c->size - off : c->chunk;
			post_write(c, off, len, rep.addr, rep.rkey);
			off += len;
		}
		while (seq < c->msgs && c->send_out < SEND_DEPTH &&
		       (off >= c->size || off >= (seq + 1) * every)) {
			h = (struct msg_hdr){ .type = RM_DATA, .seq = seq,
					      .len = msg_len(c->seed, seq) };
			msg_fill(payload, c->seed, seq);
			msg_hash = hash(msg_hash, payload, h.len);
			post_msg(c, &h, payload);
			seq++;
		}
		if (off < c->size || seq < c->msgs)
			reap(c, wc, wait_cq(c, wc, 16), &result, &got);
	}
	/*
	 * The FIN needs a send slot of its own: with SEND_DEPTH SENDs still
	 * unacknowledged (a lossy link), the next slot is the oldest one's,
	 * whose packets may yet be resent from it.
	 */
	while (c->send_out >= SEND_DEPTH)
		reap(c, wc, wait_cq(c, wc, 16), &result, &got);
	h = (struct msg_hdr){ .type = RM_FIN, .buf_hash = buf_hash, .msg_hash = msg_hash,
			      .bytes = c->size };
	post_msg(c, &h, NULL);
	/*
	 * The receiver answers the FIN only after taking it, and RC keeps
	 * order: once the result is in, every WRITE and SEND before the FIN
	 * has been executed there.  Their completions are not waited for (a
	 * lost last ACK could outlive the receiver's QP).  The receiver
	 * disconnects once its result SEND is acknowledged; until then our
	 * QP stays in RTS to acknowledge it.
	 */
	while (!got)
		reap(c, wc, wait_cq(c, wc, 16), &result, &got);
	t = now_s() - t0;
	ok = result.type == RM_RESULT && result.ok && result.buf_hash == buf_hash &&
	     result.msg_hash == msg_hash && result.bytes == c->size;
	printf("%s: %" PRIu64 " bytes + %u SENDs in %.1f s (%.2f MB/s); buffer hash %016" PRIx64
	       " (receiver %016" PRIx64 "), SEND hash %016" PRIx64 " (receiver %016" PRIx64
	       "), receiver verdict %s\n", e2e_name, c->size, c->msgs, t, c->size / t / 1e6,
	       buf_hash, result.buf_hash, msg_hash, result.msg_hash,
	       result.ok ? "ok" : "FAILED");
	/* Wait for the receiver's DREQ, then answer it. */
	if (wait_disconnected(c))
		ok = 0;
	rdma_disconnect(c->ep.id);
	printf("%s: %s\n", e2e_name, ok ? "all data verified" : "FAILED");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ctx c = { .size = 256ull << 20, .msgs = 64, .chunk = 1 << 20, .ack_timeout = 15 };
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	const char *addr = NULL, *port = "7479";
	int opt, server = -1;

	while ((opt = getopt(argc, argv, "sca:p:m:k:e:t:")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': server = 0; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'm': c.size = strtoull(optarg, NULL, 0) << 20; break;
		case 'k': c.chunk = strtoul(optarg, NULL, 0) << 10; break;
		case 'e': c.msgs = strtoul(optarg, NULL, 0); break;
		case 't': c.ack_timeout = atoi(optarg); break;
		default: server = -1; addr = NULL; break;
		}
	}
	if (server < 0 || !addr || !c.size || !c.chunk || c.chunk > (1u << 30)) {
		fprintf(stderr, "usage: rcstream -s|-c -a ADDR [-p PORT] [-m MiB] [-k KiB] [-e MSGS] [-t ACKTO]\n");
		return 2;
	}
	e2e_name = "rcstream";
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		bail("rdma_getaddrinfo(%s): %s", addr, strerror(errno));
	c.ep.ech = rdma_create_event_channel();
	if (!c.ep.ech)
		bail("rdma_create_event_channel: %s", strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);
	return server ? receiver(&c, ai) : sender(&c, ai);
}
