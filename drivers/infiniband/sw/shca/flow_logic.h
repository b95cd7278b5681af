/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: flow steering's pure part - parsing an Ethernet frame into a
 * match key, compiling the specs of an ib_flow_attr into a value/mask
 * pair over that key, and matching one against the other.  No state, no
 * locks, no allocation: every function may be called in any context.
 *
 * A frame is Ethernet with at most one 802.1Q (or 802.1ad) tag, then
 * IPv4 (options allowed) or IPv6 (no extension headers are walked), then
 * TCP or UDP.  A layer whose header is cut short is absent: a rule that
 * needs it does not match, and the parser reports the frame as
 * malformed so the caller can count it.
 */
#ifndef SHCA_FLOW_LOGIC_H
#define SHCA_FLOW_LOGIC_H

#include <linux/errno.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/string.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <linux/udp.h>
#include <rdma/ib_verbs.h>

/* Enough of a frame to hold every header the parser looks at. */
#define SHCA_FLOW_HDR_MAX	(ETH_HLEN + VLAN_HLEN + 60 + 20)

/* The fields a rule can match on; a parsed frame fills what it has. */
struct shca_flow_key {
	u8 dmac[ETH_ALEN];
	u8 smac[ETH_ALEN];
	__be16 ether_type;	/* after the tag, if any */
	__be16 vlan_tag;	/* the TCI; 0 without a tag */
	__be32 v4_src;
	__be32 v4_dst;
	u8 v4_proto;
	u8 v4_tos;
	u8 v4_ttl;
	u8 v4_flags;		/* the 3 flag bits of frag_off */
	u8 v6_src[16];
	u8 v6_dst[16];
	__be32 v6_flow_label;	/* 20 bits */
	u8 v6_next_hdr;
	u8 v6_tclass;
	u8 v6_hop_limit;
	u8 pad;
	__be16 l4_dport;
	__be16 l4_sport;
};

/* What a parsed frame holds besides the key. */
struct shca_flow_pkt {
	struct shca_flow_key key;
	bool vlan;
	u8 l3;			/* 0, 4 or 6 */
	u8 l4;			/* 0, IPPROTO_TCP or IPPROTO_UDP */
	bool malformed;		/* a header was cut short */
	u16 l3_off;		/* from the start of the frame */
	u16 l4_off;
};

/* A compiled rule: which layers it needs, and value/mask over the key. */
struct shca_flow_match {
	struct shca_flow_key val;	/* already masked */
	struct shca_flow_key mask;
	u8 l3;				/* 0 (any), 4 or 6 */
	u8 l4;				/* 0 (any), IPPROTO_TCP or _UDP */
	bool vlan;			/* the frame must carry a tag */
};

/* IPv4/IPv6 ether types. */
static inline bool shca_flow_is_tag(__be16 type)
{
	return type == htons(ETH_P_8021Q) || type == htons(ETH_P_8021AD);
}

static inline void shca_flow_parse_l4(const u8 *d, u32 len, u8 proto,
				      u32 off, struct shca_flow_pkt *p)
{
	u32 need;

	if (proto == IPPROTO_TCP)
		need = sizeof(struct tcphdr);
	else if (proto == IPPROTO_UDP)
		need = sizeof(struct udphdr);
	else
		return;
	if (len < off || len - off < need) {
		p->malformed = true;
		return;
	}
	/* both headers start with the source and destination ports */
	memcpy(&p->key.l4_sport, d + off, 2);
	memcpy(&p->key.l4_dport, d + off + 2, 2);
	p->l4 = proto;
	p->l4_off = off;
}

static inline void shca_flow_parse_v4(const u8 *d, u32 len, u32 off,
				      struct shca_flow_pkt *p)
{
	struct iphdr ip;
	u32 hlen;

