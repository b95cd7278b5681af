// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RoCE v2 transport header layouts, opcode table, pack and parse.
 *
 * Parse treats its input as hostile: every read is bounded by the length
 * it was given, and every inconsistency is -EINVAL.
 */
#include <linux/errno.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "wire.h"

/*
 * The extension headers that follow the BTH, by layout: HDRS_<layout> are
 * their SHCA_OPF_* bits, HLEN_<layout> the bytes of BTH plus them.
 */
#define HDRS_BTH		0
#define HLEN_BTH		SHCA_BTH_BYTES
#define HDRS_DETH		SHCA_OPF_DETH
#define HLEN_DETH		(HLEN_BTH + SHCA_DETH_BYTES)
#define HDRS_DETH_IMMDT		(SHCA_OPF_DETH | SHCA_OPF_IMMDT)
#define HLEN_DETH_IMMDT		(HLEN_DETH + SHCA_IMMDT_BYTES)
#define HDRS_RETH		SHCA_OPF_RETH
#define HLEN_RETH		(HLEN_BTH + SHCA_RETH_BYTES)
#define HDRS_RETH_IMMDT		(SHCA_OPF_RETH | SHCA_OPF_IMMDT)
#define HLEN_RETH_IMMDT		(HLEN_RETH + SHCA_IMMDT_BYTES)
#define HDRS_FETH_RETH		(SHCA_OPF_FETH | SHCA_OPF_RETH)
#define HLEN_FETH_RETH		(HLEN_RETH + SHCA_FETH_BYTES)
#define HDRS_ATMETH		SHCA_OPF_ATMETH
#define HLEN_ATMETH		(HLEN_BTH + SHCA_ATMETH_BYTES)
#define HDRS_AETH		SHCA_OPF_AETH
#define HLEN_AETH		(HLEN_BTH + SHCA_AETH_BYTES)
#define HDRS_AETH_ATMACK	(SHCA_OPF_AETH | SHCA_OPF_ATMACK)
#define HLEN_AETH_ATMACK	(HLEN_AETH + SHCA_ATMACK_BYTES)
#define HDRS_IMMDT		SHCA_OPF_IMMDT
#define HLEN_IMMDT		(HLEN_BTH + SHCA_IMMDT_BYTES)
#define HDRS_IETH		SHCA_OPF_IETH
#define HLEN_IETH		(HLEN_BTH + SHCA_IETH_BYTES)
/* XRC requests: an XRCETH first, then the RC request's headers */
#define HDRS_X_BTH		SHCA_OPF_XRCETH
#define HLEN_X_BTH		(HLEN_BTH + SHCA_XRCETH_BYTES)
#define HDRS_X_RETH		(SHCA_OPF_XRCETH | HDRS_RETH)
#define HLEN_X_RETH		(HLEN_RETH + SHCA_XRCETH_BYTES)
#define HDRS_X_RETH_IMMDT	(SHCA_OPF_XRCETH | HDRS_RETH_IMMDT)
#define HLEN_X_RETH_IMMDT	(HLEN_RETH_IMMDT + SHCA_XRCETH_BYTES)
#define HDRS_X_ATMETH		(SHCA_OPF_XRCETH | HDRS_ATMETH)
#define HLEN_X_ATMETH		(HLEN_ATMETH + SHCA_XRCETH_BYTES)
#define HDRS_X_IMMDT		(SHCA_OPF_XRCETH | HDRS_IMMDT)
#define HLEN_X_IMMDT		(HLEN_IMMDT + SHCA_XRCETH_BYTES)
#define HDRS_X_IETH		(SHCA_OPF_XRCETH | HDRS_IETH)
#define HLEN_X_IETH		(HLEN_IETH + SHCA_XRCETH_BYTES)
#define HDRS_CNP_RSVD		SHCA_OPF_CNP_RSVD
#define HLEN_CNP_RSVD		(HLEN_BTH + SHCA_CNP_RSVD_BYTES)

/* @f: the flags but the extension headers', which come from @layout. */
#define SHCA_OPINFO(tr, op, f, layout)					\
	[SHCA_TR_##tr | SHCA_OPC_##op] = {				\
		.name = #tr "_" #op,					\
		.flags = (f) | HDRS_##layout,				\
		.hdr_len = HLEN_##layout,				\
	}

