// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: RoCE v2 transport headers - opcode table, pack, parse (wire.c).
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "wire.h"

#define SHCA_TEST_PAYLOAD	8	/* payload + pad bytes used below */

/* Offset of the first byte that differs, @n if none does. */
static size_t shca_test_first_diff(const u8 *a, const u8 *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return i;
	return n;
}

/*
 * Pack @h into a buffer one byte longer than @want, filled with 0x77: the
 * headers are exactly @want, and the byte after them is untouched.
 */
static void shca_test_pack_exact(struct kunit *test,
				 const struct shca_wire_hdr *h,
				 const u8 *want, size_t len)
{
	u8 buf[64];

	KUNIT_ASSERT_LT(test, len, sizeof(buf));
	memset(buf, 0x77, sizeof(buf));
	KUNIT_ASSERT_EQ(test, shca_wire_pack(buf, len + 1, h), (int)len);
	KUNIT_EXPECT_EQ(test, shca_test_first_diff(buf, want, len), len);
	KUNIT_EXPECT_EQ(test, buf[len], 0x77);
}

static bool shca_test_transport_known(u8 opcode)
{
	switch (shca_opcode_transport(opcode)) {
	case SHCA_TR_RC:
	case SHCA_TR_UC:
	case SHCA_TR_UD:
	case SHCA_TR_CNP:
	case SHCA_TR_XRC:
		return true;
	default:
		return false;
	}
}

static unsigned int shca_test_ext_len(u32 flags)
{
	unsigned int len = SHCA_BTH_BYTES;
	enum shca_ext ext;

	for (ext = 0; ext < SHCA_EXT_NUM; ext++)
		if (flags & BIT(ext))
			len += shca_ext_size(ext);
	return len;
}

/* Every table entry is self-consistent. */
static void shca_wire_test_table(struct kunit *test)
{
	static const u32 pos = SHCA_OPF_FIRST | SHCA_OPF_MIDDLE |
			       SHCA_OPF_LAST;
	unsigned int n = 0, op;

	for (op = 0; op < 256; op++) {
		const struct shca_opcode_info *info = shca_opcode_info(op);
		bool reliable;
		u32 f, role;

		if (!info)
			continue;
		n++;
		f = info->flags;
		role = f & (SHCA_OPF_REQ | SHCA_OPF_RESP | SHCA_OPF_CNP);
		reliable = shca_opcode_transport(op) == SHCA_TR_RC ||
			   shca_opcode_transport(op) == SHCA_TR_XRC;
		KUNIT_EXPECT_TRUE_MSG(test, shca_test_transport_known(op),
				      "%s", info->name);
		KUNIT_EXPECT_EQ_MSG(test, info->hdr_len, shca_test_ext_len(f),
				    "%s", info->name);
		KUNIT_EXPECT_EQ_MSG(test, hweight32(role), 1, "%s",
				    info->name);
		if (f & SHCA_OPF_MIDDLE)
			KUNIT_EXPECT_EQ_MSG(test, f & pos, SHCA_OPF_MIDDLE,
					    "%s", info->name);
		if (f & SHCA_OPF_PAYLOAD)
			KUNIT_EXPECT_NE_MSG(test, f & pos, 0U, "%s",
					    info->name);
		/* the reliable transports' requests, and only they, are ACKed */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SHCA_OPF_NEEDS_ACK),
				    reliable && (f & SHCA_OPF_REQ), "%s",
				    info->name);
		/* an XRCETH on exactly the XRC requests */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SHCA_OPF_XRCETH),
				    shca_opcode_transport(op) == SHCA_TR_XRC &&
				    (f & SHCA_OPF_REQ), "%s", info->name);
		KUNIT_EXPECT_EQ_MSG(test, info->hdr_len % 4, 0, "%s",
				    info->name);
	}
	/*
	 * RC 0x00-0x14, 0x16-0x17, 0x1c and 0x1d, UC sends and writes, XRC
	 * as RC but ATOMIC WRITE and FLUSH, UD, CNP
	 */
	KUNIT_EXPECT_EQ(test, n, 25U + 12U + 23U + 2U + 1U);
}

