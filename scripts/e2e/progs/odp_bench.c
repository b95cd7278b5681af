// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The cost of on-demand paging (issue #40; bench.sh's "odp" section):
 *
 *   odp_bench DEV -g GID_INDEX [-s MIB] [-c CHUNK_KIB]
 *
 * On device DEV (port 1): two RC QPs connected to each other over
 * GID_INDEX (loopback), one CQ.  For each of three kinds of MR over a
 * fresh buffer of MIB MiB (default 16):
 *
 *   pinned   ibv_reg_mr() without IBV_ACCESS_ON_DEMAND (every page pinned
 *            and mapped at registration)
 *   odp      IBV_ACCESS_ON_DEMAND: the first access to each page faults it
 *            into the MR
 *   odppf    IBV_ACCESS_ON_DEMAND, then ibv_advise_mr() PREFETCH_WRITE
 *            with IBV_ADVISE_MR_FLAG_FLUSH over the whole MR (synchronous:
 *            the pages are in when it returns), timed apart
 *
 * it times the registration, then a stream of RDMA WRITEs of CHUNK_KIB
 * KiB (default 64) covering the MR once (the first touch), then the same
 * stream again (every page already in), and the deregistration; then
 * the same on a second fresh buffer with an RDMA READ stream out of it
 * (its first touch).  The buffers are anonymous memory written by the
 * CPU before registration, so no time goes to allocating pages: what
 * differs between the kinds is only how the MR gets its pages.  The
 * local side of WR i is slot i % 16 of a pinned buffer of 16 chunks, 16
 * WRs in flight, each signaled.  After each WRITE stream the MR's bytes are
 * compared with what was written, after the READ stream the last chunk
 * read with the MR's (not timed).
 *
 * Before them, the process's first ODP MR (one page) is timed apart: it
 * alone also subscribes the process's mm to MMU notifiers.
 *
 * Output: lines "odp_bench: KEY VALUE" for bench.sh, KEY one of
 *   KIND_reg_us, KIND_dereg_us, KIND_write_mbs, KIND_write2_mbs,
 *   KIND_read_mbs (KIND pinned, odp, odppf), odppf_advise_us and
 *   odppf_read_advise_us (the prefetches), odp_first_reg_us (the first
 *   ODP MR), MB/s in 10^6 bytes/s.
 * Exits 0 when every stream completed with the right data, 2 when DEV
 * offers no RC ODP for WRITE and READ (nothing measured), else 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "e2e_lib.h"

#define DEPTH 16

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qa;
static uint8_t *lbuf;
static struct ibv_mr *lmr;
static size_t mr_len, chunk;

static const char *const kinds[] = { "pinned", "odp", "odppf" };

/* @len bytes of fresh anonymous memory, every page written (@seed). */
static uint8_t *fresh_buf(size_t len, uint8_t seed)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 12));
	return p;
}

static void key_val(const char *kind, const char *what, double v)
{
	printf("odp_bench: %s_%s %.1f\n", kind, what, v);
}

/*
 * Register @buf as kind @k; the registration's time under KIND_reg_us and,
 * for odppf, the prefetch's under odppf_@advise_key.
 */
static struct ibv_mr *reg_kind(int k, uint8_t *buf, const char *advise_key,
			       bool print_reg)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr;
	double t0;

	if (k)
		access |= IBV_ACCESS_ON_DEMAND;
	t0 = now_s();
	mr = ibv_reg_mr(pd, buf, mr_len, access);
	if (!mr)
		die("ibv_reg_mr");
	if (print_reg)
		key_val(kinds[k], "reg_us", (now_s() - t0) * 1e6);
	if (k == 2) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf,
				       .length = (uint32_t)mr_len,
				       .lkey = mr->lkey };
		int ret;

		t0 = now_s();
		ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		if (ret) {
			errno = ret;
			die("ibv_advise_mr");
		}
		key_val("odppf", advise_key, (now_s() - t0) * 1e6);
	}
	return mr;
}

/*
 * One pass of @op over all of @mr (at @base), CHUNK bytes a WR, DEPTH in
 * flight; the rate in MB/s, or -1 on a failed completion or a timeout.
 */
static double stream(enum ibv_wr_opcode op, struct ibv_mr *mr, uint8_t *base)
{
	size_t n = mr_len / chunk, posted = 0, done = 0;
	struct ibv_wc wc[DEPTH];
	double t0 = now_s();
	long long end = now_ms() + 120000;

	while (done < n) {
		while (posted < n && posted - done < DEPTH) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)(lbuf + (posted % DEPTH) * chunk),
				.length = (uint32_t)chunk,
				.lkey = lmr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = op, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma.remote_addr =
					(uintptr_t)(base + posted * chunk),
				.wr.rdma.rkey = mr->rkey,
			}, *bad;

			if (ibv_post_send(qa, &wr, &bad))
				die("ibv_post_send");
			posted++;
		}
		int got = ibv_poll_cq(cq, DEPTH, wc);

		if (got < 0)
			die("ibv_poll_cq");
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "odp_bench: WR %llu: %s\n",
					(unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return -1;
			}
		}
		done += (size_t)got;
		if (!got && now_ms() > end) {
			fprintf(stderr, "odp_bench: stream timed out\n");
			return -1;
		}
	}
	return (double)mr_len / (now_s() - t0) / 1e6;
}