/* Flags shared by the transports, before per-transport additions. */
#define F_SEND		(SHCA_OPF_REQ | SHCA_OPF_SEND | SHCA_OPF_PAYLOAD)
#define F_WRITE		(SHCA_OPF_REQ | SHCA_OPF_WRITE | SHCA_OPF_PAYLOAD)
#define F_RRESP		(SHCA_OPF_RESP | SHCA_OPF_READ | SHCA_OPF_PAYLOAD)
#define F_ATOMIC	(SHCA_OPF_REQ | SHCA_OPF_ATOMIC | SHCA_OPF_ONLY)

#define F_SEND_FIRST	(F_SEND | SHCA_OPF_FIRST)
#define F_SEND_MIDDLE	(F_SEND | SHCA_OPF_MIDDLE)
#define F_SEND_LAST	(F_SEND | SHCA_OPF_LAST | SHCA_OPF_COMP)
#define F_SEND_ONLY	(F_SEND | SHCA_OPF_ONLY | SHCA_OPF_COMP)
#define F_WRITE_FIRST	(F_WRITE | SHCA_OPF_FIRST)
#define F_WRITE_MIDDLE	(F_WRITE | SHCA_OPF_MIDDLE)
#define F_WRITE_LAST	(F_WRITE | SHCA_OPF_LAST)
#define F_WRITE_ONLY	(F_WRITE | SHCA_OPF_ONLY)
#define F_IMM		SHCA_OPF_COMP	/* with ImmDt: consumes a receive WQE */
#define F_RC		SHCA_OPF_NEEDS_ACK
#define F_XRC		SHCA_OPF_NEEDS_ACK	/* reliable, like RC */

