// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_fault: fail each allocation of each create path in turn, with
 * fail-nth (Documentation/fault-injection/fault-injection.rst), on a live
 * shca device.  Root, on a kernel with CONFIG_FAULT_INJECTION; failslab
 * and fail_page_alloc must be set up to fail sleeping allocations
 * (ignore-gfp-wait N; fail_page_alloc's min-order 1, see fuzz.sh), which
 * scripts/e2e/fuzz.sh does.
 *
 *   verbs_fault DEV GID_INDEX [-m MAXN] [-o VERB] [-d] [-a]
 *
 * For each verb that creates something (ibv_open_device's ucontext,
 * PD, MR, MW, completion channel, CQ, extended CQ, QPs of every type,
 * RSS QP, SRQs basic, XRC and TM, XRCD, WQ, indirection table, flow, AH,
 * and the ring reallocations of resize_cq and an SRQ resize) and n = 1,
 * 2, ...: arm /proc/thread-self/fail-nth with n, call the verb, read
 * back whether the fault fired.  If it did, the call must have failed
 * with an errno or succeeded anyway (an allocation with a fallback, such
 * as kvmalloc's); if it did not, n passed the number of allocations the
 * call makes: it must have succeeded, and the verb is done.  Every
 * object made is destroyed, which must succeed, and after each verb the
 * device's restrack counts (rdma resource show) must be what they were
 * before it: nothing was left behind.  At the end the device must still
 * move data (a UD datagram, every byte compared).  One TAP line per verb
 * with its count of injected faults, and the total.
 * Two cases whose faults hit bugs of Linux's ib_core/ib_uverbs (see
 * cases[]) are left out with a SKIP line unless -a is given.
 * -d (dry) injects nothing: each verb runs once, which must succeed and
 * leave nothing behind (the fixture and the cases checked on a kernel
 * without fault injection).
 * Exit status: 0 if every case passed, 77 if the kernel has no fail-nth
 * (without -d).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vm_lib.h"

static struct ibv_device *dev;
static const char *devname;
static int gid_index, nth_fd = -1, fails;
static bool dry, all;
static union ibv_gid gid;

/* What every case creates its object on (made with no fault armed). */
static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *ind;
	struct ibv_qp *raw;
	uint8_t *buf;
} fx;

static void arm(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	if (nth_fd < 0)
		return;		/* -d: no fault */
	if (pwrite(nth_fd, b, (size_t)len, 0) != len) {
		perror("fail-nth write");
		exit(1);
	}
}

/* Disarm; return what was left of the count (0: the fault fired). */
static unsigned int disarm(void)
{
	char b[16] = "";
	ssize_t r;

	if (nth_fd < 0)
		return 1;	/* -d: nothing fired */
	r = pread(nth_fd, b, sizeof(b) - 1, 0);
	/* the read first: writing 0 resets what it reports */
	if (r <= 0 || pwrite(nth_fd, "0", 1, 0) != 1) {
		perror("fail-nth read");
		exit(1);
	}
	return (unsigned int)strtoul(b, NULL, 10);
}

/* ---- the cases ------------------------------------------------------------ */

/*
 * Each create returns the new object or NULL with errno set, and is all
 * that runs while the fault is armed; destroy returns 0 or an errno.
 */
struct fcase {
	const char *name;
	void *(*create)(void);
	int (*destroy)(void *obj);
	const char *core_bug;	/* left out (unless -a): Linux's, not shca's */
};

static void *c_open(void) { return ibv_open_device(dev); }
static int d_open(void *o) { return ibv_close_device(o) ? EIO : 0; }

static void *c_pd(void) { return ibv_alloc_pd(fx.ctx); }
static int d_pd(void *o) { return ibv_dealloc_pd(o); }