/*
 * After a WRITE stream, chunk c of @base holds what slot c % DEPTH of lbuf
 * holds: the byte c % DEPTH + 1 (set in main()).
 */
static bool write_ok(const uint8_t *base)
{
	for (size_t c = 0; c < mr_len / chunk; c++)
		for (size_t i = 0; i < chunk; i++)
			if (base[c * chunk + i] != (uint8_t)(c % DEPTH + 1)) {
				fprintf(stderr, "odp_bench: byte %zu wrong\n",
					c * chunk + i);
				return false;
			}
	return true;
}

static void usage(void)
{
	fprintf(stderr, "usage: odp_bench DEV -g GID_INDEX [-s MIB] [-c CHUNK_KIB]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dx = {};
	struct ibv_context *ctx;
	struct ibv_qp *qb;
	union ibv_gid gid;
	int gidx = -1, opt, bad = 0;
	uint32_t need = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;

	e2e_name = "odp_bench";
	mr_len = 16ul << 20;
	chunk = 64ul << 10;
	while ((opt = getopt(argc, argv, "g:s:c:")) != -1) {
		switch (opt) {
		case 'g': gidx = atoi(optarg); break;
		case 's': mr_len = strtoul(optarg, NULL, 0) << 20; break;
		case 'c': chunk = strtoul(optarg, NULL, 0) << 10; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || gidx < 0 || !chunk || !mr_len ||
	    mr_len % chunk || mr_len > UINT32_MAX)
		usage();
	ctx = open_dev_or_die(argv[optind]);
	if (ibv_query_device_ex(ctx, NULL, &dx))
		die("ibv_query_device_ex");
	if (!(dx.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
	    (dx.odp_caps.per_transport_caps.rc_odp_caps & need) != need) {
		printf("odp_bench: %s offers no RC ODP for WRITE and READ\n",
		       argv[optind]);
		return 2;
	}
	if (ibv_query_gid(ctx, 1, gidx, &gid))
		die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0) : NULL;
	if (!cq)
		die("ibv_alloc_pd/ibv_create_cq");
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	if (!qa || !qb)
		die("ibv_create_qp");
	if (rc_to_rtr(qa, qb->qp_num, DEPTH, &gid, gidx, 1, 12) ||
	    rc_to_rtr(qb, qa->qp_num, DEPTH, &gid, gidx, 1, 12) ||
	    qp_rts(qa, 0, 14, 7, 7, DEPTH) || qp_rts(qb, 0, 14, 7, 7, DEPTH))
		die("connect the QPs");
	lbuf = fresh_buf(DEPTH * chunk, 0);
	for (int s = 0; s < DEPTH; s++)
		memset(lbuf + s * chunk, s + 1, chunk);
	lmr = ibv_reg_mr(pd, lbuf, DEPTH * chunk, IBV_ACCESS_LOCAL_WRITE);
	if (!lmr)
		die("ibv_reg_mr (local)");

	/*
	 * The process's first ODP MR also subscribes its mm to MMU
	 * notifiers (ib_core's interval notifier; the first subscription of
	 * an mm takes every lock of it), once: timed apart on one page, so
	 * that the odp figures below are those of any later MR.
	 */
	{
		long pg = sysconf(_SC_PAGESIZE);
		uint8_t *one = fresh_buf((size_t)pg, 1);
		struct ibv_mr *mr;
		double t0 = now_s();

		mr = ibv_reg_mr(pd, one, (size_t)pg, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_ON_DEMAND);
		if (!mr)
			die("ibv_reg_mr (first ODP MR)");
		key_val("odp", "first_reg_us", (now_s() - t0) * 1e6);
		ibv_dereg_mr(mr);
		munmap(one, (size_t)pg);
	}
	for (int k = 0; k < 3; k++) {
		uint8_t *buf = fresh_buf(mr_len, (uint8_t)(k + 2));
		struct ibv_mr *mr = reg_kind(k, buf, "advise_us", true);
		double v, t0;

		v = stream(IBV_WR_RDMA_WRITE, mr, buf);
		key_val(kinds[k], "write_mbs", v);
		bad |= v < 0 || !write_ok(buf);
		memset(buf, 0, mr_len);
		v = stream(IBV_WR_RDMA_WRITE, mr, buf);
		key_val(kinds[k], "write2_mbs", v);
		bad |= v < 0 || !write_ok(buf);
		t0 = now_s();
		if (ibv_dereg_mr(mr))
			die("ibv_dereg_mr");
		key_val(kinds[k], "dereg_us", (now_s() - t0) * 1e6);
		munmap(buf, mr_len);

		buf = fresh_buf(mr_len, (uint8_t)(k + 9));
		mr = reg_kind(k, buf, "read_advise_us", false);
		v = stream(IBV_WR_RDMA_READ, mr, buf);
		key_val(kinds[k], "read_mbs", v);
		/* the last chunk read is in its slot, every READ done */
		bad |= v < 0 || memcmp(lbuf + ((mr_len / chunk - 1) % DEPTH) * chunk,
				       buf + mr_len - chunk, chunk);
		if (ibv_dereg_mr(mr))
			die("ibv_dereg_mr");
		munmap(buf, mr_len);
	}
	if (bad)
		fprintf(stderr, "odp_bench: a stream failed or its data was wrong\n");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(lmr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return bad ? 1 : 0;
}