	if (len - off < sizeof(ip)) {
		p->malformed = true;
		return;
	}
	memcpy(&ip, d + off, sizeof(ip));
	hlen = ip.ihl * 4;
	if (ip.version != 4 || hlen < sizeof(ip) || len - off < hlen) {
		p->malformed = true;
		return;
	}
	p->l3 = 4;
	p->l3_off = off;
	p->key.v4_src = ip.saddr;
	p->key.v4_dst = ip.daddr;
	p->key.v4_proto = ip.protocol;
	p->key.v4_tos = ip.tos;
	p->key.v4_ttl = ip.ttl;
	p->key.v4_flags = ntohs(ip.frag_off) >> 13;
	/* a later fragment carries no L4 header */
	if (!(ntohs(ip.frag_off) & IP_OFFSET))
		shca_flow_parse_l4(d, len, ip.protocol, off + hlen, p);
}

static inline void shca_flow_parse_v6(const u8 *d, u32 len, u32 off,
				      struct shca_flow_pkt *p)
{
	struct ipv6hdr ip;

	if (len - off < sizeof(ip)) {
		p->malformed = true;
		return;
	}
	memcpy(&ip, d + off, sizeof(ip));
	if (ip.version != 6) {
		p->malformed = true;
		return;
	}
	p->l3 = 6;
	p->l3_off = off;
	memcpy(p->key.v6_src, &ip.saddr, 16);
	memcpy(p->key.v6_dst, &ip.daddr, 16);
	p->key.v6_flow_label = ip6_flowlabel(&ip);
	p->key.v6_next_hdr = ip.nexthdr;
	p->key.v6_tclass = ip6_tclass(ip6_flowinfo(&ip));
	p->key.v6_hop_limit = ip.hop_limit;
	shca_flow_parse_l4(d, len, ip.nexthdr, off + sizeof(ip), p);
}

/**
 * shca_flow_parse - parse the headers of an Ethernet frame
 * @d: the first bytes of the frame (at the destination MAC)
 * @len: how many bytes @d holds (the frame's length, or less)
 * @p: filled in
 *
 * Context: any.
 * Return: 0, or -EINVAL for a frame shorter than an Ethernet header
 * (or a tag); @p->malformed tells of a cut-short IP or L4 header.
 */
static inline int shca_flow_parse(const u8 *d, u32 len,
				  struct shca_flow_pkt *p)
{
	u32 off = ETH_HLEN;
	__be16 type;

	memset(p, 0, sizeof(*p));
	if (len < ETH_HLEN)
		return -EINVAL;
	memcpy(p->key.dmac, d, ETH_ALEN);
	memcpy(p->key.smac, d + ETH_ALEN, ETH_ALEN);
	memcpy(&type, d + 2 * ETH_ALEN, 2);
	if (shca_flow_is_tag(type)) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return -EINVAL;
		p->vlan = true;
		memcpy(&p->key.vlan_tag, d + ETH_HLEN, 2);
		memcpy(&type, d + ETH_HLEN + 2, 2);
		off += VLAN_HLEN;
	}
	p->key.ether_type = type;
	if (type == htons(ETH_P_IP))
		shca_flow_parse_v4(d, len, off, p);
	else if (type == htons(ETH_P_IPV6))
		shca_flow_parse_v6(d, len, off, p);
	return 0;
}

/* Spec types shca knows; the inner (tunnel) bit is not among them. */
enum {
	SHCA_FLOW_HAS_ETH = 1 << 0,
	SHCA_FLOW_HAS_IPV4 = 1 << 1,
	SHCA_FLOW_HAS_IPV6 = 1 << 2,
	SHCA_FLOW_HAS_L4 = 1 << 3,
};

static inline int shca_flow_eth(const struct ib_flow_spec_eth *s,
				struct shca_flow_match *m)
{
	memcpy(m->mask.dmac, s->mask.dst_mac, ETH_ALEN);
	memcpy(m->mask.smac, s->mask.src_mac, ETH_ALEN);
	m->mask.ether_type = s->mask.ether_type;
	m->mask.vlan_tag = s->mask.vlan_tag;
	memcpy(m->val.dmac, s->val.dst_mac, ETH_ALEN);
	memcpy(m->val.smac, s->val.src_mac, ETH_ALEN);
	m->val.ether_type = s->val.ether_type;
	m->val.vlan_tag = s->val.vlan_tag;
	m->vlan = !!s->mask.vlan_tag;
	return 0;
}