static const struct shca_opcode_info shca_opcodes[256] = {
	SHCA_OPINFO(RC, SEND_FIRST, F_SEND_FIRST | F_RC, BTH),
	SHCA_OPINFO(RC, SEND_MIDDLE, F_SEND_MIDDLE | F_RC, BTH),
	SHCA_OPINFO(RC, SEND_LAST, F_SEND_LAST | F_RC, BTH),
	SHCA_OPINFO(RC, SEND_LAST_WITH_IMMEDIATE,
		    F_SEND_LAST | F_IMM | F_RC, IMMDT),
	SHCA_OPINFO(RC, SEND_ONLY, F_SEND_ONLY | F_RC, BTH),
	SHCA_OPINFO(RC, SEND_ONLY_WITH_IMMEDIATE,
		    F_SEND_ONLY | F_IMM | F_RC, IMMDT),
	SHCA_OPINFO(RC, RDMA_WRITE_FIRST, F_WRITE_FIRST | F_RC, RETH),
	SHCA_OPINFO(RC, RDMA_WRITE_MIDDLE, F_WRITE_MIDDLE | F_RC, BTH),
	SHCA_OPINFO(RC, RDMA_WRITE_LAST, F_WRITE_LAST | F_RC, BTH),
	SHCA_OPINFO(RC, RDMA_WRITE_LAST_WITH_IMMEDIATE,
		    F_WRITE_LAST | F_IMM | F_RC, IMMDT),
	SHCA_OPINFO(RC, RDMA_WRITE_ONLY, F_WRITE_ONLY | F_RC, RETH),
	SHCA_OPINFO(RC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		    F_WRITE_ONLY | F_IMM | F_RC, RETH_IMMDT),
	SHCA_OPINFO(RC, SEND_LAST_WITH_INVALIDATE, F_SEND_LAST | F_RC, IETH),
	SHCA_OPINFO(RC, SEND_ONLY_WITH_INVALIDATE, F_SEND_ONLY | F_RC, IETH),
	SHCA_OPINFO(RC, RDMA_READ_REQUEST, SHCA_OPF_REQ | SHCA_OPF_READ |
		    SHCA_OPF_ONLY | F_RC, RETH),
	SHCA_OPINFO(RC, RDMA_READ_RESPONSE_FIRST, F_RRESP | SHCA_OPF_FIRST,
		    AETH),
	SHCA_OPINFO(RC, RDMA_READ_RESPONSE_MIDDLE, F_RRESP | SHCA_OPF_MIDDLE,
		    BTH),
	SHCA_OPINFO(RC, RDMA_READ_RESPONSE_LAST, F_RRESP | SHCA_OPF_LAST,
		    AETH),
	SHCA_OPINFO(RC, RDMA_READ_RESPONSE_ONLY, F_RRESP | SHCA_OPF_ONLY,
		    AETH),
	SHCA_OPINFO(RC, ACKNOWLEDGE, SHCA_OPF_RESP | SHCA_OPF_ACK, AETH),
	SHCA_OPINFO(RC, ATOMIC_ACKNOWLEDGE, SHCA_OPF_RESP | SHCA_OPF_ATOMIC |
		    SHCA_OPF_ONLY, AETH_ATMACK),
	SHCA_OPINFO(RC, COMPARE_SWAP, F_ATOMIC | F_RC, ATMETH),
	SHCA_OPINFO(RC, FETCH_ADD, F_ATOMIC | F_RC, ATMETH),
	/* one packet: RETH (DMA length 8) and 8 bytes, answered by an ACK */
	SHCA_OPINFO(RC, ATOMIC_WRITE, F_WRITE_ONLY | F_RC, RETH),
	/*
	 * FETH and RETH, no payload; answered like a READ of nothing (one
	 * RDMA READ RESPONSE ONLY without payload), so READ's flag
	 */
	SHCA_OPINFO(RC, FLUSH, SHCA_OPF_REQ | SHCA_OPF_READ | SHCA_OPF_ONLY |
		    F_RC, FETH_RETH),

	SHCA_OPINFO(UC, SEND_FIRST, F_SEND_FIRST, BTH),
	SHCA_OPINFO(UC, SEND_MIDDLE, F_SEND_MIDDLE, BTH),
	SHCA_OPINFO(UC, SEND_LAST, F_SEND_LAST, BTH),
	SHCA_OPINFO(UC, SEND_LAST_WITH_IMMEDIATE, F_SEND_LAST | F_IMM, IMMDT),
	SHCA_OPINFO(UC, SEND_ONLY, F_SEND_ONLY, BTH),
	SHCA_OPINFO(UC, SEND_ONLY_WITH_IMMEDIATE, F_SEND_ONLY | F_IMM, IMMDT),
	SHCA_OPINFO(UC, RDMA_WRITE_FIRST, F_WRITE_FIRST, RETH),
	SHCA_OPINFO(UC, RDMA_WRITE_MIDDLE, F_WRITE_MIDDLE, BTH),
	SHCA_OPINFO(UC, RDMA_WRITE_LAST, F_WRITE_LAST, BTH),
	SHCA_OPINFO(UC, RDMA_WRITE_LAST_WITH_IMMEDIATE, F_WRITE_LAST | F_IMM,
		    IMMDT),
	SHCA_OPINFO(UC, RDMA_WRITE_ONLY, F_WRITE_ONLY, RETH),
	SHCA_OPINFO(UC, RDMA_WRITE_ONLY_WITH_IMMEDIATE, F_WRITE_ONLY | F_IMM,
		    RETH_IMMDT),

	/*
	 * XRC: RC's requests with an XRCETH, RC's responses (no ATOMIC WRITE
	 * or FLUSH)
	 */
	SHCA_OPINFO(XRC, SEND_FIRST, F_SEND_FIRST | F_XRC, X_BTH),
	SHCA_OPINFO(XRC, SEND_MIDDLE, F_SEND_MIDDLE | F_XRC, X_BTH),
	SHCA_OPINFO(XRC, SEND_LAST, F_SEND_LAST | F_XRC, X_BTH),
	SHCA_OPINFO(XRC, SEND_LAST_WITH_IMMEDIATE,
		    F_SEND_LAST | F_IMM | F_XRC, X_IMMDT),
	SHCA_OPINFO(XRC, SEND_ONLY, F_SEND_ONLY | F_XRC, X_BTH),
	SHCA_OPINFO(XRC, SEND_ONLY_WITH_IMMEDIATE,
		    F_SEND_ONLY | F_IMM | F_XRC, X_IMMDT),
	SHCA_OPINFO(XRC, RDMA_WRITE_FIRST, F_WRITE_FIRST | F_XRC, X_RETH),
	SHCA_OPINFO(XRC, RDMA_WRITE_MIDDLE, F_WRITE_MIDDLE | F_XRC, X_BTH),
	SHCA_OPINFO(XRC, RDMA_WRITE_LAST, F_WRITE_LAST | F_XRC, X_BTH),
	SHCA_OPINFO(XRC, RDMA_WRITE_LAST_WITH_IMMEDIATE,
		    F_WRITE_LAST | F_IMM | F_XRC, X_IMMDT),
	SHCA_OPINFO(XRC, RDMA_WRITE_ONLY, F_WRITE_ONLY | F_XRC, X_RETH),
	SHCA_OPINFO(XRC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		    F_WRITE_ONLY | F_IMM | F_XRC, X_RETH_IMMDT),
	SHCA_OPINFO(XRC, SEND_LAST_WITH_INVALIDATE, F_SEND_LAST | F_XRC,
		    X_IETH),
	SHCA_OPINFO(XRC, SEND_ONLY_WITH_INVALIDATE, F_SEND_ONLY | F_XRC,
		    X_IETH),
	SHCA_OPINFO(XRC, RDMA_READ_REQUEST, SHCA_OPF_REQ | SHCA_OPF_READ |
		    SHCA_OPF_ONLY | F_XRC, X_RETH),
	SHCA_OPINFO(XRC, RDMA_READ_RESPONSE_FIRST, F_RRESP | SHCA_OPF_FIRST,
		    AETH),
	SHCA_OPINFO(XRC, RDMA_READ_RESPONSE_MIDDLE,
		    F_RRESP | SHCA_OPF_MIDDLE, BTH),
	SHCA_OPINFO(XRC, RDMA_READ_RESPONSE_LAST, F_RRESP | SHCA_OPF_LAST,
		    AETH),
	SHCA_OPINFO(XRC, RDMA_READ_RESPONSE_ONLY, F_RRESP | SHCA_OPF_ONLY,
		    AETH),
	SHCA_OPINFO(XRC, ACKNOWLEDGE, SHCA_OPF_RESP | SHCA_OPF_ACK, AETH),
	SHCA_OPINFO(XRC, ATOMIC_ACKNOWLEDGE, SHCA_OPF_RESP | SHCA_OPF_ATOMIC |
		    SHCA_OPF_ONLY, AETH_ATMACK),
	SHCA_OPINFO(XRC, COMPARE_SWAP, F_ATOMIC | F_XRC, X_ATMETH),
	SHCA_OPINFO(XRC, FETCH_ADD, F_ATOMIC | F_XRC, X_ATMETH),

	SHCA_OPINFO(UD, SEND_ONLY, F_SEND_ONLY, DETH),
	SHCA_OPINFO(UD, SEND_ONLY_WITH_IMMEDIATE, F_SEND_ONLY | F_IMM,
		    DETH_IMMDT),

	[SHCA_OPCODE_CNP] = {
		.name = "CNP",
		.flags = SHCA_OPF_CNP | HDRS_CNP_RSVD,
		.hdr_len = HLEN_CNP_RSVD,
	},
};

