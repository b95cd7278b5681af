/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: RoCE v2 wire format - IBTA transport headers, the opcode table and
 * the invariant CRC.  Pure functions over byte buffers; no device state.
 *
 * A RoCE v2 packet is IP | UDP (dport 4791) | BTH | extension headers |
 * payload | pad (0-3 bytes) | ICRC (4 bytes).  The parse/pack helpers
 * here work on the UDP payload (BTH onwards); the ICRC helpers work on the
 * IP datagram (IP header onwards).
 */
#ifndef SHCA_WIRE_H
#define SHCA_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/crc32.h>
#include <linux/types.h>

#define SHCA_ROCE_UDP_PORT	4791

/* Header sizes in bytes. */
#define SHCA_BTH_BYTES		12
#define SHCA_RETH_BYTES		16
#define SHCA_AETH_BYTES		4
#define SHCA_ATMETH_BYTES	28
#define SHCA_ATMACK_BYTES	8
#define SHCA_DETH_BYTES		8
#define SHCA_IMMDT_BYTES	4
#define SHCA_IETH_BYTES		4
#define SHCA_XRCETH_BYTES	4
#define SHCA_FETH_BYTES		4
#define SHCA_CNP_RSVD_BYTES	16	/* reserved block after a CNP's BTH */
#define SHCA_ICRC_BYTES		4

/* Base Transport Header. */
struct shca_bth {
	u8	opcode;
	u8	flags;		/* SE | M | PadCnt | TVer */
	__be16	pkey;
	__be32	qpn;		/* FECN | BECN | resv6 | DestQP */
	__be32	apsn;		/* AckReq | resv7 | PSN */
} __packed;

#define SHCA_BTH_SE		0x80
#define SHCA_BTH_MIG		0x40
#define SHCA_BTH_PAD_MASK	0x30
#define SHCA_BTH_PAD_SHIFT	4
#define SHCA_BTH_TVER_MASK	0x0f
#define SHCA_BTH_TVER		0
#define SHCA_BTH_FECN		0x80000000U
#define SHCA_BTH_BECN		0x40000000U
#define SHCA_BTH_RESV8A_MASK	0xff000000U	/* FECN | BECN | resv6 */
#define SHCA_BTH_ACKREQ		0x80000000U
#define SHCA_WIRE_24BIT		0x00ffffffU	/* QPN, PSN, MSN, SrcQP */

/* RDMA Extended Transport Header. */
struct shca_reth {
	__be64	va;
	__be32	rkey;
	__be32	dma_len;
} __packed;

/* ACK Extended Transport Header. */
struct shca_aeth {
	__be32	smsn;		/* Syndrome (8) | MSN (24) */
} __packed;

/* Atomic Extended Transport Header. */
struct shca_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;
	__be64	compare;
} __packed;

/* Atomic ACK Extended Transport Header. */
struct shca_atmack {
	__be64	orig;
} __packed;

/* Datagram Extended Transport Header. */
struct shca_deth {
	__be32	qkey;
	__be32	sqp;		/* resv8 | SrcQP (24) */
} __packed;

/* Immediate data. */
struct shca_immdt {
	__be32	imm;
} __packed;

/* Invalidate Extended Transport Header. */
struct shca_ieth {
	__be32	rkey;
} __packed;

/* XRC Extended Transport Header: the target XRC SRQ. */
struct shca_xrceth {
	__be32	srqn;		/* resv8 | XRCSRQ (24) */
} __packed;

/*
 * FLUSH Extended Transport Header (IBTA 1.5, Memory Placement Extensions):
 * bits 3-0 the placement type (SHCA_FETH_PLT_*), bits 5-4 the
 * selectivity level (SHCA_FETH_SEL_*), the rest reserved.
 */
struct shca_feth {
	__be32	bits;
} __packed;

#define SHCA_FETH_PLT_MASK	0x0000000fU
#define SHCA_FETH_SEL_MASK	0x00000030U
#define SHCA_FETH_SEL_SHIFT	4
#define SHCA_FETH_PLT_GLOBAL	0x1	/* global visibility */
#define SHCA_FETH_PLT_PERSISTENT 0x2	/* persistence */
#define SHCA_FETH_SEL_RANGE	0	/* the RETH's range of the region */
#define SHCA_FETH_SEL_MR	1	/* the whole region the R_Key names */

