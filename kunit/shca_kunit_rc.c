// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the RC requester's pure decisions (rc_req_logic.h) - retransmit
 * timeout, RNR timer table, retry accounting, ACK ranges, AETH
 * syndromes, segmentation, the adaptive send window, the round-trip
 * estimate and early resends, and where the next shadow WQE comes from.
 */
#include <kunit/test.h>
#include <linux/time64.h>

#include "rc_req_logic.h"

static void shca_rc_test_rto(struct kunit *test)
{
	/* timeout 0: no retransmit timer at all */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_ns(0), 0ULL);
	/* 4.096 us * 2^timeout */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_ns(1), 8192ULL);
	KUNIT_EXPECT_EQ(test, shca_rc_rto_ns(14), 67108864ULL);	/* ~67 ms */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_ns(18), 1073741824ULL);	/* ~1.07 s */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_ns(31), 4096ULL << 31);
	/* the attribute is 5 bits wide: larger values saturate */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_ns(200), 4096ULL << 31);
}

/* Round-trip estimate: first sample seeds it, then 1/8 and 1/4 gains. */
static void shca_rc_test_rtt(struct kunit *test)
{
	struct shca_rc_rtt r = {};
	int i;

	shca_rc_rtt_sample(&r, 800);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 800U);
	KUNIT_EXPECT_EQ(test, r.var_us, 400U);
	shca_rc_rtt_sample(&r, 1600);	/* 800 late */
	KUNIT_EXPECT_EQ(test, r.srtt_us, 800U - 100 + 200);
	KUNIT_EXPECT_EQ(test, r.var_us, 400U - 100 + 200);
	/* steady samples: the deviation decays, srtt converges */
	for (i = 0; i < 100; i++)
		shca_rc_rtt_sample(&r, 1000);
	KUNIT_EXPECT_GE(test, r.srtt_us, 990U);
	KUNIT_EXPECT_LE(test, r.srtt_us, 1000U);
	KUNIT_EXPECT_LE(test, r.var_us, 10U);
	/* a zero sample (same jiffy) still counts as 1 us, never 0 */
	r = (struct shca_rc_rtt){};
	shca_rc_rtt_sample(&r, 0);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1U);
	/* a huge sample does not overflow */
	shca_rc_rtt_sample(&r, U32_MAX);
	KUNIT_EXPECT_GT(test, r.srtt_us, 1U);
}

/* When an early resend comes, and when none does. */
static void shca_rc_test_probe(struct kunit *test)
{
	const u64 rto14 = shca_rc_rto_ns(14);	/* ~67 ms */
	struct shca_rc_rtt r = {};
	u64 floor = SHCA_RC_PROBE_MIN_US * NSEC_PER_USEC;

	/* no estimate yet: no probe */
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 0, rto14), 0ULL);
	shca_rc_rtt_sample(&r, 1000);	/* srtt 1 ms, var 0.5 ms */
	/* srtt + 4 var = 3 ms is below the floor */
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 0, rto14), floor);
	/* the second one waits twice as long */
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 1, rto14), 2 * floor);
	/* then none until the timeout */
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, SHCA_RC_PROBES_MAX, rto14),
			0ULL);
	/* no timer (timeout 0): no probe either */
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 0, 0), 0ULL);
	/* only while it comes at most half way through the timeout */
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 0, 2 * floor), floor);
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 0, 2 * floor - 1), 0ULL);
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 1, 3 * floor), 0ULL);
	/* a long round trip sets the wait: 20 ms + 4 * 10 ms */
	r = (struct shca_rc_rtt){ .srtt_us = 20000, .var_us = 10000 };
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 0, shca_rc_rto_ns(18)),
			60000ULL * NSEC_PER_USEC);
	/* ... and is too long for a 67 ms timeout */
	KUNIT_EXPECT_EQ(test, shca_rc_probe_ns(&r, 0, rto14), 0ULL);
}

