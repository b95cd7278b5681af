// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The control path at scale (issue #38; bench.sh's "scale" section):
 *
 *   qp_scale DEV [-n QPS] [-q DEPTH] [-s SGE] [-i INLINE] [-m MRS]
 *		  [-z MR_BYTES] [-r RD_ATOM -g GID_INDEX]
 *
 * On device DEV (port 1): one PD, one CQ shared by every QP, then QPS RC
 * QPs (default 2000), each with DEPTH (256) send and receive WRs, SGE (1)
 * SGEs both ways and INLINE (0) inline bytes, created one after the other
 * and timed.  With -r, each is then moved to INIT and RTR (connected to
 * itself over GID_INDEX, max_dest_rd_atomic RD_ATOM), timed apart.  Then
 * MRS (default 0) MRs of MR_BYTES (4096) each, every one its own buffer,
 * registered and timed; then the MRs and the QPs are destroyed, timed.
 *
 * Kernel memory is read from /proc/meminfo before and after each step:
 * "kmem" is the fall of MemFree less the growth of this process's RssAnon
 * (its own heap and the buffers it allocates), i.e. every page the kernel
 * took for the objects: slab, vmalloc, page allocations, page tables, ring
 * pages mapped into this process.  Slab (SReclaimable + SUnreclaim),
 * VmallocUsed and Percpu growth are printed as a breakdown.  Other
 * activity on the machine shows up too: run it on an idle one, with
 * enough QPs that the noise (a few MiB) is small per object.
 *
 * Output: lines "qp_scale: KEY VALUE" (seconds, KiB), for bench.sh:
 *   create_s, create_ms_per_qp, kmem_kib_per_qp, slab_kib_per_qp,
 *   vmalloc_kib_per_qp, percpu_kib_per_qp, [rtr_s, rtr_kmem_kib_per_qp,]
 *   [mr_reg_s, mr_kmem_kib_per_mr, mr_dereg_s,] destroy_s,
 *   kmem_kib_left (what the destroy did not give back)
 * With QP_SCALE_HOOK set (environment), "$QP_SCALE_HOOK PHASE" runs by
 * system(3) before and after each timed phase (PHASE: create, created,
 * rtr, rtr-done, destroy, destroyed), e.g. a qprof snapshot
 * (scripts/vm/qprof): not a timed part.
 * Exits 0 when every object was created and destroyed, else 1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "e2e_lib.h"

struct mem {
	long free, slab, vmalloc, percpu, anon;
};

