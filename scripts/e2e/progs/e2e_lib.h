/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the C programs here (all but srqcm; those that drive
 * one device in the VM add vm_lib.h): TAP lines and fatal errors, opening
 * a device by name, polling a CQ, a TCP socket between two sides, taking a
 * connected QP through INIT, RTR and RTS, RSS and XRC SRQ attributes, and
 * an RDMA CM endpoint.  None of them keeps state beyond the globals below;
 * each runs in the calling thread and takes no lock (the TAP helpers are
 * for the main thread of a process).
 */
#ifndef SHCA_E2E_LIB_H
#define SHCA_E2E_LIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/*
 * The head of the TAP lines of tap(), pass() and die(): "ok - NAME: SIDE:
 * case", without "NAME: " while e2e_name is NULL and without "SIDE: "
 * while side is.  A program sets them before its first line.
 */
extern const char *e2e_name;
extern const char *side;
/* Failed checks (tap(), the programs' own), and passed tap() cases. */
extern int failures;
extern int passes;

void tap_line(bool good, const char *name, const char *fmt, va_list ap);
void tap(bool good, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pass(const char *name);
void die(const char *what) __attribute__((noreturn));
void e2e_vwarn(const char *fmt, va_list ap);
long long now_ms(void);
double now_s(void);

struct ibv_context *open_dev(const char *name);
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int secs);
struct ibv_context *open_dev_or_die(const char *name);

int write_all(int fd, const void *buf, size_t len);
int read_all(int fd, void *buf, size_t len);
void send_tok(int fd, uint32_t tok, const char *what);
uint32_t read_tok(int fd, const char *what);
int tcp_listen(const char *port);
int tcp_connect(const char *addr, const char *port, const char *what,
		int timeout_s);
void set_timeouts(int fd, int secs);

int qp_init(struct ibv_qp *qp, unsigned int access);
void gid_ah(struct ibv_ah_attr *ah, const void *dgid, int gid_index,
	    uint8_t hop_limit);
int qp_rtr(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dqpn,
	   uint32_t rq_psn, uint8_t rd_atom, uint8_t rnr_timer);
int qp_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t timeout,
	   uint8_t retry, uint8_t rnr_retry, uint8_t rd_atom);
int rc_to_rtr(struct ibv_qp *qp, uint32_t dqpn, uint8_t rd_atom,
	      const union ibv_gid *dgid, int gid_index, uint8_t hop_limit,
	      uint8_t rnr_timer);

void xrc_srq_attr(struct ibv_srq_init_attr_ex *a, struct ibv_xrcd *xrcd,
		  struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr);
struct ibv_wq *rq_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *wa,
		     struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr);
struct ibv_qp *rss_qp(struct ibv_context *ctx, struct ibv_pd *pd,
		      struct ibv_rwq_ind_table *tbl, const uint8_t *key,
		      uint64_t fields);

/* What an RDMA CM server tells its client (private data): its buffer. */
struct cm_rep {
	uint32_t magic;
	uint32_t rkey;
	uint64_t addr;
};

/* The verbs and RDMA CM objects of one end of an RDMA CM connection. */
struct rdma_event_channel;
struct rdma_cm_id;
struct cm_ep {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen_id, *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

#endif
