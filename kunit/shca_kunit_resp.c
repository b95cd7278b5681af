// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the RC/UC responder's pure decisions (rc_resp_logic.h), and
 * those of holding a packet after a gap (hold_logic.h).
 */
#include <kunit/test.h>

#include "hold_logic.h"
#include "rc_resp_logic.h"
#include "wire.h"

static u32 flags_of(u8 opcode)
{
	return shca_opcode_info(opcode)->flags;
}

#define RC(op)	flags_of(SHCA_TR_RC | SHCA_OPC_##op)
#define UC(op)	flags_of(SHCA_TR_UC | SHCA_OPC_##op)

static void shca_resp_test_psn_class(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(5, 5), SHCA_PSN_EXPECTED);
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(4, 5), SHCA_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(6, 5), SHCA_PSN_FUTURE);
	/* across the wrap */
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(0xffffff, 0),
			SHCA_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(0, 0xffffff),
			SHCA_PSN_FUTURE);
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(0, 0), SHCA_PSN_EXPECTED);
	/* the duplicate window is 2^23 PSNs behind ePSN */
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(0x800000, 0),
			SHCA_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(0x7fffff, 0),
			SHCA_PSN_FUTURE);
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(0x100, 0x800100),
			SHCA_PSN_DUPLICATE);
	/* garbage above bit 23 is ignored */
	KUNIT_EXPECT_EQ(test, shca_resp_psn_class(0x81000005, 5),
			SHCA_PSN_EXPECTED);
}

