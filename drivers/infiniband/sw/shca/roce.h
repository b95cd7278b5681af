/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: pure RoCE v2 helpers (MTU, GID, GUID).  No device state; the
 * KUnit suite in kunit/ exercises these exact functions.
 */
#ifndef SHCA_ROCE_H
#define SHCA_ROCE_H

#include <linux/types.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

/*
 * Worst-case RoCE v2 overhead inside the netdev MTU for a packet that
 * carries payload: IPv6 header (40), UDP (8), BTH (12), the largest
 * extension header set in front of payload (RETH 16 + ImmDt 4) and the
 * ICRC (4).  IPv4 is 20 bytes shorter; we size for IPv6 so a QP's path
 * MTU does not depend on the GID type it ends up using.
 */
#define SHCA_ROCE_IP_HDR	40
#define SHCA_ROCE_UDP_HDR	8
#define SHCA_ROCE_BTH		12
#define SHCA_ROCE_MAX_EXT_HDR	20
#define SHCA_ROCE_ICRC		4
#define SHCA_ROCE_OVERHEAD	(SHCA_ROCE_IP_HDR + SHCA_ROCE_UDP_HDR + \
				 SHCA_ROCE_BTH + SHCA_ROCE_MAX_EXT_HDR + \
				 SHCA_ROCE_ICRC)

/* Bytes of an IB MTU enum value, 0 for an invalid value. */
static inline u32 shca_ib_mtu_to_bytes(enum ib_mtu mtu)
{
	if (mtu < IB_MTU_256 || mtu > IB_MTU_4096)
		return 0;
	return 128U << mtu;
}

/* Largest IB MTU not above @bytes; 0 (no valid MTU) below 256 bytes. */
static inline enum ib_mtu shca_bytes_to_ib_mtu(u32 bytes)
{
	enum ib_mtu mtu;

	for (mtu = IB_MTU_4096; mtu >= IB_MTU_256; mtu--)
		if (shca_ib_mtu_to_bytes(mtu) <= bytes)
			return mtu;
	return 0;
}

/* Active IB MTU for a netdev MTU: the largest IB MTU whose packets fit. */
static inline enum ib_mtu shca_netdev_mtu_to_ib_mtu(u32 netdev_mtu)
{
	if (netdev_mtu <= SHCA_ROCE_OVERHEAD)
		return 0;
	return shca_bytes_to_ib_mtu(netdev_mtu - SHCA_ROCE_OVERHEAD);
}

static const u8 shca_v4mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

static inline bool shca_gid_is_v4mapped(const union ib_gid *gid)
{
	return !memcmp(gid->raw, shca_v4mapped_prefix,
		       sizeof(shca_v4mapped_prefix));
}

/* IPv4 address of an IPv4-mapped GID (caller checked the prefix). */
static inline __be32 shca_gid_to_ipv4(const union ib_gid *gid)
{
	__be32 addr;

	memcpy(&addr, &gid->raw[12], sizeof(addr));
	return addr;
}

static inline void shca_ipv4_to_gid(__be32 addr, union ib_gid *gid)
{
	memcpy(gid->raw, shca_v4mapped_prefix, sizeof(shca_v4mapped_prefix));
	memcpy(&gid->raw[12], &addr, sizeof(addr));
}

/* Modified EUI-64 from a 48-bit MAC: flip U/L, insert ff:fe. */
static inline __be64 shca_mac_to_guid(const u8 *mac)
{
	u8 eui[8] = {
		mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]
	};
	__be64 guid;

	memcpy(&guid, eui, sizeof(guid));
	return guid;
}

#endif /* SHCA_ROCE_H */
