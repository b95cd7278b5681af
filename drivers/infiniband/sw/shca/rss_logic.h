/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: receive side scaling and work queue rules as pure functions
 * (no locks, no allocation, no device state), tested by
 * kunit/shca_kunit_rss.c.
 *
 * Hash input (Microsoft RSS / mlx5 field selection): the selected fields
 * in the order source address, destination address, source port,
 * destination port, each in network byte order.  Addresses come from an
 * IPv4 or IPv6 header right after the Ethernet header (and up to two VLAN
 * tags); ports from a TCP or UDP header that directly follows it, only if
 * the frame carries the selected L4 protocol and, for IPv4, is not a
 * fragment.  Selecting IPv4 fields makes IPv6 frames contribute no
 * address and vice versa.  A frame that contributes no field hashes to 0.
 */
#ifndef SHCA_RSS_LOGIC_H
#define SHCA_RSS_LOGIC_H

#include <linux/errno.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/shca-abi.h>

#define SHCA_RSS_INPUT_MAX	36	/* two IPv6 addresses + two ports */
#define SHCA_RSS_MAX_LOG_TBL	8	/* 256 entries per table */
#define SHCA_CVLAN_OFF		12	/* the tag follows the MACs */
#define SHCA_CVLAN_LEN		4	/* TPID and TCI */

#define SHCA_RX_HASH_V4	(SHCA_RX_HASH_SRC_IPV4 | SHCA_RX_HASH_DST_IPV4)
#define SHCA_RX_HASH_V6	(SHCA_RX_HASH_SRC_IPV6 | SHCA_RX_HASH_DST_IPV6)
#define SHCA_RX_HASH_TCP (SHCA_RX_HASH_SRC_PORT_TCP | SHCA_RX_HASH_DST_PORT_TCP)
#define SHCA_RX_HASH_UDP (SHCA_RX_HASH_SRC_PORT_UDP | SHCA_RX_HASH_DST_PORT_UDP)
#define SHCA_RX_HASH_SRC_L4 (SHCA_RX_HASH_SRC_PORT_TCP | \
			     SHCA_RX_HASH_SRC_PORT_UDP)
#define SHCA_RX_HASH_DST_L4 (SHCA_RX_HASH_DST_PORT_TCP | \
			     SHCA_RX_HASH_DST_PORT_UDP)

/**
 * shca_toeplitz - the Toeplitz hash of @len bytes under @key
 * @key: the secret key, at least @len + 4 bytes
 * @in: input bytes, most significant bit of in[0] first
 * @len: input length
 *
 * For every set input bit, XOR in the 32 key bits starting at that bit's
 * position.  Return: the hash.
 */
static inline u32 shca_toeplitz(const u8 *key, const u8 *in, u32 len)
{
	u32 window = (u32)key[0] << 24 | (u32)key[1] << 16 |
		     (u32)key[2] << 8 | key[3];
	u32 hash = 0, i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & (0x80 >> b))
				hash ^= window;
			window <<= 1;
			if (key[i + 4] & (0x80 >> b))
				window |= 1;
		}
	}
	return hash;
}

/**
 * shca_rss_check_conf - validate an RSS QP's hash configuration
 * @func: rx_hash_function
 * @key_len: rx_hash_key_len
 * @fields: rx_hash_fields_mask
 * @log_tbl: log2 of the indirection table size
 *
 * Return: 0, -EOPNOTSUPP for fields shca does not implement (IPSEC_SPI,
 * INNER), -EINVAL for anything else wrong: not Toeplitz, a key that is
 * not 40 bytes, unknown field bits, IPv4 and IPv6 fields together, TCP
 * and UDP ports together, or no field at all on a table of more than one
 * entry (mlx5: a one-entry table may serve as a plain steering target).
 */
static inline int shca_rss_check_conf(u8 func, u8 key_len, u64 fields,
				      u32 log_tbl)
{
	if (fields & (SHCA_RX_HASH_IPSEC_SPI | SHCA_RX_HASH_INNER))
		return -EOPNOTSUPP;
	if (func != SHCA_RX_HASH_FUNC_TOEPLITZ ||
	    key_len != SHCA_RX_HASH_KEY_LEN || (fields & ~SHCA_RX_HASH_FIELDS))
		return -EINVAL;
	if ((fields & SHCA_RX_HASH_V4) && (fields & SHCA_RX_HASH_V6))
		return -EINVAL;
	if ((fields & SHCA_RX_HASH_TCP) && (fields & SHCA_RX_HASH_UDP))
		return -EINVAL;
	if (!fields && log_tbl)
		return -EINVAL;
	return 0;
}

static inline u16 shca_rss_be16(const u8 *p)
{
	return (u16)p[0] << 8 | p[1];
}

/* Append @n bytes at @src to the input.  Return: the new length. */
static inline u32 shca_rss_put(u8 *out, u32 len, const u8 *src, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		out[len + i] = src[i];
	return len + n;
}

/* The ports of the TCP/UDP header at @l4, if selected and present. */
static inline u32 shca_rss_put_ports(u8 *out, u32 len, const u8 *frame,
				     u32 flen, u32 l4, u8 proto, u64 fields)
{
	u64 want = proto == 6 ? SHCA_RX_HASH_TCP :
		   proto == 17 ? SHCA_RX_HASH_UDP : 0;

	if (!(fields & want) || l4 + 4 > flen)
		return len;
	if (fields & want & SHCA_RX_HASH_SRC_L4)
		len = shca_rss_put(out, len, frame + l4, 2);
	if (fields & want & SHCA_RX_HASH_DST_L4)
		len = shca_rss_put(out, len, frame + l4 + 2, 2);
	return len;
}