/**
 * shca_opcode_info() - look up an opcode
 * @opcode: BTH opcode
 *
 * Return: the table entry, or NULL if the opcode is unknown or belongs to
 * a transport shca does not implement (RD).
 */
const struct shca_opcode_info *shca_opcode_info(u8 opcode)
{
	const struct shca_opcode_info *info = &shca_opcodes[opcode];

	return info->name ? info : NULL;
}

static const u8 shca_ext_sizes[SHCA_EXT_NUM] = {
	[SHCA_EXT_XRCETH]	= SHCA_XRCETH_BYTES,
	[SHCA_EXT_DETH]		= SHCA_DETH_BYTES,
	[SHCA_EXT_FETH]		= SHCA_FETH_BYTES,
	[SHCA_EXT_RETH]		= SHCA_RETH_BYTES,
	[SHCA_EXT_ATMETH]	= SHCA_ATMETH_BYTES,
	[SHCA_EXT_AETH]		= SHCA_AETH_BYTES,
	[SHCA_EXT_ATMACK]	= SHCA_ATMACK_BYTES,
	[SHCA_EXT_IMMDT]	= SHCA_IMMDT_BYTES,
	[SHCA_EXT_IETH]		= SHCA_IETH_BYTES,
	[SHCA_EXT_CNP_RSVD]	= SHCA_CNP_RSVD_BYTES,
};