static void shca_rc_test_rto_backoff(struct kunit *test)
{
	u64 total = 0;
	u8 n;

	/* no timer stays no timer, however many timeouts */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_backoff_ns(0, 3), 0ULL);
	/* the first wait is the QP's own local ACK timeout */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_backoff_ns(14, 0), shca_rc_rto_ns(14));
	/* then it doubles with each timeout in a row ... */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_backoff_ns(14, 1), 2 * shca_rc_rto_ns(14));
	KUNIT_EXPECT_EQ(test, shca_rc_rto_backoff_ns(14, 3), 8 * shca_rc_rto_ns(14));
	/* ... up to 2^SHCA_RC_RTO_BACKOFF_MAX times, and no further */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_backoff_ns(14, SHCA_RC_RTO_BACKOFF_MAX),
			shca_rc_rto_ns(14) << SHCA_RC_RTO_BACKOFF_MAX);
	KUNIT_EXPECT_EQ(test, shca_rc_rto_backoff_ns(14, 255),
			shca_rc_rto_ns(14) << SHCA_RC_RTO_BACKOFF_MAX);
	/* the largest attribute, backed off, does not overflow */
	KUNIT_EXPECT_EQ(test, shca_rc_rto_backoff_ns(31, 255),
			(4096ULL << 31) << SHCA_RC_RTO_BACKOFF_MAX);
	/*
	 * Never shorter than the IBTA minimum; and retry_cnt 7 with timeout
	 * 14 (perftest's) gives a silent peer 1 + 2 + 4 + 8 + 16 * 4 = 79
	 * timeouts' worth (about 5.3 s) before the retry error.
	 */
	for (n = 0; n <= 7; n++) {
		KUNIT_EXPECT_GE(test, shca_rc_rto_backoff_ns(14, n), shca_rc_rto_ns(14));
		total += shca_rc_rto_backoff_ns(14, n);
	}
	KUNIT_EXPECT_EQ(test, total, 79 * shca_rc_rto_ns(14));
}

static void shca_rc_test_rnr_table(struct kunit *test)
{
	/* IBTA RNR NAK timer field: code 0 is the longest, 655.36 ms */
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(0), 655360ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(1), 10ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(2), 20ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(5), 60ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(12), 640ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(14), 1280ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(18), 5120ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(24), 40960ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(30), 327680ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(31), 491520ULL * NSEC_PER_USEC);
	/* only the 5-bit field counts */
	KUNIT_EXPECT_EQ(test, shca_rc_rnr_ns(0x21), shca_rc_rnr_ns(1));
}

static void shca_rc_test_rnr_monotonic(struct kunit *test)
{
	u8 code;

	for (code = 2; code < 32; code++)
		KUNIT_EXPECT_GT(test, shca_rc_rnr_ns(code),
				shca_rc_rnr_ns(code - 1));
}

/* Far more than any finite budget: 3-bit attributes allow at most 7. */
#define SHCA_TEST_MANY_RETRIES	10000U

/*
 * Take retries from @r the way the requester does on every timeout or
 * RNR NAK until it refuses one (the QP's error) or @max were granted.
 */
static unsigned int shca_test_retries(struct shca_rc_retry *r,
				      unsigned int max)
{
	unsigned int n = 0;

	while (n < max && shca_rc_retry_take(r))
		n++;
	return n;
}

static void shca_rc_test_retry_cnt(struct kunit *test)
{
	struct shca_rc_retry r;
	u8 cnt;

	/* retry_cnt 0..7: exactly that many retries, then the error */
	for (cnt = 0; cnt <= 7; cnt++) {
		shca_rc_retry_init_cnt(&r, cnt);
		KUNIT_EXPECT_EQ_MSG(test,
				    shca_test_retries(&r, SHCA_TEST_MANY_RETRIES),
				    (unsigned int)cnt, "retry_cnt %u", cnt);
		/* exhausted stays exhausted */
		KUNIT_EXPECT_FALSE_MSG(test, shca_rc_retry_take(&r),
				       "retry_cnt %u", cnt);
	}

	/* retry_cnt 7 is seven retries, not infinite */
	shca_rc_retry_init_cnt(&r, 7);
	for (cnt = 0; cnt < 7; cnt++)
		KUNIT_EXPECT_TRUE(test, shca_rc_retry_take(&r));
	KUNIT_EXPECT_FALSE(test, shca_rc_retry_take(&r));

	/* forward progress reloads the full budget */
	shca_rc_retry_init_cnt(&r, 3);
	KUNIT_EXPECT_EQ(test, shca_test_retries(&r, 2), 2U);
	shca_rc_retry_init_cnt(&r, 3);
	KUNIT_EXPECT_EQ(test, shca_test_retries(&r, SHCA_TEST_MANY_RETRIES),
			3U);
}

