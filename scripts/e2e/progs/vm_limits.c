// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What an unprivileged user may create on a shca device, and how much
 * memory it may make the kernel hold (limits.sh):
 *
 *   vm_limits DEV caps ok|eperm
 *	a RAW_PACKET QP, an RSS QP (a WQ and a table first) and a flow rule
 *	(on the raw QP, or on a UD QP when there is none): each is created
 *	("ok") or each fails with errno EPERM exactly ("eperm").
 *
 *   vm_limits DEV fill LIMIT_KIB MAX_QPS
 *	RC QPs with 16384-deep send and receive queues, one by one until a
 *	create fails: it must fail with ENOMEM within MAX_QPS tries.  With
 *	LIMIT_KIB (RLIMIT_MEMLOCK, or the device ceiling) the ring memory
 *	charged to this process (VmPin) must stay within it and the refused
 *	QP must not have fit; once all are destroyed VmPin is back where it
 *	was, and as many QPs are created again, no more.
 *	LIMIT_KIB 0: no ring arithmetic (a memory cgroup's limit); then
 *	MEMCG_FILE (env), the cgroup's memory.current, must have grown by
 *	1 MiB per QP held at least (their per-WQE state) and fall back by as
 *	much once they are destroyed (no second round).
 *
 *   vm_limits DEV make N
 *	N such QPs must be created (and destroyed).
 *
 * Prints "ok - ..." / "not ok - ..." lines, their names prefixed with
 * $LIMITS_TAG if set; exits 1 if any failed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include "shca-abi.h"

#include "vm_lib.h"

#define DEPTH	16384
#define MAXQ	256


static void result(int pass, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A TAP line, headed by $LIMITS_TAG (see main()): tap_line(). */
static void result(int pass, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_line(pass, name, fmt, ap);
	va_end(ap);
	if (!pass)
		failures++;
}

/* kB of VmPin in /proc/self/status: the mm's pinned_vm. */
static long vm_pin_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* -1 when there is no file to read (memory cgroup mode only). */
static long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* --- caps ------------------------------------------------------------- */

/* Did a create give the expected outcome?  @obj NULL means it failed. */
static void expect(const char *name, void *obj, int err, int want_eperm)
{
	if (want_eperm)
		result(!obj && err == EPERM, name, obj ? "created" :
		       "errno %d (%s), want EPERM", err, strerror(err));
	else
		result(!!obj, name, obj ? NULL : "errno %d (%s)", err,
		       strerror(err));
}

static int caps(struct ibv_context *ctx, int want_eperm)
{
	static uint8_t key[40] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
		.pd = pd, .cq = cq,
	};
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0 };
	struct ibv_qp_init_attr_ex rx = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = sizeof(key), .rx_hash_key = key,
			.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
					       IBV_RX_HASH_DST_IPV4,
		},
	};
	static const uint8_t mac[6] = { 0x02, 0xca, 0x5e, 0, 0, 1 };
	struct ibv_qp *raw, *rss = NULL, *target;
	struct ibv_rwq_ind_table *tbl = NULL;
	struct ibv_flow *flow;
	struct ibv_wq *wq;
	int err;

	if (!pd || !cq) {
		result(0, "caps: PD and CQ", "errno %d", errno);
		return 1;
	}
	errno = 0;
	raw = ibv_create_qp(pd, &qa);
	err = errno;
	expect("caps: RAW_PACKET QP", raw, err, want_eperm);

	wq = ibv_create_wq(ctx, &wa);
	result(!!wq, "caps: a WQ (any user may)", wq ? NULL : "errno %d", errno);
	if (wq) {
		ta.ind_tbl = &wq;
		tbl = ibv_create_rwq_ind_table(ctx, &ta);
		result(!!tbl, "caps: an indirection table (any user may)",
		       tbl ? NULL : "errno %d", errno);
	}
	if (tbl) {
		rx.rwq_ind_tbl = tbl;
		errno = 0;
		rss = ibv_create_qp_ex(ctx, &rx);
		err = errno;
		expect("caps: RSS QP", rss, err, want_eperm);
	}

	/* a rule needs a raw QP; without one, the UD QP anyone may make */
	target = raw;
	if (!target) {
		qa.qp_type = IBV_QPT_UD;
		target = ibv_create_qp(pd, &qa);
		result(!!target, "caps: a UD QP to attach a rule to",
		       target ? NULL : "errno %d", errno);
	}
	if (target) {
		errno = 0;
		flow = mac_flow(target, mac);
		err = errno;
		expect("caps: flow rule", flow, err, want_eperm);
		if (flow)
			ibv_destroy_flow(flow);
		ibv_destroy_qp(target);
	}
	if (rss)
		ibv_destroy_qp(rss);
	if (tbl)
		ibv_destroy_rwq_ind_table(tbl);
	if (wq)
		ibv_destroy_wq(wq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return failures ? 1 : 0;
}

/* --- fill / make ------------------------------------------------------ */

static struct ibv_qp *deep_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &qa);
}

/* Create deep QPs until one fails (or @max); its errno in *@err. */
static int create_until(struct ibv_pd *pd, struct ibv_cq *cq,
			struct ibv_qp **qps, int max, int *err)
{
	int n = 0;

	*err = 0;
	while (n < max) {
		errno = 0;
		qps[n] = deep_qp(pd, cq);
		if (!qps[n]) {
			*err = errno;
			break;
		}
		n++;
	}
	return n;
}