/**
 * shca_ext_size() - wire size of an extension header
 * @ext: header
 *
 * Return: its size in bytes, 0 for an out-of-range @ext.
 */
unsigned int shca_ext_size(enum shca_ext ext)
{
	return ext < SHCA_EXT_NUM ? shca_ext_sizes[ext] : 0;
}

/**
 * shca_ext_offset() - where an extension header sits in a packet
 * @info: opcode table entry
 * @ext: header to locate
 *
 * Return: its offset from the start of the BTH, or -ENOENT if the opcode
 * does not carry it.
 */
int shca_ext_offset(const struct shca_opcode_info *info, enum shca_ext ext)
{
	unsigned int off = SHCA_BTH_BYTES;
	enum shca_ext e;

	if (ext >= SHCA_EXT_NUM || !(info->flags & BIT(ext)))
		return -ENOENT;
	for (e = 0; e < ext; e++)
		if (info->flags & BIT(e))
			off += shca_ext_sizes[e];
	return off;
}

/* Pad and range rules shared by pack and parse. */
static bool shca_pad_ok(const struct shca_opcode_info *info, u8 pad)
{
	if (pad > 3)
		return false;
	if (!pad)
		return true;
	/* Only the end of a message may be padded. */
	return (info->flags & SHCA_OPF_PAYLOAD) &&
	       (info->flags & SHCA_OPF_LAST);
}

static bool shca_fields_ok(const struct shca_wire_hdr *h)
{
	return !((h->dqpn | h->psn | h->msn | h->src_qpn | h->xrc_srqn) &
		 ~SHCA_WIRE_24BIT) &&
	       h->feth_plt <= SHCA_FETH_PLT_MASK &&
	       h->feth_sel <= SHCA_FETH_SEL_MASK >> SHCA_FETH_SEL_SHIFT;
}

static void shca_pack_bth(struct shca_bth *bth, const struct shca_wire_hdr *h)
{
	u32 qpn = h->dqpn, apsn = h->psn;
	u8 flags = h->pad << SHCA_BTH_PAD_SHIFT | SHCA_BTH_TVER;

	if (h->se)
		flags |= SHCA_BTH_SE;
	if (h->mig)
		flags |= SHCA_BTH_MIG;
	if (h->fecn)
		qpn |= SHCA_BTH_FECN;
	if (h->becn)
		qpn |= SHCA_BTH_BECN;
	if (h->ackreq)
		apsn |= SHCA_BTH_ACKREQ;
	bth->opcode = h->opcode;
	bth->flags = flags;
	bth->pkey = cpu_to_be16(h->pkey);
	bth->qpn = cpu_to_be32(qpn);
	bth->apsn = cpu_to_be32(apsn);
}