static void shca_resp_test_seq_idle(struct kunit *test)
{
	/* outside a message: FIRST and ONLY only */
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(SEND_FIRST)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(SEND_ONLY)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(SEND_ONLY_WITH_INVALIDATE)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(RDMA_WRITE_FIRST)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(RDMA_WRITE_ONLY_WITH_IMMEDIATE)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(RDMA_READ_REQUEST)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(COMPARE_SWAP)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(FETCH_ADD)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, RC(FLUSH)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(0, UC(SEND_ONLY)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(0, RC(SEND_MIDDLE)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(0, RC(SEND_LAST)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(0, RC(SEND_LAST_WITH_IMMEDIATE)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(0, RC(RDMA_WRITE_MIDDLE)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(0, UC(RDMA_WRITE_LAST)));
}

static void shca_resp_test_seq_inside(struct kunit *test)
{
	u32 send = SHCA_OPF_SEND, write = SHCA_OPF_WRITE;

	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(send, RC(SEND_MIDDLE)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(send, RC(SEND_LAST)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(send, RC(SEND_LAST_WITH_INVALIDATE)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(write, RC(RDMA_WRITE_MIDDLE)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(write, RC(RDMA_WRITE_LAST_WITH_IMMEDIATE)));
	KUNIT_EXPECT_TRUE(test, shca_resp_seq_ok(write, UC(RDMA_WRITE_LAST)));
	/* a new message while one is open */
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(send, RC(SEND_FIRST)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(send, RC(SEND_ONLY)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(write, RC(RDMA_READ_REQUEST)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(write, RC(FETCH_ADD)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(write, RC(FLUSH)));
	/* the wrong kind */
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(send, RC(RDMA_WRITE_MIDDLE)));
	KUNIT_EXPECT_FALSE(test, shca_resp_seq_ok(write, RC(SEND_LAST)));
}

static void shca_resp_test_seq_next(struct kunit *test)
{
	u32 kind;

	kind = shca_resp_seq_next(0, RC(SEND_FIRST));
	KUNIT_EXPECT_EQ(test, kind, (u32)SHCA_OPF_SEND);
	kind = shca_resp_seq_next(kind, RC(SEND_MIDDLE));
	KUNIT_EXPECT_EQ(test, kind, (u32)SHCA_OPF_SEND);
	kind = shca_resp_seq_next(kind, RC(SEND_LAST_WITH_IMMEDIATE));
	KUNIT_EXPECT_EQ(test, kind, 0U);
	KUNIT_EXPECT_EQ(test, shca_resp_seq_next(0, UC(RDMA_WRITE_FIRST)),
			(u32)SHCA_OPF_WRITE);
	KUNIT_EXPECT_EQ(test, shca_resp_seq_next(0, RC(RDMA_WRITE_ONLY)), 0U);
	KUNIT_EXPECT_EQ(test, shca_resp_seq_next(0, RC(RDMA_READ_REQUEST)), 0U);
	KUNIT_EXPECT_EQ(test, shca_resp_seq_next(0, RC(COMPARE_SWAP)), 0U);
}

static void shca_resp_test_len(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, shca_resp_len_ok(RC(SEND_ONLY), 0, 1024));
	KUNIT_EXPECT_TRUE(test, shca_resp_len_ok(RC(SEND_ONLY), 1024, 1024));
	KUNIT_EXPECT_FALSE(test, shca_resp_len_ok(RC(SEND_ONLY), 1025, 1024));
	KUNIT_EXPECT_TRUE(test, shca_resp_len_ok(RC(SEND_FIRST), 1024, 1024));
	KUNIT_EXPECT_FALSE(test, shca_resp_len_ok(RC(SEND_FIRST), 1020, 1024));
	KUNIT_EXPECT_TRUE(test, shca_resp_len_ok(RC(RDMA_WRITE_MIDDLE), 256, 256));
	KUNIT_EXPECT_FALSE(test, shca_resp_len_ok(RC(RDMA_WRITE_MIDDLE), 0, 256));
	KUNIT_EXPECT_TRUE(test, shca_resp_len_ok(RC(SEND_LAST), 1, 256));
	KUNIT_EXPECT_TRUE(test, shca_resp_len_ok(RC(SEND_LAST), 256, 256));
	KUNIT_EXPECT_FALSE(test, shca_resp_len_ok(RC(SEND_LAST), 0, 256));
	KUNIT_EXPECT_FALSE(test, shca_resp_len_ok(UC(RDMA_WRITE_LAST), 257, 256));
	KUNIT_EXPECT_TRUE(test, shca_resp_len_ok(RC(RDMA_WRITE_ONLY), 0, 4096));
}

static void shca_resp_test_read(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_resp_read_npkts(0, 1024), 1U);
	KUNIT_EXPECT_EQ(test, shca_resp_read_npkts(1, 1024), 1U);
	KUNIT_EXPECT_EQ(test, shca_resp_read_npkts(1024, 1024), 1U);
	KUNIT_EXPECT_EQ(test, shca_resp_read_npkts(1025, 1024), 2U);
	KUNIT_EXPECT_EQ(test, shca_resp_read_npkts(65536, 4096), 16U);
	KUNIT_EXPECT_EQ(test, shca_resp_read_npkts(0x80000000U, 256),
			0x800000U);
	KUNIT_EXPECT_EQ(test, shca_resp_read_npkts(U32_MAX, 4096), 0x100000U);

	KUNIT_EXPECT_EQ(test, shca_resp_read_opcode(0, 1),
			SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_ONLY);
	KUNIT_EXPECT_EQ(test, shca_resp_read_opcode(0, 2),
			SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_FIRST);
	KUNIT_EXPECT_EQ(test, shca_resp_read_opcode(1, 2),
			SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_LAST);
	KUNIT_EXPECT_EQ(test, shca_resp_read_opcode(1, 3),
			SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_MIDDLE);
	KUNIT_EXPECT_EQ(test, shca_resp_read_opcode(2, 3),
			SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_LAST);
	/* AETH exactly on FIRST, LAST and ONLY */
	KUNIT_EXPECT_TRUE(test, flags_of(shca_resp_read_opcode(0, 3)) &
			  SHCA_OPF_AETH);
	KUNIT_EXPECT_FALSE(test, flags_of(shca_resp_read_opcode(1, 3)) &
			   SHCA_OPF_AETH);
	KUNIT_EXPECT_TRUE(test, flags_of(shca_resp_read_opcode(2, 3)) &
			  SHCA_OPF_AETH);
}

static void shca_resp_test_syndromes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_resp_rnr_syndrome(0), 0x20);
	KUNIT_EXPECT_EQ(test, shca_resp_rnr_syndrome(12), 0x2c);
	KUNIT_EXPECT_EQ(test, shca_resp_rnr_syndrome(31), 0x3f);
	KUNIT_EXPECT_EQ(test, shca_resp_rnr_syndrome(0xff), 0x3f);
	KUNIT_EXPECT_EQ(test, SHCA_AETH_NAK_SEQ, 0x60);
	KUNIT_EXPECT_EQ(test, SHCA_AETH_NAK_INV_REQ, 0x61);
	KUNIT_EXPECT_EQ(test, SHCA_AETH_NAK_REM_ACC, 0x62);
	KUNIT_EXPECT_EQ(test, SHCA_AETH_NAK_REM_OP, 0x63);
}

/* Going back to a resource: pending ones stay, answered ones come back. */
static void shca_resp_test_rewind(struct kunit *test)
{
	/* 8 slots, 2 pending at slots 5 and 6 */
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 5, 2, 5), 0);
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 5, 2, 6), 0);
	/* answered: slot 4 (newest), slot 7 (oldest, around the ring) */
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 5, 2, 4), 1);
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 5, 2, 0), 5);
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 5, 2, 7), 6);
	/* never more pending than slots */
	KUNIT_EXPECT_LE(test, 2 + shca_resp_rewind_count(8, 5, 2, 7), 8U);
	/* nothing pending: the next slot to fill is the oldest answered */
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 3, 0, 3), 8);
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 3, 0, 2), 1);
	/* all pending */
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(8, 3, 8, 2), 0);
	/* one slot */
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(1, 0, 0, 0), 1);
	KUNIT_EXPECT_EQ(test, shca_resp_rewind_count(1, 0, 1, 0), 0);
}