static void shca_wire_test_unknown_opcodes(struct kunit *test)
{
	unsigned int op;

	KUNIT_EXPECT_NULL(test, shca_opcode_info(SHCA_TR_RC | 0x15));
	for (op = 0x18; op < 0x20; op++)
		if (op != SHCA_OPC_ATOMIC_WRITE && op != SHCA_OPC_FLUSH)
			KUNIT_EXPECT_NULL(test,
					  shca_opcode_info(SHCA_TR_RC | op));
	for (op = SHCA_OPC_RDMA_READ_REQUEST; op < 0x20; op++)
		KUNIT_EXPECT_NULL(test, shca_opcode_info(SHCA_TR_UC | op));
	for (op = 0; op < 0x20; op++) {
		KUNIT_EXPECT_NULL(test, shca_opcode_info(SHCA_TR_RD | op));
		/* XRC has RC's opcodes but ATOMIC WRITE and FLUSH, no others */
		if (!shca_opcode_info(SHCA_TR_RC | op) ||
		    op == SHCA_OPC_ATOMIC_WRITE || op == SHCA_OPC_FLUSH)
			KUNIT_EXPECT_NULL(test,
					  shca_opcode_info(SHCA_TR_XRC | op));
		KUNIT_EXPECT_NULL(test, shca_opcode_info(0xc0 | op));
		KUNIT_EXPECT_NULL(test, shca_opcode_info(0xe0 | op));
		if (op != SHCA_OPC_SEND_ONLY &&
		    op != SHCA_OPC_SEND_ONLY_WITH_IMMEDIATE)
			KUNIT_EXPECT_NULL(test,
					  shca_opcode_info(SHCA_TR_UD | op));
		if ((SHCA_TR_CNP | op) != SHCA_OPCODE_CNP)
			KUNIT_EXPECT_NULL(test,
					  shca_opcode_info(SHCA_TR_CNP | op));
	}
	KUNIT_EXPECT_FALSE(test, shca_opcode_valid_for(SHCA_TR_UC |
				SHCA_OPC_RDMA_READ_REQUEST, SHCA_TR_UC));
	KUNIT_EXPECT_FALSE(test, shca_opcode_valid_for(SHCA_OPC_SEND_ONLY,
						       SHCA_TR_UD));
	KUNIT_EXPECT_TRUE(test, shca_opcode_valid_for(SHCA_TR_UD |
				SHCA_OPC_SEND_ONLY, SHCA_TR_UD));
	KUNIT_EXPECT_TRUE(test, shca_opcode_valid_for(SHCA_TR_XRC |
				SHCA_OPC_SEND_ONLY, SHCA_TR_XRC));
	KUNIT_EXPECT_FALSE(test, shca_opcode_valid_for(SHCA_TR_XRC |
				SHCA_OPC_SEND_ONLY, SHCA_TR_RC));
	KUNIT_EXPECT_FALSE(test, shca_opcode_valid_for(SHCA_OPC_SEND_ONLY,
						       SHCA_TR_XRC));
	KUNIT_EXPECT_FALSE(test, shca_opcode_valid_for(SHCA_TR_XRC |
				SHCA_OPC_ATOMIC_WRITE, SHCA_TR_XRC));
}

/* Layouts spelled out from the IBTA tables. */
static void shca_wire_test_layouts(struct kunit *test)
{
	const struct shca_opcode_info *i;

	i = shca_opcode_info(SHCA_OPC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_STREQ(test, i->name, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	KUNIT_EXPECT_EQ(test, i->hdr_len, 32);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_RETH), 12);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_IMMDT), 28);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_AETH), -ENOENT);
	KUNIT_EXPECT_TRUE(test, i->flags & SHCA_OPF_COMP);

	i = shca_opcode_info(SHCA_TR_UD | SHCA_OPC_SEND_ONLY_WITH_IMMEDIATE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 24);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_DETH), 12);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_IMMDT), 20);

	i = shca_opcode_info(SHCA_OPC_ATOMIC_ACKNOWLEDGE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 24);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_AETH), 12);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_ATMACK), 16);
	KUNIT_EXPECT_FALSE(test, i->flags & SHCA_OPF_PAYLOAD);

	i = shca_opcode_info(SHCA_OPC_COMPARE_SWAP);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 40);
	KUNIT_EXPECT_TRUE(test, i->flags & SHCA_OPF_NEEDS_ACK);

	/* RETH and an 8-byte payload, one packet, answered by an ACK */
	i = shca_opcode_info(SHCA_OPC_ATOMIC_WRITE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_STREQ(test, i->name, "RC_ATOMIC_WRITE");
	KUNIT_EXPECT_EQ(test, i->hdr_len, 28);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_RETH), 12);
	KUNIT_EXPECT_EQ(test, i->flags & SHCA_OPF_ONLY, SHCA_OPF_ONLY);
	KUNIT_EXPECT_TRUE(test, i->flags & SHCA_OPF_PAYLOAD);
	KUNIT_EXPECT_TRUE(test, i->flags & SHCA_OPF_NEEDS_ACK);
	KUNIT_EXPECT_FALSE(test, i->flags & SHCA_OPF_COMP);
	KUNIT_EXPECT_NULL(test, shca_opcode_info(SHCA_TR_UC |
						 SHCA_OPC_ATOMIC_WRITE));

	/* FETH then RETH, no payload, one packet, answered like a READ */
	i = shca_opcode_info(SHCA_OPC_FLUSH);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_STREQ(test, i->name, "RC_FLUSH");
	KUNIT_EXPECT_EQ(test, i->hdr_len, 32);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_FETH), 12);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_RETH), 16);
	KUNIT_EXPECT_EQ(test, i->flags & SHCA_OPF_ONLY, SHCA_OPF_ONLY);
	KUNIT_EXPECT_TRUE(test, i->flags & SHCA_OPF_READ);
	KUNIT_EXPECT_FALSE(test, i->flags & SHCA_OPF_PAYLOAD);
	KUNIT_EXPECT_TRUE(test, i->flags & SHCA_OPF_NEEDS_ACK);
	KUNIT_EXPECT_NULL(test, shca_opcode_info(SHCA_TR_UC | SHCA_OPC_FLUSH));
	KUNIT_EXPECT_NULL(test, shca_opcode_info(SHCA_TR_XRC |
						 SHCA_OPC_FLUSH));

	i = shca_opcode_info(SHCA_OPC_SEND_ONLY_WITH_INVALIDATE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_IETH), 12);

	KUNIT_EXPECT_EQ(test, shca_opcode_info(SHCA_OPC_ACKNOWLEDGE)->hdr_len,
			16);
	KUNIT_EXPECT_EQ(test,
			shca_opcode_info(SHCA_OPC_RDMA_READ_REQUEST)->hdr_len,
			28);
	KUNIT_EXPECT_EQ(test, shca_opcode_info(SHCA_OPCODE_CNP)->hdr_len, 28);

	/* XRC: the XRCETH right after the BTH, then RC's headers */
	i = shca_opcode_info(SHCA_TR_XRC | SHCA_OPC_SEND_ONLY);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_STREQ(test, i->name, "XRC_SEND_ONLY");
	KUNIT_EXPECT_EQ(test, i->hdr_len, 16);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_XRCETH), 12);
	i = shca_opcode_info(SHCA_TR_XRC | SHCA_OPC_COMPARE_SWAP);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 44);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_ATMETH), 16);
	i = shca_opcode_info(SHCA_TR_XRC | SHCA_OPC_RDMA_READ_RESPONSE_FIRST);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_STREQ(test, i->name, "XRC_RDMA_READ_RESPONSE_FIRST");
	KUNIT_EXPECT_EQ(test, i->hdr_len, 16);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_AETH), 12);
	KUNIT_EXPECT_EQ(test, shca_ext_offset(i, SHCA_EXT_XRCETH), -ENOENT);
	KUNIT_EXPECT_FALSE(test, shca_opcode_info(SHCA_TR_UC |
			   SHCA_OPC_SEND_ONLY)->flags & SHCA_OPF_NEEDS_ACK);
	KUNIT_EXPECT_EQ(test, shca_ext_size(SHCA_EXT_NUM), 0U);
}

