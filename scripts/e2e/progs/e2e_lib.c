// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Helpers shared by the C programs here; see e2e_lib.h. */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "e2e_lib.h"

const char *e2e_name = "e2e";
const char *side;
int failures;
int passes;

/*
 * "ok - " or "not ok - ", the head (e2e_name, side: those set), @name and,
 * if @fmt is set, ": " and its text: one line, flushed at once, so that the
 * lines of a forked pair of processes stay in the order they were made.
 */
void tap_line(bool good, const char *name, const char *fmt, va_list ap)
{
	printf("%s - ", good ? "ok" : "not ok");
	if (e2e_name)
		printf("%s: ", e2e_name);
	if (side)
		printf("%s: ", side);
	printf("%s", name);
	if (fmt) {
		printf(": ");
		vprintf(fmt, ap);
	}
	printf("\n");
	fflush(stdout);
}

/*
 * One TAP line for case @name: "ok", or "not ok" with @fmt's explanation
 * (counted in failures).
 */
void tap(bool good, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_line(good, name, good ? NULL : fmt, ap);
	va_end(ap);
	if (good)
		passes++;
	else
		failures++;
}

/* An "ok" line for @name that does not count in passes. */
void pass(const char *name)
{
	tap(true, name, "%s", "");
	passes--;
}

/* A "not ok" line for @what with errno's text, and exit 1. */
void die(const char *what)
{
	int err = errno;

	tap(false, what, "%s (errno %d)", strerror(err), err);
	exit(1);
}

/* "NAME: " and @fmt's message on a line of stderr. */
void e2e_vwarn(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", e2e_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* CLOCK_MONOTONIC in seconds. */
double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC in milliseconds. */
long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The device named @name opened, or NULL (errno set by the open, if any). */
struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/*
 * Poll @cq for @n completions into @wc, for @secs seconds at the most
 * (a millisecond's sleep whenever none is there); how many came, or the
 * poll's error.
 */
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int secs)
{
	time_t end = time(NULL) + secs;
	int got = 0, r;

	while (got < n && time(NULL) < end) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (!r)
			usleep(1000);
	}
	return got;
}

/* open_dev(@name), or die(). */
struct ibv_context *open_dev_or_die(const char *name)
{
	struct ibv_context *ctx = open_dev(name);

	if (!ctx)
		die("ibv_open_device");
	return ctx;
}

/* All @len bytes of @buf to @fd (EINTR retried); 0 or -1. */
int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Exactly @len bytes from @fd into @buf; -1 (ECONNRESET at EOF) if not. */
int read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (!n)
				errno = ECONNRESET;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A 32-bit token to the peer; die(@what) if it cannot be sent. */
void send_tok(int fd, uint32_t tok, const char *what)
{
	if (write_all(fd, &tok, sizeof(tok)))
		die(what);
}

/* A 32-bit token from the peer; die(@what) if none comes. */
uint32_t read_tok(int fd, const char *what)
{
	uint32_t tok;

	if (read_all(fd, &tok, sizeof(tok)))
		die(what);
	return tok;
}

/* Reads and writes on @fd give up after @secs seconds. */
void set_timeouts(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A socket listening on TCP @port (any family, SO_REUSEADDR); dies if none. */
int tcp_listen(const char *port)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE,
				  .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *res, *t;
	int fd = -1, one = 1;

	if (getaddrinfo(NULL, port, &hints, &res))
		die("getaddrinfo");
	for (t = res; t; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, t->ai_addr, t->ai_addrlen) && !listen(fd, 1))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("listen");
	return fd;
}

/*
 * A TCP connection to @addr:@port, tried every 200 ms for two minutes (the
 * peer may not listen yet), with set_timeouts(@timeout_s); die(@what) if
 * none.
 */