static void *c_mr(void)
{
	return ibv_reg_mr(fx.pd, fx.buf, 4 * 4096,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
}
static int d_mr(void *o) { return ibv_dereg_mr(o); }

static void *c_mw(void) { return ibv_alloc_mw(fx.pd, IBV_MW_TYPE_2); }
static int d_mw(void *o) { return ibv_dealloc_mw(o); }

static void *c_ch(void) { return ibv_create_comp_channel(fx.ctx); }
static int d_ch(void *o) { return ibv_destroy_comp_channel(o); }

static void *c_cq(void) { return ibv_create_cq(fx.ctx, 16, NULL, NULL, 0); }
static int d_cq(void *o) { return ibv_destroy_cq(o); }

static void *c_cqx(void)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(fx.ctx, &a);

	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

static struct ibv_qp *qp_of(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = fx.cq, .recv_cq = fx.cq, .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = fx.pd,
	};

	if (type == IBV_QPT_XRC_RECV) {
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = fx.xrcd;
		a.pd = NULL;
		a.send_cq = a.recv_cq = NULL;
	}
	if (type == IBV_QPT_XRC_SEND)
		a.cap.max_recv_wr = a.cap.max_recv_sge = 0;
	return ibv_create_qp_ex(fx.ctx, &a);
}
static void *c_rc(void) { return qp_of(IBV_QPT_RC); }
static void *c_uc(void) { return qp_of(IBV_QPT_UC); }
static void *c_ud(void) { return qp_of(IBV_QPT_UD); }
static void *c_xini(void) { return qp_of(IBV_QPT_XRC_SEND); }
static void *c_xtgt(void) { return qp_of(IBV_QPT_XRC_RECV); }
static void *c_raw(void) { return qp_of(IBV_QPT_RAW_PACKET); }
static int d_qp(void *o) { return ibv_destroy_qp(o); }

static void *c_srq_type(enum ibv_srq_type type)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = type, .pd = fx.pd,
	};

	if (type == IBV_SRQT_XRC) {
		a.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
		a.xrcd = fx.xrcd;
		a.cq = fx.cq;
	} else if (type == IBV_SRQT_TM) {
		a.comp_mask |= IBV_SRQ_INIT_ATTR_TM | IBV_SRQ_INIT_ATTR_CQ;
		a.cq = fx.cq;
		a.tm_cap.max_num_tags = 4;
		a.tm_cap.max_ops = 4;
	}
	return ibv_create_srq_ex(fx.ctx, &a);
}
static void *c_srq(void) { return c_srq_type(IBV_SRQT_BASIC); }
static void *c_xsrq(void) { return c_srq_type(IBV_SRQT_XRC); }
static void *c_tsrq(void) { return c_srq_type(IBV_SRQT_TM); }
static int d_srq(void *o) { return ibv_destroy_srq(o); }

static void *c_xrcd(void)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};

	return ibv_open_xrcd(fx.ctx, &a);
}
static int d_xrcd(void *o) { return ibv_close_xrcd(o); }

static void *c_wq(void)
{
	struct ibv_wq_init_attr a = {
		.wq_type = IBV_WQT_RQ, .max_wr = 8, .max_sge = 1,
		.pd = fx.pd, .cq = fx.cq,
	};

	return ibv_create_wq(fx.ctx, &a);
}
static int d_wq(void *o) { return ibv_destroy_wq(o); }

static void *c_ind(void)
{
	struct ibv_wq *wqs[2] = { fx.wq, fx.wq };
	struct ibv_rwq_ind_table_init_attr a = {
		.log_ind_tbl_size = 1, .ind_tbl = wqs,
	};

	return ibv_create_rwq_ind_table(fx.ctx, &a);
}
static int d_ind(void *o) { return ibv_destroy_rwq_ind_table(o); }

static const uint8_t key[40] = { 0x6d, 0x5a };

static void *c_rss(void)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = fx.pd, .rwq_ind_tbl = fx.ind,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = sizeof(key),
			.rx_hash_key = (uint8_t *)key,
			.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
					       IBV_RX_HASH_DST_IPV4,
		},
	};

	return ibv_create_qp_ex(fx.ctx, &a);
}

static void *c_flow(void)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4 ip;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f),
			  .num_of_specs = 2, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth),
			 .val.dst_mac = { 0x02, 0xca, 0x5e, 0, 0, 0x37 },
			 .mask.dst_mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
		.ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(f.ip),
			.val.dst_ip = 0x0100a8c0, .mask.dst_ip = 0xffffffff },
	};

	return ibv_create_flow(fx.raw, &f.attr);
}
static int d_flow(void *o) { return ibv_destroy_flow(o); }

static void *c_ah(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = (uint8_t)gid_index,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(fx.pd, &a);
}
static int d_ah(void *o) { return ibv_destroy_ah(o); }

/* The resizes keep their object: "destroy" does nothing. */
static int resize_to = 32;
static void *c_resize_cq(void)
{
	resize_to = resize_to == 32 ? 64 : 32;
	return ibv_resize_cq(fx.cq, resize_to) ? NULL : fx.cq;
}