static void destroy_all(struct ibv_qp **qps, int n)
{
	while (n--)
		if (ibv_destroy_qp(qps[n]))
			result(0, "fill: destroy", "qp %d: errno %d", n, errno);
}

static int fill(struct ibv_context *ctx, long limit_kib, int max)
{
	struct ibv_qp *qps[MAXQ];
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	const char *cg = getenv("MEMCG_FILE");
	long base, one, held, per;
	long long cg0, cg1, cg2;
	int n, n2, err, err2;

	if (!pd || !cq || max > MAXQ) {
		result(0, "fill: PD and CQ", "errno %d", errno);
		return 1;
	}
	base = vm_pin_kib();
	cg0 = read_ll(cg);
	n = create_until(pd, cq, qps, max, &err);
	/*
	 * A memory cgroup is now at its limit: the next allocation anyone in
	 * it makes (opening a file to read a counter, a page of stdout's
	 * buffer) would wake its OOM killer.  One QP less leaves room for
	 * what follows; the charges are measured over the rest.
	 */
	if (!limit_kib && n > 1 && ibv_destroy_qp(qps[--n]))
		result(0, "fill: destroy one for room", "errno %d", errno);
	held = vm_pin_kib();
	cg1 = read_ll(cg);
	if (n) {
		destroy_all(qps, 1);
		one = vm_pin_kib();
		per = held - one;	/* what one QP holds */
		qps[0] = deep_qp(pd, cq);
		if (!qps[0]) {
			result(0, "fill: re-create one", "errno %d", errno);
			destroy_all(qps + 1, n - 1);
			return 1;
		}
	} else {
		per = 0;
	}
	printf("# fill: %d QPs of %d WRs created%s, the next: errno %d (%s); VmPin %ld -> %ld kB, %ld kB per QP; memory.current %lld -> %lld\n",
	       n, DEPTH, limit_kib ? "" : " (and one more, destroyed for room)",
	       err, strerror(err), base, held, per, cg0, cg1);
	result(n >= 1, "fill: some deep QPs are created", "%d", n);
	result(n < max && err == ENOMEM, "fill: then creation fails with ENOMEM",
	       "%d of %d created, errno %d (%s)", n, max, err, strerror(err));
	if (limit_kib) {
		/*
		 * At least DEPTH send entries (a header and the one SGE
		 * asked) and DEPTH receive entries (likewise): the strides
		 * follow the caps asked, so one SGE is all they must hold.
		 */
		result(per >= (long)(DEPTH * (sizeof(struct shca_send_wqe) +
					      sizeof(struct shca_recv_wqe) +
					      2 * sizeof(struct shca_sge)) / 1024),
		       "fill: each QP's rings are charged to VmPin",
		       "%ld kB per QP", per);
		result(held <= limit_kib, "fill: the charges stay within the limit",
		       "VmPin %ld kB, limit %ld kB", held, limit_kib);
		result(held + per > limit_kib,
		       "fill: the refused QP would not have fit",
		       "VmPin %ld + %ld kB, limit %ld kB", held, per, limit_kib);
	}
	destroy_all(qps, n);
	cg2 = read_ll(cg);
	result(vm_pin_kib() == base, "fill: destroying them undoes the charge",
	       "VmPin %ld kB, was %ld kB", vm_pin_kib(), base);
	if (cg) {
		printf("# fill: memory.current %lld once they are gone\n", cg2);
		result(cg1 - cg0 >= (long long)n * DEPTH * 64,
		       "fill: the QPs' kernel state is charged to the memory cgroup",
		       "memory.current %lld -> %lld for %d QPs", cg0, cg1, n);
		result(cg1 - cg2 >= (long long)n * DEPTH * 64,
		       "fill: destroying them uncharges the memory cgroup",
		       "memory.current %lld -> %lld", cg1, cg2);
	}
	if (!limit_kib)
		goto out;
	n2 = create_until(pd, cq, qps, max, &err2);
	result(n2 == n && err2 == ENOMEM,
	       "fill: as many are created again, then ENOMEM",
	       "%d then errno %d, first %d", n2, err2, n);
	destroy_all(qps, n2);
	result(vm_pin_kib() == base, "fill: and that charge is undone too",
	       "VmPin %ld kB, was %ld kB", vm_pin_kib(), base);
out:
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return failures ? 1 : 0;
}

static int make(struct ibv_context *ctx, int want)
{
	struct ibv_qp *qps[MAXQ];
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	int n, err;

	if (!pd || !cq || want > MAXQ) {
		result(0, "make: PD and CQ", "errno %d", errno);
		return 1;
	}
	n = create_until(pd, cq, qps, want, &err);
	result(n == want, "make: deep QPs created", "%d of %d, errno %d (%s)",
	       n, want, err, strerror(err));
	destroy_all(qps, n);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEV caps ok|eperm | fill LIMIT_KIB MAX | make N\n",
			argv[0]);
		return 2;
	}
	e2e_name = getenv("LIMITS_TAG");
	ctx = open_dev(argv[1]);
	if (!ctx) {
		result(0, "open device", "%s: errno %d", argv[1], errno);
		return 1;
	}
	if (!strcmp(argv[2], "caps"))
		return caps(ctx, !strcmp(argv[3], "eperm"));
	if (!strcmp(argv[2], "fill") && argc == 5)
		return fill(ctx, atol(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[2], "make"))
		return make(ctx, atoi(argv[3]));
	fprintf(stderr, "bad arguments\n");
	return 2;
}