/* Distinct, non-trivial values in every field. */
static void shca_test_fill(struct shca_wire_hdr *h, u8 opcode)
{
	const struct shca_opcode_info *info = shca_opcode_info(opcode);

	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->se = true;
	h->mig = true;
	h->fecn = true;
	h->becn = false;
	h->ackreq = true;
	h->pkey = 0xfedc;
	h->dqpn = 0xabcdef;
	h->psn = 0xfffffe;
	h->va = 0x0123456789abcdefULL;
	h->rkey = 0x89abcdef;
	h->dma_len = 0x10203040;
	h->swap_add = 0x1122334455667788ULL;
	h->compare = 0x8877665544332211ULL;
	h->syndrome = 0x9f;
	h->msn = 0x123456;
	h->orig = 0xdeadbeefcafef00dULL;
	h->qkey = 0x80010000;
	h->src_qpn = 0xfedcba;
	h->imm = cpu_to_be32(0xa5a55a5a);
	h->inv_rkey = 0x13572468;
	h->xrc_srqn = 0x2468ac;
	h->feth_plt = 0xa;
	h->feth_sel = 0x2;
	if ((info->flags & SHCA_OPF_PAYLOAD) && (info->flags & SHCA_OPF_LAST))
		h->pad = 3;
}

/* Parsed field @g equals packed @w, or is 0 if its header is absent. */
#define SHCA_EXPECT_FIELD(test, name, g, w, present)			\
	KUNIT_EXPECT_EQ_MSG(test, (u64)(g), (present) ? (u64)(w) : 0,	\
			    "%s: " #g, name)

static void shca_test_compare(struct kunit *test,
			      const struct shca_wire_hdr *got,
			      const struct shca_wire_hdr *want, u32 f,
			      const char *n)
{
	bool reth = f & SHCA_OPF_RETH, atm = f & SHCA_OPF_ATMETH;

	SHCA_EXPECT_FIELD(test, n, got->opcode, want->opcode, true);
	SHCA_EXPECT_FIELD(test, n, got->pad, want->pad, true);
	SHCA_EXPECT_FIELD(test, n, got->se, want->se, true);
	SHCA_EXPECT_FIELD(test, n, got->mig, want->mig, true);
	SHCA_EXPECT_FIELD(test, n, got->fecn, want->fecn, true);
	SHCA_EXPECT_FIELD(test, n, got->becn, want->becn, true);
	SHCA_EXPECT_FIELD(test, n, got->ackreq, want->ackreq, true);
	SHCA_EXPECT_FIELD(test, n, got->pkey, want->pkey, true);
	SHCA_EXPECT_FIELD(test, n, got->dqpn, want->dqpn, true);
	SHCA_EXPECT_FIELD(test, n, got->psn, want->psn, true);
	SHCA_EXPECT_FIELD(test, n, got->va, want->va, reth || atm);
	SHCA_EXPECT_FIELD(test, n, got->rkey, want->rkey, reth || atm);
	SHCA_EXPECT_FIELD(test, n, got->dma_len, want->dma_len, reth);
	SHCA_EXPECT_FIELD(test, n, got->swap_add, want->swap_add, atm);
	SHCA_EXPECT_FIELD(test, n, got->compare, want->compare, atm);
	SHCA_EXPECT_FIELD(test, n, got->syndrome, want->syndrome,
			  f & SHCA_OPF_AETH);
	SHCA_EXPECT_FIELD(test, n, got->msn, want->msn, f & SHCA_OPF_AETH);
	SHCA_EXPECT_FIELD(test, n, got->orig, want->orig, f & SHCA_OPF_ATMACK);
	SHCA_EXPECT_FIELD(test, n, got->qkey, want->qkey, f & SHCA_OPF_DETH);
	SHCA_EXPECT_FIELD(test, n, got->src_qpn, want->src_qpn,
			  f & SHCA_OPF_DETH);
	KUNIT_EXPECT_EQ_MSG(test, be32_to_cpu(got->imm),
			    f & SHCA_OPF_IMMDT ? be32_to_cpu(want->imm) : 0,
			    "%s: imm", n);
	SHCA_EXPECT_FIELD(test, n, got->inv_rkey, want->inv_rkey,
			  f & SHCA_OPF_IETH);
	SHCA_EXPECT_FIELD(test, n, got->xrc_srqn, want->xrc_srqn,
			  f & SHCA_OPF_XRCETH);
	SHCA_EXPECT_FIELD(test, n, got->feth_plt, want->feth_plt,
			  f & SHCA_OPF_FETH);
	SHCA_EXPECT_FIELD(test, n, got->feth_sel, want->feth_sel,
			  f & SHCA_OPF_FETH);
}

/* Bytes of BTH through ICRC of a test packet for @info. */
static size_t shca_test_pkt_len(const struct shca_opcode_info *info)
{
	size_t len = info->hdr_len + SHCA_ICRC_BYTES;

	if (info->flags & SHCA_OPF_PAYLOAD)
		len += SHCA_TEST_PAYLOAD;
	return len;
}

static void shca_wire_test_roundtrip_one(struct kunit *test, u8 opcode)
{
	const struct shca_opcode_info *info = shca_opcode_info(opcode);
	size_t len = shca_test_pkt_len(info);
	struct shca_wire_hdr h;
	struct shca_wire_pkt pkt;
	u8 *buf;
	int ret;

	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	shca_test_fill(&h, opcode);
	ret = shca_wire_pack(buf, len, &h);
	KUNIT_ASSERT_EQ_MSG(test, ret, (int)info->hdr_len, "%s", info->name);
	KUNIT_EXPECT_EQ(test, buf[0], opcode);

	ret = shca_wire_parse(buf, len, &pkt);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s", info->name);
	KUNIT_EXPECT_PTR_EQ(test, pkt.info, info);
	KUNIT_EXPECT_EQ(test, pkt.hdr_len, (u32)info->hdr_len);
	KUNIT_EXPECT_EQ(test, pkt.pay_len, info->flags & SHCA_OPF_PAYLOAD ?
			SHCA_TEST_PAYLOAD - h.pad : 0U);
	shca_test_compare(test, &pkt.hdr, &h, info->flags, info->name);
}

static void shca_wire_test_roundtrip_all(struct kunit *test)
{
	unsigned int op, n = 0;

	for (op = 0; op < 256; op++) {
		if (!shca_opcode_info(op))
			continue;
		shca_wire_test_roundtrip_one(test, op);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 63U);
}

/* Byte-exact layout of a packed RC RDMA WRITE ONLY with immediate. */
static void shca_wire_test_pack_bytes(struct kunit *test)
{
	static const u8 want[32] = {
		/* BTH: opcode, SE|M|pad 3|tver 0, pkey, FECN|QPN, A|PSN */
		0x0b, 0xf0, 0xfe, 0xdc, 0x80, 0xab, 0xcd, 0xef,
		0x80, 0xff, 0xff, 0xfe,
		/* RETH: VA, R_Key, DMA length */
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0x89, 0xab, 0xcd, 0xef, 0x10, 0x20, 0x30, 0x40,
		/* ImmDt */
		0xa5, 0xa5, 0x5a, 0x5a,
	};
	struct shca_wire_hdr h;

	shca_test_fill(&h, SHCA_OPC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	shca_test_pack_exact(test, &h, want, sizeof(want));
}

/* Byte-exact AETH, AtomicAckETH and DETH. */
static void shca_wire_test_pack_bytes_ack(struct kunit *test)
{
	static const u8 atmack[12] = {
		0x9f, 0x12, 0x34, 0x56,
		0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xf0, 0x0d,
	};
	static const u8 deth[8] = { 0x80, 0x01, 0x00, 0x00,
				    0x00, 0xfe, 0xdc, 0xba };
	struct shca_wire_hdr h;
	u8 buf[40];

	shca_test_fill(&h, SHCA_OPC_ATOMIC_ACKNOWLEDGE);
	KUNIT_ASSERT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), 24);
	KUNIT_EXPECT_EQ(test,
			shca_test_first_diff(buf + 12, atmack, sizeof(atmack)),
			sizeof(atmack));

	shca_test_fill(&h, SHCA_TR_UD | SHCA_OPC_SEND_ONLY);
	KUNIT_ASSERT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), 20);
	KUNIT_EXPECT_EQ(test,
			shca_test_first_diff(buf + 12, deth, sizeof(deth)),
			sizeof(deth));
}