static void shca_pack_ext(u8 *p, enum shca_ext ext,
			  const struct shca_wire_hdr *h)
{
	struct shca_reth *reth = (void *)p;
	struct shca_atmeth *atm = (void *)p;
	struct shca_deth *deth = (void *)p;

	switch (ext) {
	case SHCA_EXT_XRCETH:
		((struct shca_xrceth *)p)->srqn = cpu_to_be32(h->xrc_srqn);
		break;
	case SHCA_EXT_DETH:
		deth->qkey = cpu_to_be32(h->qkey);
		deth->sqp = cpu_to_be32(h->src_qpn);
		break;
	case SHCA_EXT_FETH:
		((struct shca_feth *)p)->bits =
			cpu_to_be32((u32)h->feth_sel << SHCA_FETH_SEL_SHIFT |
				    h->feth_plt);
		break;
	case SHCA_EXT_RETH:
		reth->va = cpu_to_be64(h->va);
		reth->rkey = cpu_to_be32(h->rkey);
		reth->dma_len = cpu_to_be32(h->dma_len);
		break;
	case SHCA_EXT_ATMETH:
		atm->va = cpu_to_be64(h->va);
		atm->rkey = cpu_to_be32(h->rkey);
		atm->swap_add = cpu_to_be64(h->swap_add);
		atm->compare = cpu_to_be64(h->compare);
		break;
	case SHCA_EXT_AETH:
		((struct shca_aeth *)p)->smsn =
			cpu_to_be32((u32)h->syndrome << 24 | h->msn);
		break;
	case SHCA_EXT_ATMACK:
		((struct shca_atmack *)p)->orig = cpu_to_be64(h->orig);
		break;
	case SHCA_EXT_IMMDT:
		((struct shca_immdt *)p)->imm = h->imm;
		break;
	case SHCA_EXT_IETH:
		((struct shca_ieth *)p)->rkey = cpu_to_be32(h->inv_rkey);
		break;
	default:
		memset(p, 0, shca_ext_size(ext));
		break;
	}
}

/**
 * shca_wire_pack() - write the BTH and extension headers of a packet
 * @buf: destination, the start of the UDP payload
 * @len: bytes available at @buf
 * @h: field values; @h->opcode selects which headers are written
 *
 * Payload, pad bytes and ICRC are left to the caller.  Reserved fields
 * are written as zero.
 *
 * Return: the number of bytes written (the opcode's header length), or
 * -EINVAL if the opcode is unknown, @len is too short, @h->pad is not
 * allowed for the opcode, or a 24-bit field does not fit.
 */
int shca_wire_pack(void *buf, size_t len, const struct shca_wire_hdr *h)
{
	const struct shca_opcode_info *info = shca_opcode_info(h->opcode);
	u8 *p = buf;
	enum shca_ext ext;

	if (!info || len < info->hdr_len || !shca_pad_ok(info, h->pad) ||
	    !shca_fields_ok(h))
		return -EINVAL;

	shca_pack_bth(buf, h);
	p += SHCA_BTH_BYTES;
	for (ext = 0; ext < SHCA_EXT_NUM; ext++) {
		if (!(info->flags & BIT(ext)))
			continue;
		shca_pack_ext(p, ext, h);
		p += shca_ext_sizes[ext];
	}
	return info->hdr_len;
}

static void shca_parse_bth(const struct shca_bth *bth, struct shca_wire_hdr *h)
{
	u32 qpn = be32_to_cpu(bth->qpn), apsn = be32_to_cpu(bth->apsn);

	h->opcode = bth->opcode;
	h->se = bth->flags & SHCA_BTH_SE;
	h->mig = bth->flags & SHCA_BTH_MIG;
	h->pad = (bth->flags & SHCA_BTH_PAD_MASK) >> SHCA_BTH_PAD_SHIFT;
	h->pkey = be16_to_cpu(bth->pkey);
	h->fecn = qpn & SHCA_BTH_FECN;
	h->becn = qpn & SHCA_BTH_BECN;
	h->dqpn = qpn & SHCA_WIRE_24BIT;
	h->ackreq = apsn & SHCA_BTH_ACKREQ;
	h->psn = apsn & SHCA_WIRE_24BIT;
}

static void shca_parse_ext(const u8 *p, enum shca_ext ext,
			   struct shca_wire_hdr *h)
{
	const struct shca_reth *reth = (const void *)p;
	const struct shca_atmeth *atm = (const void *)p;
	const struct shca_deth *deth = (const void *)p;
	u32 smsn, bits;

