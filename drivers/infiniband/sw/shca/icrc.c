// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the RoCE v2 invariant CRC (IBTA annex A17).
 *
 * The ICRC is the standard CRC-32 (reflected polynomial 0xedb88320, all-ones
 * seed, inverted result) over:
 *   - 8 bytes of 0xff standing in for the InfiniBand LRH;
 *   - the IP header with the fields routers may change set to all ones
 *     (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label,
 *     hop limit);
 *   - the UDP header with its checksum set to all ones;
 *   - the BTH with its resv8a byte (FECN, BECN, resv6) set to all ones;
 *   - everything after the BTH up to the ICRC (extension headers, payload
 *     and pad).
 * It is stored after the pad least significant byte first, as an Ethernet
 * FCS would be.
 *
 * The bytes after the BTH, nearly all of a packet, go through the crypto
 * API's "crc32" when it has an accelerated implementation (crc32-pclmul
 * on x86, several times faster per byte): the library's crc32_le() is
 * the generic table-driven one on 6.1 and 6.12.  Without one (the
 * generic driver only, as under QEMU's default CPU) they go through
 * shca_crc32_sparse() (crc_logic.h), which computes the same CRC with
 * one load per eight bytes instead of one table load per byte.  Module
 * parameter icrc_driver (read-only) names the one in use.
 *
 * rdma_rxe (6.2 on) computes the ICRC of an RC FLUSH differently: its
 * opcode table gives FLUSH no payload offset, so after the bytes above it
 * runs the CRC once more over the whole BTH-to-ICRC span (BTH, FETH and
 * RETH, the BTH unmasked).  A conformant receiver drops such a packet.
 * shca accepts that variant for an RC FLUSH only, counted as
 * rx_flush_icrc_rxe, and sends it only while the module parameter
 * rxe_flush_icrc is set, so that a FLUSH reaches an rxe responder.
 */
#include <crypto/hash.h>
#include <linux/errno.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/udp.h>

#include "crc_logic.h"
#include "wire.h"

#define SHCA_IPV4_MAX_HDR	60
#define SHCA_IPV4_FRAG_MASK	0x3fff	/* MF flag and fragment offset */
#define SHCA_SUM16_ONES		((__force __sum16)0xffff)
#define SHCA_ICRC_PSEUDO_MAX	(SHCA_IPV4_MAX_HDR + sizeof(struct udphdr) + \
				 SHCA_BTH_BYTES)

/* Where the pieces of a RoCE v2 datagram are, from its IP header. */
struct shca_icrc_layout {
	size_t	ip_hlen;	/* IP header bytes (v4 options included) */
	size_t	total;		/* IP datagram bytes, ICRC included */
};

/* set by shca_icrc_init() before any packet; NULL: shca_crc32_sparse() */
static struct crypto_shash *shca_icrc_tfm;

static char shca_icrc_driver[CRYPTO_MAX_ALG_NAME] = "shca_crc32_sparse";
module_param_string(icrc_driver, shca_icrc_driver, sizeof(shca_icrc_driver),
		    0444);
MODULE_PARM_DESC(icrc_driver,
		 "the CRC-32 implementation the ICRC uses (read-only: the crypto API's crc32 if accelerated, else shca_crc32_sparse)");

static bool shca_rxe_flush_icrc;
module_param_named(rxe_flush_icrc, shca_rxe_flush_icrc, bool, 0644);
MODULE_PARM_DESC(rxe_flush_icrc,
		 "Send RC FLUSH requests with rdma_rxe's ICRC variant, for FLUSH to rxe (conformant peers drop them; default off)");

/* The smallest datagram an ICRC can be computed over. */
static size_t shca_icrc_min(size_t ip_hlen)
{
	return ip_hlen + sizeof(struct udphdr) + SHCA_BTH_BYTES +
	       SHCA_ICRC_BYTES;
}

static int shca_icrc_layout4(const u8 *ip, size_t len,
			     struct shca_icrc_layout *lo)
{
	struct iphdr iph;

	if (len < sizeof(iph))
		return -EINVAL;
	memcpy(&iph, ip, sizeof(iph));
	lo->ip_hlen = iph.ihl * 4;
	lo->total = be16_to_cpu(iph.tot_len);
	if (iph.ihl < 5 || iph.protocol != IPPROTO_UDP)
		return -EINVAL;
	/* A fragment cannot be checked on its own. */
	if (iph.frag_off & cpu_to_be16(SHCA_IPV4_FRAG_MASK))
		return -EINVAL;
	return 0;
}

static int shca_icrc_layout6(const u8 *ip, size_t len,
			     struct shca_icrc_layout *lo)
{
	struct ipv6hdr ip6h;

	if (len < sizeof(ip6h))
		return -EINVAL;
	memcpy(&ip6h, ip, sizeof(ip6h));
	if (ip6h.nexthdr != IPPROTO_UDP)
		return -EINVAL;
	lo->ip_hlen = sizeof(ip6h);
	lo->total = sizeof(ip6h) + be16_to_cpu(ip6h.payload_len);
	return 0;
}