static void shca_wire_test_pack_rejects(struct kunit *test)
{
	struct shca_wire_hdr h;
	u8 buf[64];

	shca_test_fill(&h, SHCA_OPC_RDMA_WRITE_ONLY);
	h.opcode = SHCA_TR_RD | SHCA_OPC_SEND_ONLY;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);
	h.opcode = SHCA_TR_XRC | SHCA_OPC_ATOMIC_WRITE;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);

	shca_test_fill(&h, SHCA_OPC_RDMA_WRITE_ONLY);
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, 27, &h), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, 28, &h), 28);
	h.pad = 4;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);

	shca_test_fill(&h, SHCA_OPC_RDMA_WRITE_ONLY);
	h.dqpn = 0x1000000;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);
	shca_test_fill(&h, SHCA_OPC_RDMA_WRITE_ONLY);
	h.psn = 0xffffffff;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);

	/* pad only on the last packet of a message carrying payload */
	shca_test_fill(&h, SHCA_OPC_SEND_MIDDLE);
	h.pad = 1;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);
	shca_test_fill(&h, SHCA_OPC_ACKNOWLEDGE);
	h.pad = 1;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);
}

/* Every length below the minimum fails, read from an exact allocation. */
static void shca_wire_test_truncated(struct kunit *test)
{
	struct shca_wire_pkt pkt;
	struct shca_wire_hdr h;
	unsigned int op;
	size_t len, min;
	u8 *full, *buf;

	full = kunit_kzalloc(test, 128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, full);
	for (op = 0; op < 256; op++) {
		const struct shca_opcode_info *info = shca_opcode_info(op);

		if (!info)
			continue;
		shca_test_fill(&h, op);
		h.pad = 0;
		KUNIT_ASSERT_GT(test, shca_wire_pack(full, 128, &h), 0);
		min = info->hdr_len + SHCA_ICRC_BYTES;
		for (len = 0; len < min; len++) {
			buf = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, buf);
			memcpy(buf, full, len);
			KUNIT_EXPECT_EQ_MSG(test,
					    shca_wire_parse(buf, len, &pkt),
					    -EINVAL, "%s len %zu",
					    info->name, len);
			kunit_kfree(test, buf);
		}
		buf = kunit_kmalloc(test, min, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, buf);
		memcpy(buf, full, min);
		KUNIT_EXPECT_EQ_MSG(test, shca_wire_parse(buf, min, &pkt), 0,
				    "%s", info->name);
		kunit_kfree(test, buf);
	}
	KUNIT_EXPECT_EQ(test, shca_wire_parse(NULL, 64, &pkt), -EINVAL);
}