/* Hold a packet after a gap only while it may be overtaken, and not for long. */
static void shca_resp_test_hold_ok(struct kunit *test)
{
	/* no hold running: start one only if the gap's packet may come */
	KUNIT_EXPECT_TRUE(test, shca_hold_ok(0, false, false, true, false));
	KUNIT_EXPECT_FALSE(test, shca_hold_ok(0, false, false, false, false));
	/* a hold running: joined until ended, whatever its age or @may_start */
	KUNIT_EXPECT_TRUE(test, shca_hold_ok(1, false, true, false, false));
	KUNIT_EXPECT_FALSE(test, shca_hold_ok(1, false, true, true, true));
	/* one being run again counts as running, even with none held */
	KUNIT_EXPECT_TRUE(test, shca_hold_ok(0, false, true, false, false));
	KUNIT_EXPECT_FALSE(test, shca_hold_ok(0, false, true, true, true));
	KUNIT_EXPECT_TRUE(test, shca_hold_ok(SHCA_HOLD_MAX - 1, false, true,
					     false, false));
	/* never more than SHCA_HOLD_MAX */
	KUNIT_EXPECT_FALSE(test, shca_hold_ok(SHCA_HOLD_MAX, false, true,
					      true, false));
	/* never after a NAK: the requester resends from ePSN anyway */
	KUNIT_EXPECT_FALSE(test, shca_hold_ok(0, true, false, true, false));
	KUNIT_EXPECT_FALSE(test, shca_hold_ok(3, true, true, false, false));
}

/* A hold lasts its minimum, then while busy, and never past its length. */
static void shca_resp_test_hold_keep(struct kunit *test)
{
	struct shca_hold_time t = { .start = 1000, .min = 40, .len = 200 };

	KUNIT_EXPECT_TRUE(test, shca_hold_keep(&t, 1000, false));
	KUNIT_EXPECT_TRUE(test, shca_hold_keep(&t, 1039, false));
	KUNIT_EXPECT_FALSE(test, shca_hold_keep(&t, 1040, false));
	KUNIT_EXPECT_TRUE(test, shca_hold_keep(&t, 1040, true));
	KUNIT_EXPECT_TRUE(test, shca_hold_keep(&t, 1199, true));
	KUNIT_EXPECT_FALSE(test, shca_hold_keep(&t, 1200, true));
	KUNIT_EXPECT_FALSE(test, shca_hold_expired(&t, 1199));
	KUNIT_EXPECT_TRUE(test, shca_hold_expired(&t, 1200));
	/* looked at again when the minimum ends, then every @check */
	KUNIT_EXPECT_EQ(test, shca_hold_wait(&t, 1000, 7), 40ULL);
	KUNIT_EXPECT_EQ(test, shca_hold_wait(&t, 1030, 7), 10ULL);
	KUNIT_EXPECT_EQ(test, shca_hold_wait(&t, 1040, 7), 7ULL);
	/* ePSN or una moved: the next gap gets the whole time again */
	shca_hold_restart(&t, 1150);
	KUNIT_EXPECT_EQ(test, t.start, 1150ULL);
	KUNIT_EXPECT_TRUE(test, shca_hold_keep(&t, 1200, true));
	KUNIT_EXPECT_TRUE(test, shca_hold_keep(&t, 1189, false));
	KUNIT_EXPECT_FALSE(test, shca_hold_keep(&t, 1350, true));
	KUNIT_EXPECT_FALSE(test, shca_hold_over(&t));
	/* ended: at once, busy or not, and a restart does not revive it */
	shca_hold_end(&t);
	KUNIT_EXPECT_TRUE(test, shca_hold_over(&t));
	KUNIT_EXPECT_TRUE(test, shca_hold_expired(&t, 1150));
	KUNIT_EXPECT_FALSE(test, shca_hold_keep(&t, 1150, true));
	shca_hold_restart(&t, 2000);
	KUNIT_EXPECT_TRUE(test, shca_hold_over(&t));
	KUNIT_EXPECT_FALSE(test, shca_hold_keep(&t, 2000, true));
	/* the test parameter's: min == len, kept whatever the backlogs */
	t = (struct shca_hold_time){ .start = 5, .min = 3000, .len = 3000 };
	KUNIT_EXPECT_TRUE(test, shca_hold_keep(&t, 3004, false));
	KUNIT_EXPECT_FALSE(test, shca_hold_keep(&t, 3005, true));
}