static void *c_resize_srq(void)
{
	struct ibv_srq_attr a = { .max_wr = (uint32_t)resize_to + 4 };

	resize_to = resize_to == 32 ? 64 : 32;
	return ibv_modify_srq(fx.srq, &a, IBV_SRQ_MAX_WR) ? NULL : fx.srq;
}
static int d_none(void *o) { (void)o; return 0; }

static const struct fcase cases[] = {
	{ "open_device (ucontext)", c_open, d_open, NULL },
	{ "alloc_pd", c_pd, d_pd, NULL },
	{ "reg_mr", c_mr, d_mr, NULL },
	{ "alloc_mw", c_mw, d_mw, NULL },
	{ "create_comp_channel", c_ch, d_ch, NULL },
	{ "create_cq", c_cq, d_cq, NULL },
	{ "create_cq_ex", c_cqx, d_cq, NULL },
	{ "create_qp RC", c_rc, d_qp, NULL },
	{ "create_qp UC", c_uc, d_qp, NULL },
	{ "create_qp UD", c_ud, d_qp, NULL },
	{ "create_qp XRC_SEND", c_xini, d_qp, NULL },
	/*
	 * ib_core (6.1): create_xrc_qp_user() takes an XRCD reference
	 * before __ib_open_qp(), and when that allocation fails nothing
	 * gives it back: the XRCD can never be freed (kmemleak: the XRCD
	 * of ib_alloc_xrcd_user).  Found by this program on the test
	 * kernel; not shca's.
	 */
	{ "create_qp XRC_RECV", c_xtgt, d_qp,
	  "ib_core leaks an XRCD reference when __ib_open_qp() fails" },
	{ "create_qp RAW_PACKET", c_raw, d_qp, NULL },
	{ "create_srq basic", c_srq, d_srq, NULL },
	{ "create_srq XRC", c_xsrq, d_srq, NULL },
	{ "create_srq TM", c_tsrq, d_srq, NULL },
	{ "open_xrcd", c_xrcd, d_xrcd, NULL },
	{ "create_wq", c_wq, d_wq, NULL },
	{ "create_rwq_ind_table", c_ind, d_ind, NULL },
	{ "create_qp RSS", c_rss, d_qp, NULL },
	/*
	 * ib_uverbs (6.1): an allocation failure in
	 * ib_uverbs_ex_create_flow() after flow_resources_alloc() leaks
	 * 16 bytes of it (kmemleak).  Found by this program on the test
	 * kernel; not shca's.
	 */
	{ "create_flow", c_flow, d_flow,
	  "ib_uverbs leaks flow_resources_alloc()'s memory on a failure" },
	{ "create_ah", c_ah, d_ah, NULL },
	{ "resize_cq", c_resize_cq, d_none, NULL },
	{ "modify_srq (resize)", c_resize_srq, d_none, NULL },
};

/* ---- the device's restrack counts ---------------------------------------- */

/* "pd 2 cq 1 qp 1 cm_id 0 mr 0 ctx 1 srq 0" of rdma resource show. */
static int res_counts(char *out, size_t len)
{
	char cmd[128], line[512], *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show 2>&1");
	f = popen(cmd, "r");
	if (!f)
		return -1;
	out[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, devname);
		if (p && p[strlen(devname)] == ':') {
			p += strlen(devname) + 1;
			p[strcspn(p, "\n")] = 0;
			snprintf(out, len, "%s", p + strspn(p, " "));
		}
	}
	pclose(f);
	return out[0] ? 0 : -1;
}

/* ---- one verb ------------------------------------------------------------ */

static unsigned long total_faults;

/*
 * The counts after the last case that passed, which are the next case's
 * counts before (nothing runs in between): one `rdma resource show` per
 * case instead of two (each a shell and rdma, slow to start under the
 * debug kernel).
 */
static char last_after[256];