static void shca_wire_test_parse_unknown(struct kunit *test)
{
	struct shca_wire_pkt pkt;
	u8 buf[64] = { 0 };
	unsigned int op;

	for (op = 0; op < 256; op++) {
		if (shca_opcode_info(op))
			continue;
		buf[0] = op;
		KUNIT_EXPECT_EQ_MSG(test, shca_wire_parse(buf, sizeof(buf),
							  &pkt),
				    -EINVAL, "opcode 0x%02x", op);
	}
}

static int shca_test_parse_send(struct kunit *test, u8 opcode, u8 pad,
				size_t seg)
{
	struct shca_wire_pkt pkt;
	struct shca_wire_hdr h;
	u8 buf[64] = { 0 };

	shca_test_fill(&h, opcode);
	h.pad = 0;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h),
			SHCA_BTH_BYTES);
	buf[1] = (buf[1] & ~SHCA_BTH_PAD_MASK) | pad << SHCA_BTH_PAD_SHIFT;
	return shca_wire_parse(buf, SHCA_BTH_BYTES + seg + SHCA_ICRC_BYTES,
			       &pkt);
}

static void shca_wire_test_bad_pad(struct kunit *test)
{
	struct shca_wire_pkt pkt;
	struct shca_wire_hdr h;
	u8 buf[64] = { 0 };

	/* good: 1 byte of payload and 3 of pad */
	KUNIT_EXPECT_EQ(test, shca_test_parse_send(test, SHCA_OPC_SEND_ONLY,
						   3, 4), 0);
	/* pad larger than payload + pad */
	KUNIT_EXPECT_EQ(test, shca_test_parse_send(test, SHCA_OPC_SEND_ONLY,
						   1, 0), -EINVAL);
	/* payload + pad not a multiple of 4 */
	KUNIT_EXPECT_EQ(test, shca_test_parse_send(test, SHCA_OPC_SEND_ONLY,
						   0, 5), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_test_parse_send(test, SHCA_OPC_SEND_ONLY,
						   3, 6), -EINVAL);
	/* pad on the first or a middle packet */
	KUNIT_EXPECT_EQ(test, shca_test_parse_send(test, SHCA_OPC_SEND_FIRST,
						   2, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_test_parse_send(test, SHCA_OPC_SEND_MIDDLE,
						   1, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_test_parse_send(test, SHCA_OPC_SEND_LAST,
						   1, 8), 0);

	/* pad or payload on a header-only opcode */
	shca_test_fill(&h, SHCA_OPC_ACKNOWLEDGE);
	KUNIT_ASSERT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), 16);
	KUNIT_EXPECT_EQ(test, shca_wire_parse(buf, 20, &pkt), 0);
	KUNIT_EXPECT_EQ(test, shca_wire_parse(buf, 24, &pkt), -EINVAL);
	buf[1] |= 1 << SHCA_BTH_PAD_SHIFT;
	KUNIT_EXPECT_EQ(test, shca_wire_parse(buf, 20, &pkt), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_wire_parse(buf, 24, &pkt), -EINVAL);
}