static void shca_rc_test_rnr_retry(struct kunit *test)
{
	struct shca_rc_retry r;
	u8 cnt;

	/* rnr_retry 0..6: exactly that many retries, then the error */
	for (cnt = 0; cnt < SHCA_REQ_RNR_INFINITE; cnt++) {
		shca_rc_retry_init_rnr(&r, cnt);
		KUNIT_EXPECT_EQ_MSG(test,
				    shca_test_retries(&r, SHCA_TEST_MANY_RETRIES),
				    (unsigned int)cnt, "rnr_retry %u", cnt);
		KUNIT_EXPECT_FALSE_MSG(test, shca_rc_retry_take(&r),
				       "rnr_retry %u", cnt);
	}

	/* rnr_retry 7 is forever: thousands of RNR NAKs never exhaust it */
	shca_rc_retry_init_rnr(&r, 7);
	KUNIT_EXPECT_EQ(test, shca_test_retries(&r, SHCA_TEST_MANY_RETRIES),
			SHCA_TEST_MANY_RETRIES);
	KUNIT_EXPECT_TRUE(test, shca_rc_retry_take(&r));
}

static void shca_rc_test_ack_classify(struct kunit *test)
{
	/* una 100, sent up to 109 */
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(100, 100, 110),
			SHCA_RC_ACK_NEW);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(105, 100, 110),
			SHCA_RC_ACK_NEW);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(109, 100, 110),
			SHCA_RC_ACK_NEW);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(99, 100, 110),
			SHCA_RC_ACK_DUP);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(10, 100, 110),
			SHCA_RC_ACK_DUP);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(110, 100, 110),
			SHCA_RC_ACK_INVALID);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(5000, 100, 110),
			SHCA_RC_ACK_INVALID);
	/* nothing outstanding: an old ACK is a duplicate, a new one bogus */
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(99, 100, 100),
			SHCA_RC_ACK_DUP);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(100, 100, 100),
			SHCA_RC_ACK_INVALID);
}

static void shca_rc_test_ack_wrap(struct kunit *test)
{
	/* window 0xfffffe .. 0x000002 straddles the wrap */
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(0xfffffe, 0xfffffe, 3),
			SHCA_RC_ACK_NEW);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(0xffffff, 0xfffffe, 3),
			SHCA_RC_ACK_NEW);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(0, 0xfffffe, 3),
			SHCA_RC_ACK_NEW);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(2, 0xfffffe, 3),
			SHCA_RC_ACK_NEW);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(3, 0xfffffe, 3),
			SHCA_RC_ACK_INVALID);
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(0xfffffd, 0xfffffe, 3),
			SHCA_RC_ACK_DUP);
	/* garbage above the 24 PSN bits is ignored */
	KUNIT_EXPECT_EQ(test, shca_rc_ack_classify(0xff000001, 0xfffffe, 3),
			SHCA_RC_ACK_NEW);
}

static void shca_rc_test_aeth(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x00), SHCA_RC_AETH_ACK);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x1f), SHCA_RC_AETH_ACK);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x20), SHCA_RC_AETH_RNR);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x3f), SHCA_RC_AETH_RNR);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x60), SHCA_RC_AETH_NAK_SEQ);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x61), SHCA_RC_AETH_NAK_INV);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x62),
			SHCA_RC_AETH_NAK_ACCESS);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x63), SHCA_RC_AETH_NAK_OP);
	/* reserved encodings */
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x64), SHCA_RC_AETH_BAD);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x40), SHCA_RC_AETH_BAD);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0x80), SHCA_RC_AETH_BAD);
	KUNIT_EXPECT_EQ(test, shca_rc_aeth_kind(0xff), SHCA_RC_AETH_BAD);
}

static void shca_rc_test_npkts(struct kunit *test)
{
	/* a zero-length message still takes one PSN */
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(0, 1024, false), 1U);
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(0, 1024, true), 1U);
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(1, 1024, false), 1U);
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(1024, 1024, false), 1U);
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(1025, 1024, false), 2U);
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(65536, 4096, true), 16U);
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(65537, 256, true), 257U);
	KUNIT_EXPECT_EQ(test, shca_rc_npkts(1U << 31, 4096, false),
			1U << 19);
}