/*
 * Validate the IP and UDP headers at @ip enough to know where BTH and
 * ICRC are, without reading past @len.
 */
static int shca_icrc_layout(const u8 *ip, size_t len,
			    struct shca_icrc_layout *lo)
{
	struct udphdr udph;
	int err;

	if (!ip || len < 1)
		return -EINVAL;
	switch (ip[0] >> 4) {
	case 4:
		err = shca_icrc_layout4(ip, len, lo);
		break;
	case 6:
		err = shca_icrc_layout6(ip, len, lo);
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (err)
		return err;
	if (lo->total > len || lo->total < shca_icrc_min(lo->ip_hlen))
		return -EINVAL;
	memcpy(&udph, ip + lo->ip_hlen, sizeof(udph));
	if (be16_to_cpu(udph.len) != lo->total - lo->ip_hlen)
		return -EINVAL;
	return 0;
}

/* Set the variant fields of a copied IP/UDP/BTH header block to ones. */
static void shca_icrc_mask(u8 *ph, size_t ip_hlen)
{
	struct udphdr *udph = (struct udphdr *)(ph + ip_hlen);
	struct shca_bth *bth = (struct shca_bth *)(udph + 1);

	if (ip_hlen == sizeof(struct ipv6hdr) && (ph[0] >> 4) == 6) {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)ph;

		ip6h->priority = 0xf;
		memset(ip6h->flow_lbl, 0xff, sizeof(ip6h->flow_lbl));
		ip6h->hop_limit = 0xff;
	} else {
		struct iphdr *iph = (struct iphdr *)ph;

		iph->tos = 0xff;
		iph->ttl = 0xff;
		iph->check = SHCA_SUM16_ONES;
	}
	udph->check = SHCA_SUM16_ONES;
	bth->qpn |= cpu_to_be32(SHCA_BTH_RESV8A_MASK);
}

/**
 * shca_icrc_hdr() - start an ICRC over the network and base headers
 * @ip: linear buffer starting at the IPv4 or IPv6 header
 * @len: bytes readable at @ip; must cover IP, UDP and BTH headers
 * @crc: out: running CRC after the pseudo-LRH and masked IP/UDP/BTH
 * @end: out: offset from @ip of the ICRC (end of the covered bytes)
 *
 * The bytes from @ip + (IP header + UDP + BTH) up to @end must then be fed
 * to shca_icrc_update(), and the result passed to shca_icrc_final().
 * The IP and UDP lengths must agree and the datagram must fit in @len.
 *
 * Return: the offset of the first byte after the BTH, or -EINVAL.
 */
static int shca_icrc_hdr(const void *ip, size_t len, u32 *crc, size_t *end)
{
	u8 ph[SHCA_ICRC_PSEUDO_MAX] __aligned(8);
	struct shca_icrc_layout lo;
	size_t hlen;
	int err;

	err = shca_icrc_layout(ip, len, &lo);
	if (err)
		return err;
	hlen = lo.ip_hlen + sizeof(struct udphdr) + SHCA_BTH_BYTES;
	memcpy(ph, ip, hlen);
	shca_icrc_mask(ph, lo.ip_hlen);

	*crc = crc32_le(SHCA_ICRC_LRH_CRC, ph, hlen);
	*end = lo.total - SHCA_ICRC_BYTES;
	return hlen;
}

/**
 * shca_icrc_shash_update() - extend a running CRC-32 through a crypto shash
 * @tfm: a "crc32" shash whose state is the running value (a u32)
 * @crc: running value, as crc32_le() takes and returns it
 * @data: bytes
 * @len: number of bytes
 *
 * Context: any (an accelerated driver falls back to crc32_le() itself
 * where the FPU is not usable).
 * Return: crc32_le(@crc, @data, @len).
 */
u32 shca_icrc_shash_update(struct crypto_shash *tfm, u32 crc,
			   const void *data, size_t len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u32 out;

	desc->tfm = tfm;
	if (crypto_shash_import(desc, &crc) ||
	    crypto_shash_update(desc, data, len) ||
	    crypto_shash_export(desc, &out))
		out = crc32_le(crc, data, len);
	return out;
}

/**
 * shca_icrc_update() - extend a running ICRC over more packet bytes
 * @crc: running value from shca_icrc_hdr() or a previous update
 * @data: next bytes of the packet (extension headers, payload, pad)
 * @len: number of bytes
 *
 * Context: any.
 * Return: the new running value; shca_icrc_final() turns it into the ICRC.
 */
u32 shca_icrc_update(u32 crc, const void *data, size_t len)
{
	if (shca_icrc_tfm)
		return shca_icrc_shash_update(shca_icrc_tfm, crc, data, len);
	return shca_crc32_sparse(crc, data, len);
}

/**
 * shca_icrc_init() - pick the CRC-32 implementation (module load)
 *
 * The crypto API's "crc32" if its driver is not the generic one and its
 * state is the bare running value; else shca_crc32_sparse().
 * Context: process (module init), before any device exists; may sleep.
 */