static void shca_wire_test_bad_tver(struct kunit *test)
{
	struct shca_wire_pkt pkt;
	struct shca_wire_hdr h;
	u8 buf[32] = { 0 };

	shca_test_fill(&h, SHCA_OPC_ACKNOWLEDGE);
	KUNIT_ASSERT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), 16);
	KUNIT_EXPECT_EQ(test, shca_wire_parse(buf, 20, &pkt), 0);
	buf[1] |= 1;
	KUNIT_EXPECT_EQ(test, shca_wire_parse(buf, 20, &pkt), -EINVAL);
}

/*
 * The XRC rows mirror RC's: a request is RC's request with an XRCETH
 * right after the BTH (4 bytes more, every other header 4 bytes later),
 * a response (0xad-0xb2) is RC's response as it is.  ATOMIC WRITE and
 * FLUSH have no XRC row.
 */
static void shca_wire_test_xrc_rows(struct kunit *test)
{
	unsigned int op, reqs = 0, resps = 0;
	enum shca_ext ext;

	for (op = 0; op < 0x20; op++) {
		const struct shca_opcode_info *r = shca_opcode_info(SHCA_TR_RC | op);
		const struct shca_opcode_info *x = shca_opcode_info(SHCA_TR_XRC | op);

		if (!r || op == SHCA_OPC_ATOMIC_WRITE || op == SHCA_OPC_FLUSH) {
			KUNIT_EXPECT_NULL_MSG(test, x, "XRC opcode 0x%02x",
					      SHCA_TR_XRC | op);
			continue;
		}
		KUNIT_ASSERT_NOT_NULL_MSG(test, x, "XRC twin of %s", r->name);
		KUNIT_EXPECT_STREQ(test, x->name + 4, r->name + 3);
		KUNIT_EXPECT_EQ_MSG(test, strncmp(x->name, "XRC_", 4), 0, "%s",
				    x->name);
		if (r->flags & SHCA_OPF_REQ) {
			reqs++;
			KUNIT_EXPECT_EQ_MSG(test, x->flags,
					    r->flags | SHCA_OPF_XRCETH, "%s",
					    x->name);
			KUNIT_EXPECT_EQ_MSG(test, x->hdr_len, r->hdr_len +
					    SHCA_XRCETH_BYTES, "%s", x->name);
			KUNIT_EXPECT_EQ_MSG(test,
					    shca_ext_offset(x, SHCA_EXT_XRCETH),
					    SHCA_BTH_BYTES, "%s", x->name);
			for (ext = 0; ext < SHCA_EXT_NUM; ext++) {
				int ro = shca_ext_offset(r, ext);

				if (ext == SHCA_EXT_XRCETH)
					continue;
				KUNIT_EXPECT_EQ_MSG(test,
						    shca_ext_offset(x, ext),
						    ro < 0 ? ro :
						    ro + SHCA_XRCETH_BYTES,
						    "%s ext %d", x->name, ext);
			}
		} else {
			resps++;
			KUNIT_EXPECT_TRUE_MSG(test, x->flags & SHCA_OPF_RESP,
					      "%s", x->name);
			KUNIT_EXPECT_EQ_MSG(test, x->flags, r->flags, "%s",
					    x->name);
			KUNIT_EXPECT_EQ_MSG(test, x->hdr_len, r->hdr_len, "%s",
					    x->name);
			for (ext = 0; ext < SHCA_EXT_NUM; ext++)
				KUNIT_EXPECT_EQ_MSG(test,
						    shca_ext_offset(x, ext),
						    shca_ext_offset(r, ext),
						    "%s ext %d", x->name, ext);
		}
	}
	/* 17 requests, 6 responses: 0x0d-0x12 */
	KUNIT_EXPECT_EQ(test, reqs, 17U);
	KUNIT_EXPECT_EQ(test, resps, 6U);
	for (op = SHCA_TR_XRC | SHCA_OPC_RDMA_READ_RESPONSE_FIRST;
	     op <= (SHCA_TR_XRC | SHCA_OPC_ATOMIC_ACKNOWLEDGE); op++) {
		const struct shca_opcode_info *x = shca_opcode_info(op);

		KUNIT_ASSERT_NOT_NULL(test, x);
		KUNIT_EXPECT_TRUE_MSG(test, x->flags & SHCA_OPF_RESP,
				      "0x%02x", op);
	}
	KUNIT_EXPECT_NULL(test, shca_opcode_info(SHCA_TR_XRC |
						 SHCA_OPC_ATOMIC_WRITE));
}

/* An XRC request opcode: XRC with an RC request's operation. */
static bool shca_test_xrc_req(unsigned int op)
{
	const struct shca_opcode_info *info = shca_opcode_info(op);

	return shca_opcode_transport(op) == SHCA_TR_XRC && info &&
	       (info->flags & SHCA_OPF_REQ);
}

/*
 * Every XRC request carries the XRCETH at offset 12: a 24-bit SRQ number
 * after a reserved byte that pack writes as 0 and parse ignores.
 */