static inline int shca_flow_ipv4(const struct ib_flow_spec_ipv4 *s,
				 struct shca_flow_match *m)
{
	if (s->mask.flags & ~7)
		return -EOPNOTSUPP;	/* only the 3 flag bits exist */
	m->mask.v4_src = s->mask.src_ip;
	m->mask.v4_dst = s->mask.dst_ip;
	m->mask.v4_proto = s->mask.proto;
	m->mask.v4_tos = s->mask.tos;
	m->mask.v4_ttl = s->mask.ttl;
	m->mask.v4_flags = s->mask.flags;
	m->val.v4_src = s->val.src_ip;
	m->val.v4_dst = s->val.dst_ip;
	m->val.v4_proto = s->val.proto;
	m->val.v4_tos = s->val.tos;
	m->val.v4_ttl = s->val.ttl;
	m->val.v4_flags = s->val.flags;
	m->l3 = 4;
	return 0;
}

static inline int shca_flow_ipv6(const struct ib_flow_spec_ipv6 *s,
				 struct shca_flow_match *m)
{
	if (s->mask.flow_label & ~htonl(0xfffff))
		return -EOPNOTSUPP;	/* a flow label has 20 bits */
	memcpy(m->mask.v6_src, s->mask.src_ip, 16);
	memcpy(m->mask.v6_dst, s->mask.dst_ip, 16);
	m->mask.v6_flow_label = s->mask.flow_label;
	m->mask.v6_next_hdr = s->mask.next_hdr;
	m->mask.v6_tclass = s->mask.traffic_class;
	m->mask.v6_hop_limit = s->mask.hop_limit;
	memcpy(m->val.v6_src, s->val.src_ip, 16);
	memcpy(m->val.v6_dst, s->val.dst_ip, 16);
	m->val.v6_flow_label = s->val.flow_label;
	m->val.v6_next_hdr = s->val.next_hdr;
	m->val.v6_tclass = s->val.traffic_class;
	m->val.v6_hop_limit = s->val.hop_limit;
	m->l3 = 6;
	return 0;
}

static inline int shca_flow_l4(const struct ib_flow_spec_tcp_udp *s, u8 proto,
			       struct shca_flow_match *m)
{
	m->mask.l4_dport = s->mask.dst_port;
	m->mask.l4_sport = s->mask.src_port;
	m->val.l4_dport = s->val.dst_port;
	m->val.l4_sport = s->val.src_port;
	m->l4 = proto;
	return 0;
}

/* The size ib_core gives a spec of @type, 0 for a type shca lacks. */
static inline u16 shca_flow_spec_size(u32 type)
{
	switch (type) {
	case IB_FLOW_SPEC_ETH:
		return sizeof(struct ib_flow_spec_eth);
	case IB_FLOW_SPEC_IPV4:
		return sizeof(struct ib_flow_spec_ipv4);
	case IB_FLOW_SPEC_IPV6:
		return sizeof(struct ib_flow_spec_ipv6);
	case IB_FLOW_SPEC_TCP:
	case IB_FLOW_SPEC_UDP:
		return sizeof(struct ib_flow_spec_tcp_udp);
	default:
		return 0;
	}
}

static inline u32 shca_flow_spec_bit(u32 type)
{
	switch (type) {
	case IB_FLOW_SPEC_ETH:
		return SHCA_FLOW_HAS_ETH;
	case IB_FLOW_SPEC_IPV4:
		return SHCA_FLOW_HAS_IPV4;
	case IB_FLOW_SPEC_IPV6:
		return SHCA_FLOW_HAS_IPV6;
	default:
		return SHCA_FLOW_HAS_L4;
	}
}