static_assert(sizeof(struct shca_bth) == SHCA_BTH_BYTES);
static_assert(sizeof(struct shca_reth) == SHCA_RETH_BYTES);
static_assert(sizeof(struct shca_aeth) == SHCA_AETH_BYTES);
static_assert(sizeof(struct shca_atmeth) == SHCA_ATMETH_BYTES);
static_assert(sizeof(struct shca_atmack) == SHCA_ATMACK_BYTES);
static_assert(sizeof(struct shca_deth) == SHCA_DETH_BYTES);
static_assert(sizeof(struct shca_immdt) == SHCA_IMMDT_BYTES);
static_assert(sizeof(struct shca_ieth) == SHCA_IETH_BYTES);
static_assert(sizeof(struct shca_xrceth) == SHCA_XRCETH_BYTES);
static_assert(sizeof(struct shca_feth) == SHCA_FETH_BYTES);

/*
 * Opcodes: the top three bits select the transport, the low five the
 * operation.  RD (0x40) is not implemented.  XRC (0xa0) reuses the RC
 * operation numbers: its requests carry an XRCETH right after the BTH,
 * its responses (ACK, READ responses, atomic ACK) are laid out as RC's.
 */
enum shca_transport {
	SHCA_TR_RC	= 0x00,
	SHCA_TR_UC	= 0x20,
	SHCA_TR_RD	= 0x40,
	SHCA_TR_UD	= 0x60,
	SHCA_TR_CNP	= 0x80,
	SHCA_TR_XRC	= 0xa0,
};

#define SHCA_TR_MASK	0xe0
#define SHCA_OPC_MASK	0x1f

enum shca_op {
	SHCA_OPC_SEND_FIRST			= 0x00,
	SHCA_OPC_SEND_MIDDLE			= 0x01,
	SHCA_OPC_SEND_LAST			= 0x02,
	SHCA_OPC_SEND_LAST_WITH_IMMEDIATE	= 0x03,
	SHCA_OPC_SEND_ONLY			= 0x04,
	SHCA_OPC_SEND_ONLY_WITH_IMMEDIATE	= 0x05,
	SHCA_OPC_RDMA_WRITE_FIRST		= 0x06,
	SHCA_OPC_RDMA_WRITE_MIDDLE		= 0x07,
	SHCA_OPC_RDMA_WRITE_LAST		= 0x08,
	SHCA_OPC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x09,
	SHCA_OPC_RDMA_WRITE_ONLY		= 0x0a,
	SHCA_OPC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x0b,
	SHCA_OPC_RDMA_READ_REQUEST		= 0x0c,
	SHCA_OPC_RDMA_READ_RESPONSE_FIRST	= 0x0d,
	SHCA_OPC_RDMA_READ_RESPONSE_MIDDLE	= 0x0e,
	SHCA_OPC_RDMA_READ_RESPONSE_LAST	= 0x0f,
	SHCA_OPC_RDMA_READ_RESPONSE_ONLY	= 0x10,
	SHCA_OPC_ACKNOWLEDGE			= 0x11,
	SHCA_OPC_ATOMIC_ACKNOWLEDGE		= 0x12,
	SHCA_OPC_COMPARE_SWAP			= 0x13,
	SHCA_OPC_FETCH_ADD			= 0x14,
	SHCA_OPC_SEND_LAST_WITH_INVALIDATE	= 0x16,
	SHCA_OPC_SEND_ONLY_WITH_INVALIDATE	= 0x17,
	SHCA_OPC_FLUSH				= 0x1c,
	SHCA_OPC_ATOMIC_WRITE			= 0x1d,
};

/* The RoCE v2 Congestion Notification Packet. */
#define SHCA_OPCODE_CNP		(SHCA_TR_CNP | 0x01)

/*
 * Extension headers, in the order in which they follow the BTH.  CNP_RSVD
 * is the 16-byte reserved block of a CNP, treated as a header so that a
 * CNP has no payload.
 */