static void shca_wire_test_xrceth_roundtrip(struct kunit *test)
{
	static const u32 srqns[] = { 0, 1, 0x123456, 0xabcdef, 0xffffff };
	struct shca_wire_pkt pkt;
	struct shca_wire_hdr h;
	unsigned int op, i, n = 0;
	u8 *buf;

	buf = kunit_kzalloc(test, 128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (op = 0; op < 256; op++) {
		const struct shca_opcode_info *info = shca_opcode_info(op);
		size_t len;

		if (!shca_test_xrc_req(op))
			continue;
		n++;
		len = shca_test_pkt_len(info);
		for (i = 0; i < ARRAY_SIZE(srqns); i++) {
			memset(buf, 0x77, 128);
			shca_test_fill(&h, op);
			h.xrc_srqn = srqns[i];
			KUNIT_ASSERT_EQ_MSG(test, shca_wire_pack(buf, len, &h),
					    (int)info->hdr_len, "%s", info->name);
			KUNIT_EXPECT_EQ_MSG(test, buf[12], 0, "%s: reserved",
					    info->name);
			KUNIT_EXPECT_EQ_MSG(test, (u32)buf[13] << 16 |
					    (u32)buf[14] << 8 | buf[15],
					    srqns[i], "%s: XRCSRQ", info->name);
			KUNIT_ASSERT_EQ_MSG(test, shca_wire_parse(buf, len, &pkt),
					    0, "%s", info->name);
			KUNIT_EXPECT_EQ_MSG(test, pkt.hdr.xrc_srqn, srqns[i],
					    "%s", info->name);
			shca_test_compare(test, &pkt.hdr, &h, info->flags,
					  info->name);
			/* the reserved byte does not reach the SRQ number */
			buf[12] = 0xff;
			KUNIT_ASSERT_EQ_MSG(test, shca_wire_parse(buf, len, &pkt),
					    0, "%s", info->name);
			KUNIT_EXPECT_EQ_MSG(test, pkt.hdr.xrc_srqn, srqns[i],
					    "%s: reserved byte 0xff",
					    info->name);
		}
	}
	KUNIT_EXPECT_EQ(test, n, 17U);
}

/* Pack refuses an SRQ number wider than 24 bits on every XRC request. */
static void shca_wire_test_xrceth_rejects(struct kunit *test)
{
	struct shca_wire_hdr h;
	unsigned int op;
	u8 buf[64];

	for (op = 0; op < 256; op++) {
		if (!shca_test_xrc_req(op))
			continue;
		shca_test_fill(&h, op);
		h.xrc_srqn = 0x1000000;
		KUNIT_EXPECT_EQ_MSG(test, shca_wire_pack(buf, sizeof(buf), &h),
				    -EINVAL, "0x%02x", op);
		h.xrc_srqn = 0xffffffff;
		KUNIT_EXPECT_EQ_MSG(test, shca_wire_pack(buf, sizeof(buf), &h),
				    -EINVAL, "0x%02x", op);
		h.xrc_srqn = 0xffffff;
		KUNIT_EXPECT_GT_MSG(test, shca_wire_pack(buf, sizeof(buf), &h),
				    0, "0x%02x", op);
	}
}

/* Byte-exact XRC RDMA WRITE ONLY with immediate: BTH XRCETH RETH ImmDt. */
static void shca_wire_test_xrc_pack_bytes(struct kunit *test)
{
	static const u8 want[36] = {
		/* BTH: opcode, SE|M|pad 3|tver 0, pkey, FECN|QPN, A|PSN */
		0xab, 0xf0, 0xfe, 0xdc, 0x80, 0xab, 0xcd, 0xef,
		0x80, 0xff, 0xff, 0xfe,
		/* XRCETH: reserved, XRCSRQ */
		0x00, 0x24, 0x68, 0xac,
		/* RETH: VA, R_Key, DMA length */
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0x89, 0xab, 0xcd, 0xef, 0x10, 0x20, 0x30, 0x40,
		/* ImmDt */
		0xa5, 0xa5, 0x5a, 0x5a,
	};
	struct shca_wire_hdr h;
	u8 buf[sizeof(want)];

	shca_test_fill(&h, SHCA_TR_XRC |
		       SHCA_OPC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	shca_test_pack_exact(test, &h, want, sizeof(want));
	/* one byte short of the headers */
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(want) - 1, &h),
			-EINVAL);
}

/*
 * An XRC response is an RC response with another opcode: the same bytes
 * after the BTH parse to the same fields, with no SRQ number.
 */