void shca_icrc_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32", 0, 0);

	if (IS_ERR(tfm))
		return;
	if (crypto_shash_descsize(tfm) != sizeof(u32) ||
	    crypto_shash_statesize(tfm) != sizeof(u32) ||
	    !strcmp(crypto_shash_driver_name(tfm), "crc32-generic")) {
		crypto_free_shash(tfm);
		return;
	}
	strscpy(shca_icrc_driver, crypto_shash_driver_name(tfm),
		sizeof(shca_icrc_driver));
	shca_icrc_tfm = tfm;
}

/*
 * Context: process (module exit, or a failed init), once no device is
 * left.
 */
void shca_icrc_exit(void)
{
	if (shca_icrc_tfm)
		crypto_free_shash(shca_icrc_tfm);
	shca_icrc_tfm = NULL;
}

/*
 * The CRC state over what the IBTA's ICRC covers (not yet finalised), the
 * offset at which the ICRC is stored, and the BTH.
 */
static int shca_icrc_run(const u8 *ip, size_t len, u32 *crc, size_t *at,
			 const u8 **bth)
{
	int off;

	off = shca_icrc_hdr(ip, len, crc, at);
	if (off < 0)
		return off;
	*crc = shca_icrc_update(*crc, ip + off, *at - off);
	*bth = ip + off - SHCA_BTH_BYTES;
	return 0;
}

/* Is it an RC FLUSH, whose ICRC rdma_rxe computes its own way? */
static bool shca_icrc_is_flush(const u8 *bth)
{
	return bth[0] == (SHCA_TR_RC | SHCA_OPC_FLUSH);
}

/* rdma_rxe's variant: the state @crc continued over BTH..ICRC again. */
static u32 shca_icrc_rxe(u32 crc, const u8 *ip, const u8 *bth, size_t at)
{
	return shca_icrc_final(shca_icrc_update(crc, bth, ip + at - bth));
}

/*
 * ICRC of the datagram at @ip, and the offset at which it is stored.  With
 * @rxe, an RC FLUSH gets rdma_rxe's variant (see the top of this file);
 * other opcodes the IBTA's ICRC either way.
 */
static int shca_icrc_calc(const u8 *ip, size_t len, bool rxe, u32 *icrc,
			  size_t *at)
{
	const u8 *bth;
	u32 crc;
	int err;

	err = shca_icrc_run(ip, len, &crc, at, &bth);
	if (err)
		return err;
	*icrc = rxe && shca_icrc_is_flush(bth) ?
		shca_icrc_rxe(crc, ip, bth, *at) : shca_icrc_final(crc);
	return 0;
}

/**
 * shca_icrc_compute() - compute the ICRC of a RoCE v2 datagram
 * @ip: linear buffer starting at the IPv4 or IPv6 header
 * @len: bytes readable at @ip (at least the IP datagram length)
 * @icrc: out: the ICRC value (stored on the wire as a __le32)
 *
 * The ICRC field itself (last four bytes of the datagram) is not read.
 *
 * Return: 0, or -EINVAL if the headers are not a well-formed RoCE v2
 * datagram within @len.
 */
int shca_icrc_compute(const void *ip, size_t len, u32 *icrc)
{
	size_t at;

	return shca_icrc_calc(ip, len, false, icrc, &at);
}

/**
 * shca_icrc_check() - verify the ICRC of a received RoCE v2 datagram
 * @ip: linear buffer starting at the IPv4 or IPv6 header
 * @len: bytes readable at @ip
 *
 * Return: 0 if the ICRC matches, SHCA_ICRC_RXE_FLUSH if it is rdma_rxe's
 * variant of an RC FLUSH's, -EBADMSG if it does not match, -EINVAL if the
 * headers are malformed.
 */
int shca_icrc_check(const void *ip, size_t len)
{
	const u8 *p = ip, *bth;
	__le32 wire;
	size_t at;
	u32 crc;
	int err;

	err = shca_icrc_run(p, len, &crc, &at, &bth);
	if (err)
		return err;
	memcpy(&wire, p + at, sizeof(wire));
	if (le32_to_cpu(wire) == shca_icrc_final(crc))
		return 0;
	/* the variant continues the same state: one more pass, FLUSH only */
	if (shca_icrc_is_flush(bth) &&
	    le32_to_cpu(wire) == shca_icrc_rxe(crc, p, bth, at))
		return SHCA_ICRC_RXE_FLUSH;
	return -EBADMSG;
}

/**
 * shca_icrc_set() - compute and store the ICRC of an outgoing datagram
 * @ip: linear buffer starting at the IPv4 or IPv6 header, headers final
 * @len: bytes writable at @ip
 *
 * An RC FLUSH gets rdma_rxe's variant while rxe_flush_icrc is set.
 *
 * Return: 0, or -EINVAL if the headers are malformed.
 */
int shca_icrc_set(void *ip, size_t len)
{
	u8 *p = ip;
	__le32 wire;
	size_t at;
	u32 icrc;
	int err;

	err = shca_icrc_calc(p, len, READ_ONCE(shca_rxe_flush_icrc), &icrc,
			     &at);
	if (err)
		return err;
	wire = cpu_to_le32(icrc);
	memcpy(p + at, &wire, sizeof(wire));
	return 0;
}