/* Packets on their way: sent minus arrived, across the counters' wrap. */
static void shca_resp_test_hold_transit(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_hold_transit(10, 10), 0);
	KUNIT_EXPECT_EQ(test, shca_hold_transit(12, 10), 2);
	/* more arrived than counted sent: a count given up on earlier */
	KUNIT_EXPECT_EQ(test, shca_hold_transit(10, 13), -3);
	KUNIT_EXPECT_EQ(test, shca_hold_transit(1, 0xffffffff), 2);
	KUNIT_EXPECT_EQ(test, shca_hold_transit(0xfffffffe, 1), -3);
}

/* Held requests are ordered by their distance after ePSN, across the wrap. */
static void shca_resp_test_hold_before(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, shca_hold_before(11, 12, 10));
	KUNIT_EXPECT_FALSE(test, shca_hold_before(12, 11, 10));
	KUNIT_EXPECT_FALSE(test, shca_hold_before(12, 12, 10));
	/* ePSN just before the wrap: 0 is nearer than 0xfffffe is far */
	KUNIT_EXPECT_TRUE(test, shca_hold_before(0xffffff, 0, 0xfffffd));
	KUNIT_EXPECT_TRUE(test, shca_hold_before(0, 5, 0xfffffd));
	KUNIT_EXPECT_FALSE(test, shca_hold_before(3, 0xfffffe, 0xfffffd));
	/* garbage in the top byte is ignored */
	KUNIT_EXPECT_TRUE(test, shca_hold_before(0x01000001, 2, 0));
}

/* A FLUSH's FETH: a known placement type, a known selectivity level. */
static void shca_resp_test_feth(struct kunit *test)
{
	u8 plt, sel;

	for (plt = 0; plt < 16; plt++)
		for (sel = 0; sel < 4; sel++)
			KUNIT_EXPECT_EQ_MSG(test, shca_resp_feth_ok(plt, sel),
					    plt >= 1 && plt <= 3 && sel <= 1,
					    "plt %u sel %u", plt, sel);
}

static struct kunit_case shca_resp_test_cases[] = {
	KUNIT_CASE(shca_resp_test_psn_class),
	KUNIT_CASE(shca_resp_test_hold_ok),
	KUNIT_CASE(shca_resp_test_hold_keep),
	KUNIT_CASE(shca_resp_test_hold_transit),
	KUNIT_CASE(shca_resp_test_hold_before),
	KUNIT_CASE(shca_resp_test_seq_idle),
	KUNIT_CASE(shca_resp_test_seq_inside),
	KUNIT_CASE(shca_resp_test_seq_next),
	KUNIT_CASE(shca_resp_test_len),
	KUNIT_CASE(shca_resp_test_read),
	KUNIT_CASE(shca_resp_test_syndromes),
	KUNIT_CASE(shca_resp_test_rewind),
	KUNIT_CASE(shca_resp_test_feth),
	{}
};

static struct kunit_suite shca_resp_test_suite = {
	.name = "shca_resp",
	.test_cases = shca_resp_test_cases,
};

kunit_test_suites(&shca_resp_test_suite);