static void run_case(const struct fcase *c, unsigned int maxn)
{
	unsigned int n, left = 0, faults = 0, tolerated = 0, enomem = 0;
	char before[256], after[256], why[640] = "";
	struct timespec t0, t1;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (last_after[0])
		snprintf(before, sizeof(before), "%s", last_after);
	else if (res_counts(before, sizeof(before)))
		snprintf(why, sizeof(why), "no restrack counts for %s", devname);
	for (n = 1; n <= maxn && !why[0]; n++) {
		void *obj;
		int err;

		errno = 0;
		arm(n);
		obj = c->create();
		err = errno;
		left = disarm();
		if (!left) {
			faults++;
			if (obj)
				tolerated++;
			else if (!err)
				snprintf(why, sizeof(why),
					 "fault %u: failed with errno 0", n);
			else
				enomem += err == ENOMEM;
		}
		if (obj && (r = c->destroy(obj)))
			snprintf(why, sizeof(why),
				 "fault %u: destroying what it made: %s", n,
				 strerror(r));
		if (left) {
			if (!obj)
				snprintf(why, sizeof(why),
					 "failed with no fault left to inject (n %u): %s",
					 n, strerror(err));
			break;
		}
	}
	if (!why[0] && !left)
		snprintf(why, sizeof(why), "more than %u allocations", maxn);
	if (!why[0] && res_counts(after, sizeof(after)))
		snprintf(why, sizeof(why), "no restrack counts after");
	if (!why[0] && strcmp(before, after))
		snprintf(why, sizeof(why), "restrack %s before, %s after",
			 before, after);
	total_faults += faults;
	if (why[0])
		last_after[0] = 0;
	else
		snprintf(last_after, sizeof(last_after), "%s", after);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("verbs_fault: %-24s %4u faults injected: %u failed the call (%u ENOMEM), %u tolerated; made at n=%u; %.1f s\n",
	       c->name, faults, faults - tolerated, enomem, tolerated, n,
	       (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (why[0]) {
		fails++;
		printf("not ok - fault: %s: %s\n", c->name, why);
	} else if (dry) {
		printf("ok - fault: %s: made and destroyed (no fault: -d), nothing left behind\n",
		       c->name);
	} else {
		printf("ok - fault: %s: %u faults, each failed cleanly, nothing left behind\n",
		       c->name, faults);
	}
	fflush(stdout);
}

static int fixture(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	fx.ctx = ibv_open_device(dev);
	if (!fx.ctx || ibv_query_gid(fx.ctx, 1, gid_index, &gid))
		return -1;
	fx.buf = aligned_alloc(4096, 4 * 4096);
	if (!fx.buf)
		return -1;
	memset(fx.buf, 0, 4 * 4096);
	fx.pd = ibv_alloc_pd(fx.ctx);
	fx.cq = fx.pd ? ibv_cq_ex_to_cq(ibv_create_cq_ex(fx.ctx, &ca)) : NULL;
	fx.xrcd = fx.cq ? c_xrcd() : NULL;
	fx.srq = fx.xrcd ? c_srq() : NULL;
	fx.wq = fx.srq ? c_wq() : NULL;
	fx.ind = fx.wq ? c_ind() : NULL;
	fx.raw = fx.ind ? c_raw() : NULL;
	if (!fx.raw || ibv_modify_qp(fx.raw, &qa, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	return 0;
}

/* The device still moves data: 3 UD datagrams to ourselves, every byte. */
static bool moves_data(void)
{
	return env_moves_data(devname, gid_index);
}

int main(int argc, char **argv)
{
	unsigned int maxn = 2000, i;
	const char *only = NULL;
	int o;

	if (argc < 3) {
		fprintf(stderr, "usage: verbs_fault DEV GID_INDEX [-m MAXN] [-o VERB] [-d] [-a]\n");
		return 2;
	}
	devname = argv[1];
	gid_index = atoi(argv[2]);
	optind = 3;
	while ((o = getopt(argc, argv, "m:o:da")) != -1) {
		if (o == 'd')
			dry = true;
		else if (o == 'a')
			all = true;
		else if (o == 'm')
			maxn = (unsigned int)atoi(optarg);
		else if (o == 'o')
			only = optarg;
		else
			return 2;
	}
	nth_fd = dry ? -1 : open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0 && !dry) {
		printf("skip: verbs_fault: no /proc/thread-self/fail-nth (%s): the kernel has no CONFIG_FAULT_INJECTION\n",
		       strerror(errno));
		return 77;
	}
	dev = find_dev(devname);
	if (!dev || fixture()) {
		printf("not ok - fault: the fixture on %s (errno %d)\n", devname, errno);
		return 1;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (only && !strstr(cases[i].name, only))
			continue;
		if (cases[i].core_bug && !all && !dry) {
			printf("ok - fault: %s # SKIP %s\n", cases[i].name,
			       cases[i].core_bug);
			continue;
		}
		run_case(&cases[i], maxn);
	}
	printf("verbs_fault: total %lu faults injected\n", total_faults);
	if (moves_data()) {
		printf("ok - fault: the device still moves data (3 datagrams, every byte)\n");
	} else {
		fails++;
		printf("not ok - fault: the device still moves data\n");
	}
	return fails ? 1 : 0;
}