enum shca_ext {
	SHCA_EXT_XRCETH,
	SHCA_EXT_DETH,
	SHCA_EXT_FETH,
	SHCA_EXT_RETH,
	SHCA_EXT_ATMETH,
	SHCA_EXT_AETH,
	SHCA_EXT_ATMACK,
	SHCA_EXT_IMMDT,
	SHCA_EXT_IETH,
	SHCA_EXT_CNP_RSVD,
	SHCA_EXT_NUM
};

/* Opcode flags: bits 0-9 say which extension headers are present. */
#define SHCA_OPF_XRCETH		BIT(SHCA_EXT_XRCETH)
#define SHCA_OPF_DETH		BIT(SHCA_EXT_DETH)
#define SHCA_OPF_FETH		BIT(SHCA_EXT_FETH)
#define SHCA_OPF_RETH		BIT(SHCA_EXT_RETH)
#define SHCA_OPF_ATMETH		BIT(SHCA_EXT_ATMETH)
#define SHCA_OPF_AETH		BIT(SHCA_EXT_AETH)
#define SHCA_OPF_ATMACK		BIT(SHCA_EXT_ATMACK)
#define SHCA_OPF_IMMDT		BIT(SHCA_EXT_IMMDT)
#define SHCA_OPF_IETH		BIT(SHCA_EXT_IETH)
#define SHCA_OPF_CNP_RSVD	BIT(SHCA_EXT_CNP_RSVD)
#define SHCA_OPF_EXT_MASK	(BIT(SHCA_EXT_NUM) - 1)
#define SHCA_OPF_REQ		BIT(10)	/* sent by a requester */
#define SHCA_OPF_RESP		BIT(11)	/* sent by a responder */
#define SHCA_OPF_PAYLOAD	BIT(12)	/* may carry data (and pad) */
#define SHCA_OPF_FIRST		BIT(13)	/* first packet of a message */
#define SHCA_OPF_MIDDLE		BIT(14)
#define SHCA_OPF_LAST		BIT(15)
#define SHCA_OPF_ONLY		(SHCA_OPF_FIRST | SHCA_OPF_LAST)
#define SHCA_OPF_SEND		BIT(16)
#define SHCA_OPF_WRITE		BIT(17)
#define SHCA_OPF_READ		BIT(18)
#define SHCA_OPF_ATOMIC		BIT(19)
#define SHCA_OPF_ACK		BIT(20)	/* plain ACK/NAK */
#define SHCA_OPF_COMP		BIT(21)	/* consumes a receive WQE */
#define SHCA_OPF_NEEDS_ACK	BIT(22)	/* RC request: responder answers */
#define SHCA_OPF_CNP		BIT(23)

/**
 * struct shca_opcode_info - what the IBTA says about one opcode
 * @name: e.g. "RC_SEND_ONLY"; NULL for an opcode we do not know
 * @flags: SHCA_OPF_* bits
 * @hdr_len: bytes of BTH plus extension headers (payload starts here)
 */
struct shca_opcode_info {
	const char	*name;
	u32		flags;
	u8		hdr_len;
};

/**
 * struct shca_wire_hdr - host-order values of every header field
 * @opcode: BTH OpCode
 * @pad: BTH PadCnt, 0-3
 * @se: BTH solicited event
 * @mig: BTH MigReq
 * @fecn: BTH FECN (RoCE v2 congestion marking)
 * @becn: BTH BECN
 * @ackreq: BTH AckReq
 * @pkey: BTH P_Key
 * @dqpn: BTH destination QP, 24 bits
 * @psn: BTH PSN, 24 bits
 * @va: RETH or AtomicETH virtual address
 * @rkey: RETH or AtomicETH R_Key
 * @dma_len: RETH DMA length
 * @swap_add: AtomicETH swap (or add) data
 * @compare: AtomicETH compare data
 * @syndrome: AETH syndrome
 * @msn: AETH MSN, 24 bits
 * @orig: AtomicAckETH original remote data
 * @qkey: DETH Q_Key
 * @src_qpn: DETH source QP, 24 bits
 * @imm: ImmDt, opaque and kept in wire order like ib_send_wr.ex.imm_data
 * @inv_rkey: IETH R_Key to invalidate
 * @xrc_srqn: XRCETH XRC SRQ number, 24 bits
 * @feth_plt: FETH placement type, 4 bits
 * @feth_sel: FETH selectivity level, 2 bits
 *
 * Fields of headers absent from @opcode are ignored by pack and zeroed by
 * parse.  24-bit fields must fit in 24 bits, the FETH's in theirs.
 */