	switch (ext) {
	case SHCA_EXT_XRCETH:
		h->xrc_srqn = be32_to_cpu(((const struct shca_xrceth *)p)->srqn) &
			      SHCA_WIRE_24BIT;
		break;
	case SHCA_EXT_DETH:
		h->qkey = be32_to_cpu(deth->qkey);
		h->src_qpn = be32_to_cpu(deth->sqp) & SHCA_WIRE_24BIT;
		break;
	case SHCA_EXT_FETH:
		bits = be32_to_cpu(((const struct shca_feth *)p)->bits);
		h->feth_plt = bits & SHCA_FETH_PLT_MASK;
		h->feth_sel = (bits & SHCA_FETH_SEL_MASK) >> SHCA_FETH_SEL_SHIFT;
		break;
	case SHCA_EXT_RETH:
		h->va = be64_to_cpu(reth->va);
		h->rkey = be32_to_cpu(reth->rkey);
		h->dma_len = be32_to_cpu(reth->dma_len);
		break;
	case SHCA_EXT_ATMETH:
		h->va = be64_to_cpu(atm->va);
		h->rkey = be32_to_cpu(atm->rkey);
		h->swap_add = be64_to_cpu(atm->swap_add);
		h->compare = be64_to_cpu(atm->compare);
		break;
	case SHCA_EXT_AETH:
		smsn = be32_to_cpu(((const struct shca_aeth *)p)->smsn);
		h->syndrome = smsn >> 24;
		h->msn = smsn & SHCA_WIRE_24BIT;
		break;
	case SHCA_EXT_ATMACK:
		h->orig = be64_to_cpu(((const struct shca_atmack *)p)->orig);
		break;
	case SHCA_EXT_IMMDT:
		h->imm = ((const struct shca_immdt *)p)->imm;
		break;
	case SHCA_EXT_IETH:
		h->inv_rkey = be32_to_cpu(((const struct shca_ieth *)p)->rkey);
		break;
	default:
		break;
	}
}

/*
 * Check the lengths of a packet whose BTH was read: @len covers BTH
 * through ICRC.  Returns the payload length without pad, or -EINVAL.
 */
static int shca_parse_len(const struct shca_opcode_info *info, size_t len,
			  u8 pad)
{
	size_t seg;

	if (len < info->hdr_len + SHCA_ICRC_BYTES)
		return -EINVAL;
	seg = len - info->hdr_len - SHCA_ICRC_BYTES;
	if (seg % 4 || seg > S32_MAX || !shca_pad_ok(info, pad))
		return -EINVAL;
	if (!(info->flags & SHCA_OPF_PAYLOAD) && seg)
		return -EINVAL;
	if (pad > seg)
		return -EINVAL;
	return seg - pad;
}

/**
 * shca_wire_parse() - validate and decode a RoCE v2 transport packet
 * @buf: the UDP payload, starting at the BTH
 * @len: UDP payload length: BTH through ICRC inclusive
 * @pkt: filled in on success; left undefined on failure
 *
 * Checks that the opcode is known, TVer is 0, @len covers the BTH, all
 * extension headers of the opcode and the ICRC, that payload plus pad is
 * a multiple of four bytes, and that the pad count fits the payload and
 * the opcode (only a message's last packet carries pad).  Never reads
 * outside [@buf, @buf + @len).  The ICRC itself is not checked.
 *
 * Return: 0 or -EINVAL.
 */
int shca_wire_parse(const void *buf, size_t len, struct shca_wire_pkt *pkt)
{
	const struct shca_bth *bth = buf;
	const struct shca_opcode_info *info;
	const u8 *p = buf;
	enum shca_ext ext;
	int pay;

	if (!buf || len < SHCA_BTH_BYTES)
		return -EINVAL;
	info = shca_opcode_info(bth->opcode);
	if (!info || (bth->flags & SHCA_BTH_TVER_MASK) != SHCA_BTH_TVER)
		return -EINVAL;
	pay = shca_parse_len(info, len, (bth->flags & SHCA_BTH_PAD_MASK) >>
			     SHCA_BTH_PAD_SHIFT);
	if (pay < 0)
		return pay;

	memset(pkt, 0, sizeof(*pkt));
	shca_parse_bth(bth, &pkt->hdr);
	p += SHCA_BTH_BYTES;
	for (ext = 0; ext < SHCA_EXT_NUM; ext++) {
		if (!(info->flags & BIT(ext)))
			continue;
		shca_parse_ext(p, ext, &pkt->hdr);
		p += shca_ext_sizes[ext];
	}
	pkt->info = info;
	pkt->hdr_len = info->hdr_len;
	pkt->pay_len = pay;
	return 0;
}