static void shca_rc_test_window(struct kunit *test)
{
	struct shca_rc_win win;
	u32 i;

	/* a fresh connection may fill the whole window at once */
	shca_rc_win_reset(&win);
	KUNIT_EXPECT_EQ(test, win.cur, (u32)SHCA_REQ_MAX_UNACKED);
	shca_rc_win_grow(&win, 1000);
	KUNIT_EXPECT_EQ(test, win.cur, (u32)SHCA_REQ_MAX_UNACKED);

	/* a sequence NAK halves it, and so does the next one */
	shca_rc_win_loss(&win, false);
	KUNIT_EXPECT_EQ(test, win.cur, 64U);
	KUNIT_EXPECT_EQ(test, win.ssthresh, 64U);
	shca_rc_win_loss(&win, false);
	KUNIT_EXPECT_EQ(test, win.cur, 32U);

	/* above ssthresh: one PSN per full window acknowledged */
	shca_rc_win_grow(&win, 31);
	KUNIT_EXPECT_EQ(test, win.cur, 32U);
	shca_rc_win_grow(&win, 1);
	KUNIT_EXPECT_EQ(test, win.cur, 33U);
	KUNIT_EXPECT_EQ(test, win.acc, 0U);

	/* never below the floor, however many losses */
	for (i = 0; i < 20; i++)
		shca_rc_win_loss(&win, false);
	KUNIT_EXPECT_EQ(test, win.cur, (u32)SHCA_REQ_MIN_WIN);

	/* a timeout restarts from the floor and doubles up to ssthresh */
	shca_rc_win_reset(&win);
	shca_rc_win_loss(&win, true);
	KUNIT_EXPECT_EQ(test, win.cur, (u32)SHCA_REQ_MIN_WIN);
	KUNIT_EXPECT_EQ(test, win.ssthresh, 64U);
	shca_rc_win_grow(&win, SHCA_REQ_MIN_WIN);
	KUNIT_EXPECT_EQ(test, win.cur, 2U * SHCA_REQ_MIN_WIN);
	shca_rc_win_grow(&win, 1000);
	KUNIT_EXPECT_EQ(test, win.cur, 64U);

	/* and back to the maximum, never beyond it */
	for (i = 0; i < 100; i++)
		shca_rc_win_grow(&win, 128);
	KUNIT_EXPECT_EQ(test, win.cur, (u32)SHCA_REQ_MAX_UNACKED);
}

/* A READ is asked for a window at a time; a resend stays inside. */
static void shca_rc_test_read_seg(struct kunit *test)
{
	/* the first request: a window of a 6144-PSN READ */
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(0, 0, 0, 6144, 16), 16U);
	/* the next waits for every response to the last one */
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(16, 16, 15, 6144, 16), 16U);
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(16, 16, 16, 6144, 32), 48U);
	/* the rest when it is less than a window */
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(6140, 6140, 6140, 6144,
						   128), 6144U);
	/* a READ within the window is one request */
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(0, 0, 0, 5, 128), 5U);
	/* a go-back into the last request resends its rest, never more */
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(20, 48, 20, 6144, 128),
			48U);
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(0, 16, 0, 6144, 8), 16U);
	/* a window of 0 still makes progress */
	KUNIT_EXPECT_EQ(test, shca_rc_read_seg_end(0, 0, 0, 10, 0), 1U);
}

static void shca_rc_test_read_last(struct kunit *test)
{
	/* the WQE's last response must say LAST */
	KUNIT_EXPECT_TRUE(test, shca_rc_read_last_ok(9, 10, 10, true));
	KUNIT_EXPECT_FALSE(test, shca_rc_read_last_ok(9, 10, 10, false));
	/* the end of the request sent last may, and need not */
	KUNIT_EXPECT_TRUE(test, shca_rc_read_last_ok(3, 4, 10, true));
	KUNIT_EXPECT_TRUE(test, shca_rc_read_last_ok(3, 4, 10, false));
	/* nowhere else */
	KUNIT_EXPECT_FALSE(test, shca_rc_read_last_ok(2, 4, 10, true));
	KUNIT_EXPECT_TRUE(test, shca_rc_read_last_ok(2, 4, 10, false));
}

/* The shadow queue: no extra slot unless the QP takes internal ops. */
static void shca_rc_test_shadow_entries(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_req_shadow_entries(1, false), 1U);
	KUNIT_EXPECT_EQ(test, shca_req_shadow_entries(16384, false), 16384U);
	/* room for SHCA_REQ_IOP_SLOTS more, a power of two */
	KUNIT_EXPECT_EQ(test, shca_req_shadow_entries(1, true), 32U);
	KUNIT_EXPECT_EQ(test, shca_req_shadow_entries(16, true), 32U);
	KUNIT_EXPECT_EQ(test, shca_req_shadow_entries(32, true), 64U);
	KUNIT_EXPECT_EQ(test, shca_req_shadow_entries(16384, true), 32768U);
	KUNIT_EXPECT_GE(test, shca_req_shadow_entries(4, true),
			4U + SHCA_REQ_IOP_SLOTS);
}