int tcp_connect(const char *addr, const char *port, const char *what,
		int timeout_s)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *t;
	int fd = -1, i;

	if (getaddrinfo(addr, port, &hints, &res))
		die("getaddrinfo");
	for (i = 0; i < 600 && fd < 0; i++) {
		for (t = res; t; t = t->ai_next) {
			fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
			if (fd >= 0 && !connect(fd, t->ai_addr, t->ai_addrlen))
				break;
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(200000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		die(what);
	set_timeouts(fd, timeout_s);
	return fd;
}

/* RESET -> INIT on port 1, P_Key index 0, with remote @access; 0 or an errno. */
int qp_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* @ah: a global route on port 1 to the 16 bytes @dgid from GID @gid_index. */
void gid_ah(struct ibv_ah_attr *ah, const void *dgid, int gid_index,
	    uint8_t hop_limit)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	memcpy(ah->grh.dgid.raw, dgid, 16);
	ah->grh.sgid_index = (uint8_t)gid_index;
	ah->grh.hop_limit = hop_limit;
}

/*
 * INIT -> RTR along @ah to QP @dqpn, path MTU 1024, expecting PSN
 * @rq_psn; a QP that responds (RC, XRC_RECV) also takes @rd_atom and
 * @rnr_timer.  0 or an errno.
 */
int qp_rtr(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dqpn,
	   uint32_t rq_psn, uint8_t rd_atom, uint8_t rnr_timer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = rq_psn, .ah_attr = *ah,
		.max_dest_rd_atomic = rd_atom, .min_rnr_timer = rnr_timer,
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_RECV)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

/*
 * RTR -> RTS sending from PSN @sq_psn; all but UC take the ACK @timeout, a
 * QP that requests (RC, XRC_SEND) also @retry, @rnr_retry and @rd_atom.
 * 0 or an errno.
 */
int qp_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t timeout,
	   uint8_t retry, uint8_t rnr_retry, uint8_t rd_atom)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = sq_psn, .timeout = timeout,
		.retry_cnt = retry, .rnr_retry = rnr_retry,
		.max_rd_atomic = rd_atom,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type != IBV_QPT_UC)
		mask |= IBV_QP_TIMEOUT;
	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND)
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

/*
 * A fresh RC QP to INIT (remote write, read and atomics) and on to RTR
 * towards QP @dqpn at @dgid, this port's own GID @gid_index (the loopback
 * of the programs with one device), PSN 0.  0 or -1.
 */
int rc_to_rtr(struct ibv_qp *qp, uint32_t dqpn, uint8_t rd_atom,
	      const union ibv_gid *dgid, int gid_index, uint8_t hop_limit,
	      uint8_t rnr_timer)
{
	struct ibv_ah_attr ah;

	if (qp_init(qp, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_ATOMIC))
		return -1;
	gid_ah(&ah, dgid->raw, gid_index, hop_limit);
	return qp_rtr(qp, &ah, dqpn, 0, rd_atom, rnr_timer) ? -1 : 0;
}

/* @a: an XRC SRQ of @max_wr one-SGE receives in @xrcd, @pd and @cq. */
void xrc_srq_attr(struct ibv_srq_init_attr_ex *a, struct ibv_xrcd *xrcd,
		  struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr)
{
	memset(a, 0, sizeof(*a));
	a->attr.max_wr = max_wr;
	a->attr.max_sge = 1;
	a->comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	a->srq_type = IBV_SRQT_XRC;
	a->xrcd = xrcd;
	a->cq = cq;
	a->pd = pd;
}

/*
 * A receive WQ of @max_wr one-SGE receives on @pd and @cq, made from @wa
 * (its other fields as the caller set them; the capacities granted are
 * written back there), or NULL.
 */
struct ibv_wq *rq_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *wa,
		     struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr)
{
	wa->wq_type = IBV_WQT_RQ;
	wa->pd = pd;
	wa->cq = cq;
	wa->max_wr = max_wr;
	wa->max_sge = 1;
	return ibv_create_wq(ctx, wa);
}

/*
 * A RAW_PACKET QP spreading over the WQs of @tbl by a Toeplitz hash with
 * the 40-byte @key over @fields (IBV_RX_HASH_*; 0: no hash field), or NULL.
 */
struct ibv_qp *rss_qp(struct ibv_context *ctx, struct ibv_pd *pd,
		      struct ibv_rwq_ind_table *tbl, const uint8_t *key,
		      uint64_t fields)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd,
		.rwq_ind_tbl = tbl,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = 40,
			.rx_hash_key = (uint8_t *)key,
			.rx_hash_fields_mask = fields,
		},
	};

	return ibv_create_qp_ex(ctx, &qa);
}