static void shca_wire_test_xrc_responses(struct kunit *test)
{
	struct shca_wire_pkt rc, xrc;
	struct shca_wire_hdr h;
	unsigned int op;
	u8 buf[64], xbuf[64];

	for (op = SHCA_OPC_RDMA_READ_RESPONSE_FIRST;
	     op <= SHCA_OPC_ATOMIC_ACKNOWLEDGE; op++) {
		const struct shca_opcode_info *info = shca_opcode_info(op);
		size_t len = shca_test_pkt_len(info);

		shca_test_fill(&h, op);
		KUNIT_ASSERT_GT(test, shca_wire_pack(buf, sizeof(buf), &h), 0);
		h.opcode = SHCA_TR_XRC | op;
		KUNIT_ASSERT_EQ(test, shca_wire_pack(xbuf, sizeof(xbuf), &h),
				(int)info->hdr_len);
		KUNIT_EXPECT_EQ(test, xbuf[0], SHCA_TR_XRC | op);
		KUNIT_EXPECT_EQ_MSG(test, shca_test_first_diff(buf + 1, xbuf + 1,
							       info->hdr_len - 1),
				    (size_t)info->hdr_len - 1, "%s",
				    info->name);
		KUNIT_ASSERT_EQ(test, shca_wire_parse(buf, len, &rc), 0);
		KUNIT_ASSERT_EQ(test, shca_wire_parse(xbuf, len, &xrc), 0);
		KUNIT_EXPECT_EQ(test, xrc.hdr_len, rc.hdr_len);
		KUNIT_EXPECT_EQ(test, xrc.pay_len, rc.pay_len);
		KUNIT_EXPECT_EQ(test, xrc.hdr.xrc_srqn, 0U);
		xrc.hdr.opcode = rc.hdr.opcode;
		shca_test_compare(test, &xrc.hdr, &rc.hdr, info->flags,
				  info->name);
	}
}

/*
 * FLUSH: the FETH's placement type in bits 3-0 and selectivity level in
 * bits 5-4, the RETH after it; reserved FETH bits are ignored by parse;
 * pack refuses values wider than their fields; no payload may follow.
 */
static void shca_wire_test_flush(struct kunit *test)
{
	static const u8 want[] = {
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x80, 0x00, 0x00, 0x22,			/* BTH */
		0x00, 0x00, 0x00, 0x13,			/* FETH: MR, 1|2 */
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x10, 0x00, /* RETH */
	};
	struct shca_wire_hdr h = {
		.opcode = SHCA_TR_RC | SHCA_OPC_FLUSH,
		.pkey = 0xffff,
		.dqpn = 0x11,
		.ackreq = true,
		.psn = 0x22,
		.va = 0x7f0000001000ULL,
		.rkey = 0x1234,
		.dma_len = 0x1000,
		.feth_plt = SHCA_FETH_PLT_GLOBAL | SHCA_FETH_PLT_PERSISTENT,
		.feth_sel = SHCA_FETH_SEL_MR,
	};
	struct shca_wire_pkt pkt;
	u8 buf[sizeof(want) + SHCA_ICRC_BYTES + 4] = {};

	KUNIT_ASSERT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h),
			(int)sizeof(want));
	KUNIT_EXPECT_EQ(test, shca_test_first_diff(buf, want, sizeof(want)),
			sizeof(want));
	/* reserved FETH bits set: ignored */
	buf[12] = 0xff;
	buf[14] = 0x01;
	buf[15] |= 0xc0;
	KUNIT_ASSERT_EQ(test, shca_wire_parse(buf, sizeof(want) +
					      SHCA_ICRC_BYTES, &pkt), 0);
	KUNIT_EXPECT_EQ(test, pkt.hdr.feth_plt, 3);
	KUNIT_EXPECT_EQ(test, pkt.hdr.feth_sel, 1);
	KUNIT_EXPECT_EQ(test, pkt.hdr.va, 0x7f0000001000ULL);
	KUNIT_EXPECT_EQ(test, pkt.hdr.rkey, 0x1234U);
	KUNIT_EXPECT_EQ(test, pkt.hdr.dma_len, 0x1000U);
	KUNIT_EXPECT_EQ(test, pkt.pay_len, 0U);
	/* a FLUSH carries no payload */
	KUNIT_EXPECT_EQ(test, shca_wire_parse(buf, sizeof(buf), &pkt),
			-EINVAL);
	/* field values wider than the FETH's fields */
	h.feth_plt = 0x10;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);
	h.feth_plt = SHCA_FETH_PLT_GLOBAL;
	h.feth_sel = 4;
	KUNIT_EXPECT_EQ(test, shca_wire_pack(buf, sizeof(buf), &h), -EINVAL);
}

static struct kunit_case shca_wire_test_cases[] = {
	KUNIT_CASE(shca_wire_test_table),
	KUNIT_CASE(shca_wire_test_unknown_opcodes),
	KUNIT_CASE(shca_wire_test_layouts),
	KUNIT_CASE(shca_wire_test_roundtrip_all),
	KUNIT_CASE(shca_wire_test_pack_bytes),
	KUNIT_CASE(shca_wire_test_pack_bytes_ack),
	KUNIT_CASE(shca_wire_test_pack_rejects),
	KUNIT_CASE(shca_wire_test_truncated),
	KUNIT_CASE(shca_wire_test_parse_unknown),
	KUNIT_CASE(shca_wire_test_bad_pad),
	KUNIT_CASE(shca_wire_test_bad_tver),
	KUNIT_CASE(shca_wire_test_xrc_rows),
	KUNIT_CASE(shca_wire_test_flush),
	KUNIT_CASE(shca_wire_test_xrceth_roundtrip),
	KUNIT_CASE(shca_wire_test_xrceth_rejects),
	KUNIT_CASE(shca_wire_test_xrc_pack_bytes),
	KUNIT_CASE(shca_wire_test_xrc_responses),
	{}
};

static struct kunit_suite shca_wire_test_suite = {
	.name = "shca_wire",
	.test_cases = shca_wire_test_cases,
};

kunit_test_suites(&shca_wire_test_suite);