/* Internal operations first while a shadow is free; the ring otherwise. */
static void shca_rc_test_fetch_src(struct kunit *test)
{
	/* an ordinary QP: the ring, full or not (a full one is checked) */
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(0, 8, false, 0, 8),
			SHCA_REQ_SRC_USER);
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(7, 8, false, 7, 8),
			SHCA_REQ_SRC_USER);
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(8, 8, false, 8, 8),
			SHCA_REQ_SRC_USER);
	/* a queued internal operation goes first while a slot is free */
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(0, 32, true, 0, 1),
			SHCA_REQ_SRC_IOP);
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(31, 32, true, 1, 1),
			SHCA_REQ_SRC_IOP);
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(5, 32, false, 0, 1),
			SHCA_REQ_SRC_USER);
	/* shadows full: nothing, unless the ring has them all (checked) */
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(32, 32, true, 1, 1),
			SHCA_REQ_SRC_USER);
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(32, 32, true, 0, 1),
			SHCA_REQ_SRC_NONE);
	KUNIT_EXPECT_EQ(test, shca_req_fetch_src(32, 32, false, 15, 16),
			SHCA_REQ_SRC_NONE);
}

/* FLUSH WQE parameters: type, level and a range the RETH can carry. */
static void shca_rc_test_flush(struct kunit *test)
{
	const u8 g = SHCA_FETH_PLT_GLOBAL, p = SHCA_FETH_PLT_PERSISTENT;
	const u8 r = SHCA_FETH_SEL_RANGE, m = SHCA_FETH_SEL_MR;

	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g, r, 4096), 0);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(p, r, 0), 0);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g | p, m, 0), 0);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g, r, SHCA_REQ_FLUSH_MAX),
			0);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g, r,
						   SHCA_REQ_FLUSH_MAX + 1),
			-EMSGSIZE);
	/* a whole region: the length is not used */
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g, m, U64_MAX), 0);
	/* no type, a reserved type bit, reserved levels */
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(0, r, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(4, r, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g | 0x80, r, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g, 2, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_req_flush_check(g, 0xff, 8), -EINVAL);
	/* the RETH length: the range's, none for a whole region */
	KUNIT_EXPECT_EQ(test, shca_req_flush_dma_len(r, 4096), 4096U);
	KUNIT_EXPECT_EQ(test, shca_req_flush_dma_len(r, SHCA_REQ_FLUSH_MAX),
			(u32)SHCA_REQ_FLUSH_MAX);
	KUNIT_EXPECT_EQ(test, shca_req_flush_dma_len(m, 12345678), 0U);
}

static struct kunit_case shca_rc_test_cases[] = {
	KUNIT_CASE(shca_rc_test_rto),
	KUNIT_CASE(shca_rc_test_rto_backoff),
	KUNIT_CASE(shca_rc_test_rtt),
	KUNIT_CASE(shca_rc_test_probe),
	KUNIT_CASE(shca_rc_test_rnr_table),
	KUNIT_CASE(shca_rc_test_rnr_monotonic),
	KUNIT_CASE(shca_rc_test_retry_cnt),
	KUNIT_CASE(shca_rc_test_rnr_retry),
	KUNIT_CASE(shca_rc_test_ack_classify),
	KUNIT_CASE(shca_rc_test_ack_wrap),
	KUNIT_CASE(shca_rc_test_aeth),
	KUNIT_CASE(shca_rc_test_npkts),
	KUNIT_CASE(shca_rc_test_read_seg),
	KUNIT_CASE(shca_rc_test_read_last),
	KUNIT_CASE(shca_rc_test_window),
	KUNIT_CASE(shca_rc_test_shadow_entries),
	KUNIT_CASE(shca_rc_test_fetch_src),
	KUNIT_CASE(shca_rc_test_flush),
	{}
};

static struct kunit_suite shca_rc_test_suite = {
	.name = "shca_rc",
	.test_cases = shca_rc_test_cases,
};

kunit_test_suites(&shca_rc_test_suite);