static inline u32 shca_rss_input_v4(const u8 *frame, u32 flen, u32 l3,
				    u64 fields, u8 *out)
{
	const u8 *ip = frame + l3;
	u32 ihl, len = 0;

	if (l3 + 20 > flen || (ip[0] >> 4) != 4 || (fields & SHCA_RX_HASH_V6))
		return 0;
	ihl = (ip[0] & 0xf) * 4;
	if (ihl < 20 || l3 + ihl > flen)
		return 0;
	if (fields & SHCA_RX_HASH_SRC_IPV4)
		len = shca_rss_put(out, len, ip + 12, 4);
	if (fields & SHCA_RX_HASH_DST_IPV4)
		len = shca_rss_put(out, len, ip + 16, 4);
	/* MF or a fragment offset: no (complete) L4 header here */
	if (shca_rss_be16(ip + 6) & 0x3fff)
		return len;
	return shca_rss_put_ports(out, len, frame, flen, l3 + ihl, ip[9],
				  fields);
}

static inline u32 shca_rss_input_v6(const u8 *frame, u32 flen, u32 l3,
				    u64 fields, u8 *out)
{
	const u8 *ip = frame + l3;
	u32 len = 0;

	if (l3 + 40 > flen || (ip[0] >> 4) != 6 || (fields & SHCA_RX_HASH_V4))
		return 0;
	if (fields & SHCA_RX_HASH_SRC_IPV6)
		len = shca_rss_put(out, len, ip + 8, 16);
	if (fields & SHCA_RX_HASH_DST_IPV6)
		len = shca_rss_put(out, len, ip + 24, 16);
	return shca_rss_put_ports(out, len, frame, flen, l3 + 40, ip[6],
				  fields);
}

/**
 * shca_rss_input - build the hash input of an Ethernet frame
 * @frame: the frame, from its Ethernet header
 * @flen: bytes of @frame that may be read
 * @fields: the QP's rx_hash_fields_mask
 * @out: SHCA_RSS_INPUT_MAX bytes
 *
 * Return: the input length; 0 if the frame contributes no field.
 */
static inline u32 shca_rss_input(const u8 *frame, u32 flen, u64 fields,
				 u8 *out)
{
	u32 off = 12, tags;
	u16 type;

	for (tags = 0; tags <= 2; tags++) {
		if (off + 2 > flen)
			return 0;
		type = shca_rss_be16(frame + off);
		if (type != 0x8100 && type != 0x88a8)
			break;
		off += 4;
	}
	off += 2;
	if (type == 0x0800)
		return shca_rss_input_v4(frame, flen, off, fields, out);
	if (type == 0x86dd)
		return shca_rss_input_v6(frame, flen, off, fields, out);
	return 0;
}

/* The hash of a frame under @key (SHCA_RX_HASH_KEY_LEN bytes). */
static inline u32 shca_rss_hash(const u8 *key, const u8 *frame, u32 flen,
				u64 fields)
{
	u8 in[SHCA_RSS_INPUT_MAX];
	u32 len = shca_rss_input(frame, flen, fields, in);

	return len ? shca_toeplitz(key, in, len) : 0;
}

/**
 * shca_wq_transition_ok - may a WQ move from @cur to @next?
 * @cur: the current state (as the caller asserts it, or the real one)
 * @next: the requested state
 *
 * RESET -> RDY arms the WQ; any state may move to RESET (posted WQEs are
 * discarded) or to ERR (posted WQEs are flushed; ERR -> ERR flushes what
 * was posted since); RESET -> RESET and RDY -> RDY change nothing.  The
 * one refused move is ERR -> RDY: the WQ must pass through RESET.
 */
static inline bool shca_wq_transition_ok(enum ib_wq_state cur,
					 enum ib_wq_state next)
{
	if (cur > IB_WQS_ERR || next > IB_WQS_ERR)
		return false;
	return !(cur == IB_WQS_ERR && next == IB_WQS_RDY);
}

/**
 * shca_wq_cvlan_tci - the C-VLAN tag a stripping WQ removes from a frame
 * @frame: the frame, from its Ethernet header
 * @flen: bytes of @frame that may be read
 * @tci: receives the tag's TCI (host order)
 *
 * The tag is stripped only if it is an 802.1Q (0x8100) tag right after
 * the two MAC addresses and is followed by an EtherType, so the stripped
 * frame still has a whole Ethernet header.
 * Return: true if the 4 bytes at offset 12 are to be removed.
 */
static inline bool shca_wq_cvlan_tci(const u8 *frame, u32 flen, u16 *tci)
{
	if (flen < SHCA_CVLAN_OFF + SHCA_CVLAN_LEN + 2 ||
	    shca_rss_be16(frame + SHCA_CVLAN_OFF) != 0x8100)
		return false;
	*tci = shca_rss_be16(frame + SHCA_CVLAN_OFF + 2);
	return true;
}

#endif /* SHCA_RSS_LOGIC_H */
