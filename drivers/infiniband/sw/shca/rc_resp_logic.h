/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the pure decisions of the RC/UC responder - PSN classification,
 * opcode sequencing, packet lengths, AETH syndromes.  No device state;
 * kunit/shca_kunit_resp.c tests these exact functions.
 */
#ifndef SHCA_RC_RESP_LOGIC_H
#define SHCA_RC_RESP_LOGIC_H

#include <linux/bits.h>
#include <linux/math.h>
#include <linux/types.h>

#include "psn.h"
#include "wire.h"

/* AETH syndromes (IBTA 9.7.5.2.2). */
#define SHCA_AETH_ACK_NO_CREDIT	0x1f	/* ACK, "no credit info" */
#define SHCA_AETH_RNR_NAK	0x20	/* | RNR timer code */
#define SHCA_AETH_NAK_SEQ	0x60	/* PSN sequence error */
#define SHCA_AETH_NAK_INV_REQ	0x61	/* invalid request */
#define SHCA_AETH_NAK_REM_ACC	0x62	/* remote access error */
#define SHCA_AETH_NAK_REM_OP	0x63	/* remote operational error */

/* The operation kinds a message can be of. */
#define SHCA_RESP_KIND_MASK	(SHCA_OPF_SEND | SHCA_OPF_WRITE | \
				 SHCA_OPF_READ | SHCA_OPF_ATOMIC)

/* Largest message (port max_msg_sz); longer RETH lengths are invalid. */
#define SHCA_RESP_MAX_MSG	BIT(31)

/* ACK at the latest after this many unacknowledged packets. */
#define SHCA_RESP_ACK_EVERY	16

enum shca_psn_class {
	SHCA_PSN_EXPECTED,	/* execute */
	SHCA_PSN_DUPLICATE,	/* already executed: replay or re-ACK */
	SHCA_PSN_FUTURE,	/* a gap: sequence NAK (RC), resync (UC) */
};

/**
 * shca_resp_psn_class() - where a request PSN lies relative to ePSN
 * @psn: PSN of the request
 * @epsn: the responder's expected PSN
 *
 * A PSN up to 2^23 before @epsn is a duplicate, up to 2^23 - 1 after it
 * is in the future (IBTA 9.7.5.1.1).
 *
 * Return: enum shca_psn_class.
 */
static inline enum shca_psn_class shca_resp_psn_class(u32 psn, u32 epsn)
{
	s32 d = shca_psn_diff(psn, epsn);

	if (!d)
		return SHCA_PSN_EXPECTED;
	return d < 0 ? SHCA_PSN_DUPLICATE : SHCA_PSN_FUTURE;
}

/**
 * shca_resp_seq_ok() - may this opcode come next?
 * @cur: kind (SHCA_OPF_SEND or _WRITE) of the message in progress, 0 if
 *	 none
 * @flags: opcode flags of the new packet
 *
 * Outside a message only FIRST or ONLY packets are allowed; inside one
 * only MIDDLE or LAST of the same kind.
 *
 * Return: true if the sequence is valid.
 */
static inline bool shca_resp_seq_ok(u32 cur, u32 flags)
{
	if (!cur)
		return flags & SHCA_OPF_FIRST;
	return !(flags & SHCA_OPF_FIRST) &&
	       (flags & (SHCA_OPF_MIDDLE | SHCA_OPF_LAST)) &&
	       (flags & SHCA_RESP_KIND_MASK) == cur;
}

/**
 * shca_resp_seq_next() - message kind in progress after a valid packet
 * @cur: kind before the packet
 * @flags: opcode flags of the packet
 *
 * Return: the kind of the message still open, 0 if none.
 */
static inline u32 shca_resp_seq_next(u32 cur, u32 flags)
{
	if (flags & SHCA_OPF_LAST)
		return 0;
	if (flags & SHCA_OPF_FIRST)
		return flags & SHCA_RESP_KIND_MASK;
	return cur;
}