struct shca_wire_hdr {
	u8	opcode;
	u8	pad;
	bool	se;
	bool	mig;
	bool	fecn;
	bool	becn;
	bool	ackreq;
	u16	pkey;
	u32	dqpn;
	u32	psn;
	u64	va;
	u32	rkey;
	u32	dma_len;
	u64	swap_add;
	u64	compare;
	u8	syndrome;
	u32	msn;
	u64	orig;
	u32	qkey;
	u32	src_qpn;
	__be32	imm;
	u32	inv_rkey;
	u32	xrc_srqn;
	u8	feth_plt;
	u8	feth_sel;
};

/**
 * struct shca_wire_pkt - a parsed RoCE v2 transport packet
 * @hdr: decoded header fields
 * @info: opcode table entry of @hdr.opcode
 * @hdr_len: bytes of BTH plus extension headers; the payload starts here
 * @pay_len: payload bytes, pad excluded; pad and then ICRC follow it
 */
struct shca_wire_pkt {
	struct shca_wire_hdr		hdr;
	const struct shca_opcode_info	*info;
	u32				hdr_len;
	u32				pay_len;
};

const struct shca_opcode_info *shca_opcode_info(u8 opcode);
unsigned int shca_ext_size(enum shca_ext ext);
int shca_ext_offset(const struct shca_opcode_info *info, enum shca_ext ext);
int shca_wire_pack(void *buf, size_t len, const struct shca_wire_hdr *h);
int shca_wire_parse(const void *buf, size_t len, struct shca_wire_pkt *pkt);

/**
 * shca_opcode_transport() - transport bits of an opcode
 * @opcode: BTH opcode
 *
 * Return: one of enum shca_transport.
 */
static inline u8 shca_opcode_transport(u8 opcode)
{
	return opcode & SHCA_TR_MASK;
}

/**
 * shca_opcode_valid_for() - is an opcode defined for a transport?
 * @opcode: BTH opcode
 * @transport: SHCA_TR_RC, SHCA_TR_UC, SHCA_TR_UD, SHCA_TR_CNP or SHCA_TR_XRC
 *
 * Return: true if @opcode belongs to @transport and is in the table.
 */
static inline bool shca_opcode_valid_for(u8 opcode, u8 transport)
{
	return shca_opcode_transport(opcode) == transport &&
	       shca_opcode_info(opcode);
}

/*
 * Invariant CRC.  The IP-level helpers take a linear buffer starting at
 * the IPv4 or IPv6 header; the datagram length comes from the IP header
 * and must fit in @len (trailing bytes, e.g. Ethernet padding, are
 * ignored).  The ICRC is the last four bytes of the UDP payload, stored
 * least significant byte first.
 */
int shca_icrc_compute(const void *ip, size_t len, u32 *icrc);
/* shca_icrc_check(): the ICRC is rdma_rxe's variant of an RC FLUSH's */
#define SHCA_ICRC_RXE_FLUSH	1
int shca_icrc_check(const void *ip, size_t len);
int shca_icrc_set(void *ip, size_t len);

/* the running ICRC over more packet bytes; the CRC-32 picked at load */
u32 shca_icrc_update(u32 crc, const void *data, size_t len);

struct crypto_shash;
u32 shca_icrc_shash_update(struct crypto_shash *tfm, u32 crc,
			   const void *data, size_t len);
void shca_icrc_init(void);
void shca_icrc_exit(void);

/**
 * shca_icrc_final() - finish a running ICRC
 * @crc: running value
 *
 * Return: the ICRC, to be stored little-endian after the pad.
 */
static inline u32 shca_icrc_final(u32 crc)
{
	return ~crc;
}

#endif /* SHCA_WIRE_H */