/* One spec of a known type and size into @m. */
static inline int shca_flow_spec(const union ib_flow_spec *s,
				 struct shca_flow_match *m)
{
	switch (s->type) {
	case IB_FLOW_SPEC_ETH:
		return shca_flow_eth(&s->eth, m);
	case IB_FLOW_SPEC_IPV4:
		return shca_flow_ipv4(&s->ipv4, m);
	case IB_FLOW_SPEC_IPV6:
		return shca_flow_ipv6(&s->ipv6, m);
	case IB_FLOW_SPEC_TCP:
		return shca_flow_l4(&s->tcp_udp, IPPROTO_TCP, m);
	default:
		return shca_flow_l4(&s->tcp_udp, IPPROTO_UDP, m);
	}
}

/* Apply the mask to the value, byte by byte. */
static inline void shca_flow_mask_val(struct shca_flow_match *m)
{
	u8 *v = (u8 *)&m->val;
	const u8 *k = (const u8 *)&m->mask;
	size_t i;

	for (i = 0; i < sizeof(m->val); i++)
		v[i] &= k[i];
}

/**
 * shca_flow_compile - turn the specs of a flow attribute into a match
 * @specs: the first spec (ib_flow_attr.flows)
 * @bytes: how many bytes the specs take (ib_flow_attr.size less the
 *	attribute's own header)
 * @num: ib_flow_attr.num_of_specs
 * @m: filled in
 *
 * At most one spec of each layer; an IPv4 and an IPv6 spec together, or
 * a TCP and a UDP spec together, can never match and are refused.
 * Context: any.
 * Return: 0; -EINVAL for specs that run past @bytes, a size that is not
 * the type's, a repeated layer or bytes left over; -EOPNOTSUPP for a
 * type shca cannot match (inner headers among them) or a mask on bits
 * it cannot match.
 */
static inline int shca_flow_compile(const void *specs, u32 bytes, u32 num,
				    struct shca_flow_match *m)
{
	const u8 *p = specs;
	u32 seen = 0, i;
	int err;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < num; i++) {
		const union ib_flow_spec *s = (const void *)p;
		u16 size;
		u32 bit;

		if (bytes < sizeof(s->type) + sizeof(s->size) ||
		    bytes < s->size || !s->size)
			return -EINVAL;
		size = shca_flow_spec_size(s->type);
		if (!size)
			return -EOPNOTSUPP;
		if (s->size != size)
			return -EINVAL;
		bit = shca_flow_spec_bit(s->type);
		if ((seen & bit) ||
		    (bit & (SHCA_FLOW_HAS_IPV4 | SHCA_FLOW_HAS_IPV6) &&
		     seen & (SHCA_FLOW_HAS_IPV4 | SHCA_FLOW_HAS_IPV6)))
			return -EINVAL;
		seen |= bit;
		err = shca_flow_spec(s, m);
		if (err)
			return err;
		p += size;
		bytes -= size;
	}
	if (bytes)
		return -EINVAL;
	shca_flow_mask_val(m);
	return 0;
}

/**
 * shca_flow_matches - does a parsed frame match a compiled rule?
 * @m: the rule
 * @p: the frame
 *
 * Context: any.
 */
static inline bool shca_flow_matches(const struct shca_flow_match *m,
				     const struct shca_flow_pkt *p)
{
	const u8 *v = (const u8 *)&m->val;
	const u8 *k = (const u8 *)&m->mask;
	const u8 *f = (const u8 *)&p->key;
	size_t i;

	if ((m->l3 && m->l3 != p->l3) || (m->l4 && m->l4 != p->l4) ||
	    (m->vlan && !p->vlan))
		return false;
	for (i = 0; i < sizeof(p->key); i++)
		if ((f[i] & k[i]) != v[i])
			return false;
	return true;
}

/**
 * shca_flow_better - does rule (@prio, @seq) win over (@bprio, @bseq)?
 *
 * The lower priority value wins; between equal ones, the older rule
 * (lower creation sequence number).
 * Context: any.
 */
static inline bool shca_flow_better(u16 prio, u64 seq, u16 bprio, u64 bseq)
{
	return prio < bprio || (prio == bprio && seq < bseq);
}

#endif /* SHCA_FLOW_LOGIC_H */