/**
 * shca_resp_len_ok() - is a SEND/WRITE packet's payload length legal?
 * @flags: opcode flags
 * @len: payload bytes
 * @mtu: path MTU in bytes
 *
 * FIRST and MIDDLE carry exactly one MTU, LAST 1 to MTU bytes, ONLY up
 * to one MTU.
 *
 * Return: true if legal.
 */
static inline bool shca_resp_len_ok(u32 flags, u32 len, u32 mtu)
{
	if (len > mtu)
		return false;
	if ((flags & SHCA_OPF_ONLY) == SHCA_OPF_ONLY)
		return true;
	if (flags & (SHCA_OPF_FIRST | SHCA_OPF_MIDDLE))
		return len == mtu;
	return len > 0;
}

/**
 * shca_resp_feth_ok() - is a FLUSH request's FETH one shca can execute?
 * @plt: placement type, 4 bits
 * @sel: selectivity level, 2 bits
 *
 * The type must name at least one of global visibility and persistence
 * and no reserved type bit; the level is a range or the whole region
 * (levels 2 and 3 are reserved).  Whether the QP and the region allow
 * the type is the caller's access check.
 *
 * Return: true if valid.
 */
static inline bool shca_resp_feth_ok(u8 plt, u8 sel)
{
	if (!plt || (plt & ~(SHCA_FETH_PLT_GLOBAL | SHCA_FETH_PLT_PERSISTENT)))
		return false;
	return sel == SHCA_FETH_SEL_RANGE || sel == SHCA_FETH_SEL_MR;
}

/**
 * shca_resp_read_npkts() - response packets (and PSNs) of an RDMA READ
 * @len: RETH DMA length
 * @mtu: path MTU in bytes, not 0
 *
 * Return: max(1, ceil(@len / @mtu)).
 */
static inline u32 shca_resp_read_npkts(u32 len, u32 mtu)
{
	/* not DIV_ROUND_UP(): @len + @mtu - 1 may wrap */
	return len ? len / mtu + !!(len % mtu) : 1;
}

/**
 * shca_resp_read_opcode() - opcode of one READ response packet
 * @idx: index of the packet, 0-based
 * @n: number of packets of the response
 *
 * Return: an RC RDMA_READ_RESPONSE_* opcode.
 */
static inline u8 shca_resp_read_opcode(u32 idx, u32 n)
{
	if (n == 1)
		return SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_ONLY;
	if (!idx)
		return SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_FIRST;
	if (idx == n - 1)
		return SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_LAST;
	return SHCA_TR_RC | SHCA_OPC_RDMA_READ_RESPONSE_MIDDLE;
}

/**
 * shca_resp_rnr_syndrome() - AETH syndrome of an RNR NAK
 * @timer: the QP's min_rnr_timer (IBTA encoding, 5 bits)
 *
 * Return: the syndrome byte.
 */
static inline u8 shca_resp_rnr_syndrome(u8 timer)
{
	return SHCA_AETH_RNR_NAK | (timer & 0x1f);
}

/**
 * shca_resp_rewind_count() - how far the responder's resources go back
 * @nres: slots in the ring of READ/atomic resources
 * @tx: the slot of the oldest resource with responses left to send
 * @npending: resources with responses left, from @tx on
 * @i: the slot of the resource a duplicate request names
 *
 * The ring is filled in order: the @npending slots from @tx are still
 * being answered, the others (@tx + @npending up to @tx - 1, around the
 * ring) hold the latest resources already answered, oldest first.  A
 * requester that went back to the one in slot @i asks for it and every
 * later one again.
 *
 * Return: 0 if slot @i is still pending; else the answered slots from @i
 * up to @tx - 1, which become pending again (@tx moves back to @i).
 */
static inline u32 shca_resp_rewind_count(u32 nres, u32 tx, u32 npending,
					 u32 i)
{
	u32 ahead = (i + nres - tx) % nres;	/* slots from @tx to @i */

	return ahead < npending ? 0 : nres - ahead;
}

#endif /* SHCA_RC_RESP_LOGIC_H */