static long meminfo_kib(const char *buf, const char *key)
{
	const char *p = buf;
	size_t n = strlen(key);

	while (p && *p) {
		if (!strncmp(p, key, n) && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = 0;
}

static void mem_read(struct mem *m)
{
	static char buf[16384];

	read_file("/proc/meminfo", buf, sizeof(buf));
	m->free = meminfo_kib(buf, "MemFree");
	m->slab = meminfo_kib(buf, "SReclaimable") + meminfo_kib(buf, "SUnreclaim");
	m->vmalloc = meminfo_kib(buf, "VmallocUsed");
	m->percpu = meminfo_kib(buf, "Percpu");
	read_file("/proc/self/status", buf, sizeof(buf));
	m->anon = meminfo_kib(buf, "RssAnon");
}

/* Kernel KiB taken between @a and @b (see the top). */
static long kmem(const struct mem *a, const struct mem *b)
{
	return (a->free - b->free) - (b->anon - a->anon);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void settle(void)
{
	/* let deferred frees (RCU, workqueues) land before a reading */
	sync();
	usleep(300000);
}

/* Whether the @i-th @what was made; if not, a line on stderr and *@bad set. */
static bool made_ok(const void *obj, const char *what, int i, int *bad)
{
	if (obj)
		return true;
	fprintf(stderr, "qp_scale: %s %d: %s\n", what, i, strerror(errno));
	*bad = 1;
	return false;
}

static void hook(const char *phase)
{
	const char *h = getenv("QP_SCALE_HOOK");
	char cmd[512];

	if (!h || !*h)
		return;
	snprintf(cmd, sizeof(cmd), "%s %s", h, phase);
	if (system(cmd))
		fprintf(stderr, "qp_scale: hook %s failed\n", phase);
}

static void usage(void)
{
	fprintf(stderr, "usage: qp_scale DEV [-n QPS] [-q DEPTH] [-s SGE] [-i INLINE] "
		"[-m MRS] [-z MR_BYTES] [-r RD_ATOM -g GID_INDEX]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int nqp = 2000, depth = 256, sge = 1, inl = 0, nmr = 0, rd_atom = -1;
	int gid_index = -1, i, c, made = 0, mrs = 0, bad = 0;
	size_t mr_bytes = 4096;
	union ibv_gid gid;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp **qps;
	struct ibv_mr **mr;
	char **bufs;
	struct mem m0, m1, m2, m3, m4;
	double t0, t1;
	const char *dev;

	if (argc < 2 || argv[1][0] == '-')
		usage();
	dev = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "n:q:s:i:m:z:r:g:")) != -1) {
		switch (c) {
		case 'n': nqp = atoi(optarg); break;
		case 'q': depth = atoi(optarg); break;
		case 's': sge = atoi(optarg); break;
		case 'i': inl = atoi(optarg); break;
		case 'm': nmr = atoi(optarg); break;
		case 'z': mr_bytes = strtoul(optarg, NULL, 0); break;
		case 'r': rd_atom = atoi(optarg); break;
		case 'g': gid_index = atoi(optarg); break;
		default: usage();
		}
	}
	if (nqp < 1 || (rd_atom >= 0 && gid_index < 0))
		usage();

	ctx = open_dev(dev);
	if (!ctx) {
		fprintf(stderr, "qp_scale: cannot open %s\n", dev);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 1024, NULL, NULL, 0) : NULL;
	qps = calloc(nqp, sizeof(*qps));
	mr = calloc(nmr ? nmr : 1, sizeof(*mr));
	bufs = calloc(nmr ? nmr : 1, sizeof(*bufs));
	if (!cq || !qps || !mr || !bufs) {
		fprintf(stderr, "qp_scale: PD/CQ: %s\n", strerror(errno));
		return 1;
	}
	/* the MR buffers first: their pages are this process's, not counted */
	for (i = 0; i < nmr; i++) {
		if (posix_memalign((void **)&bufs[i], 4096, mr_bytes))
			return 1;
		memset(bufs[i], 1, mr_bytes);
	}

	settle();
	hook("create");
	mem_read(&m0);
	t0 = now();
	for (i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr ia;

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = depth;
		ia.cap.max_recv_wr = depth;
		ia.cap.max_send_sge = sge;
		ia.cap.max_recv_sge = sge;
		ia.cap.max_inline_data = inl;
		qps[i] = ibv_create_qp(pd, &ia);
		if (!made_ok(qps[i], "QP", i, &bad))
			break;
		made++;
	}
	t1 = now();
	hook("created");
	settle();
	mem_read(&m1);
	printf("qp_scale: qps %d depth %d sge %d inline %d\n", made, depth, sge, inl);
	printf("qp_scale: create_s %.3f\n", t1 - t0);
	if (made) {
		printf("qp_scale: create_ms_per_qp %.3f\n", (t1 - t0) * 1e3 / made);
		printf("qp_scale: kmem_kib_per_qp %.1f\n", (double)kmem(&m0, &m1) / made);
		printf("qp_scale: slab_kib_per_qp %.1f\n", (double)(m1.slab - m0.slab) / made);
		printf("qp_scale: vmalloc_kib_per_qp %.1f\n",
		       (double)(m1.vmalloc - m0.vmalloc) / made);
		printf("qp_scale: percpu_kib_per_qp %.1f\n",
		       (double)(m1.percpu - m0.percpu) / made);
	}

	m2 = m1;
	if (rd_atom >= 0 && made) {
		hook("rtr");
		t0 = now();
		for (i = 0; i < made; i++)
			if (ibv_query_gid(ctx, 1, gid_index, &gid) ||
			    rc_to_rtr(qps[i], qps[i]->qp_num, rd_atom, &gid,
				      gid_index, 1, 12)) {
				fprintf(stderr, "qp_scale: QP %d to RTR: %s\n", i,
					strerror(errno));
				bad = 1;
				break;
			}
		t1 = now();
		hook("rtr-done");
		settle();
		mem_read(&m2);
		printf("qp_scale: rtr_s %.3f\n", t1 - t0);
		printf("qp_scale: rtr_kmem_kib_per_qp %.1f\n", (double)kmem(&m1, &m2) / made);
	}

	if (nmr) {
		t0 = now();
		for (i = 0; i < nmr; i++) {
			mr[i] = ibv_reg_mr(pd, bufs[i], mr_bytes, IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
			if (!made_ok(mr[i], "MR", i, &bad))
				break;
			mrs++;
		}
		t1 = now();
		settle();
		mem_read(&m3);
		printf("qp_scale: mrs %d bytes %zu\n", mrs, mr_bytes);
		printf("qp_scale: mr_reg_s %.3f\n", t1 - t0);
		if (mrs)
			printf("qp_scale: mr_kmem_kib_per_mr %.1f\n",
			       (double)kmem(&m2, &m3) / mrs);
		t0 = now();
		for (i = 0; i < mrs; i++)
			if (ibv_dereg_mr(mr[i]))
				bad = 1;
		t1 = now();
		printf("qp_scale: mr_dereg_s %.3f\n", t1 - t0);
	}

	hook("destroy");
	t0 = now();
	for (i = 0; i < made; i++)
		if (ibv_destroy_qp(qps[i])) {
			fprintf(stderr, "qp_scale: destroy QP %d: %s\n", i, strerror(errno));
			bad = 1;
		}
	t1 = now();
	hook("destroyed");
	printf("qp_scale: destroy_s %.3f\n", t1 - t0);
	settle();
	mem_read(&m4);
	printf("qp_scale: kmem_kib_left %ld\n", kmem(&m0, &m4));

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	for (i = 0; i < nmr; i++)
		free(bufs[i]);
	free(bufs);
	free(mr);
	free(qps);
	return bad;
}
