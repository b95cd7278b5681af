// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca KUnit: MTU and GID helpers (drivers/infiniband/sw/shca/roce.h).
 */
#include <kunit/test.h>

#include "roce.h"

static void shca_mtu_bytes_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_ib_mtu_to_bytes(IB_MTU_256), 256U);
	KUNIT_EXPECT_EQ(test, shca_ib_mtu_to_bytes(IB_MTU_1024), 1024U);
	KUNIT_EXPECT_EQ(test, shca_ib_mtu_to_bytes(IB_MTU_4096), 4096U);
	KUNIT_EXPECT_EQ(test, shca_ib_mtu_to_bytes(0), 0U);
	KUNIT_EXPECT_EQ(test, shca_ib_mtu_to_bytes(IB_MTU_4096 + 1), 0U);
	KUNIT_EXPECT_EQ(test, shca_bytes_to_ib_mtu(4096), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, shca_bytes_to_ib_mtu(4095), IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, shca_bytes_to_ib_mtu(100000), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, shca_bytes_to_ib_mtu(256), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, shca_bytes_to_ib_mtu(255), 0);
}

static void shca_netdev_mtu_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SHCA_ROCE_OVERHEAD, 84);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(1500), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(9000), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(4096 + 84), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(4096 + 83), IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(256 + 84), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(256 + 83), 0);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(68), 0);
	KUNIT_EXPECT_EQ(test, shca_netdev_mtu_to_ib_mtu(0), 0);
}

static void shca_gid_v4_test(struct kunit *test)
{
	__be32 addr = htonl(0xc0a80102);	/* 192.168.1.2 */
	union ib_gid gid;

	memset(&gid, 0xaa, sizeof(gid));
	shca_ipv4_to_gid(addr, &gid);
	KUNIT_EXPECT_TRUE(test, shca_gid_is_v4mapped(&gid));
	KUNIT_EXPECT_EQ(test, gid.raw[10], 0xff);
	KUNIT_EXPECT_EQ(test, gid.raw[11], 0xff);
	KUNIT_EXPECT_EQ(test, gid.raw[12], 192);
	KUNIT_EXPECT_EQ(test, gid.raw[15], 2);
	KUNIT_EXPECT_EQ(test, shca_gid_to_ipv4(&gid), addr);

	gid.raw[0] = 0xfe;	/* fe80::..., not mapped */
	KUNIT_EXPECT_FALSE(test, shca_gid_is_v4mapped(&gid));
}

static void shca_guid_test(struct kunit *test)
{
	static const u8 mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	__be64 guid = shca_mac_to_guid(mac);

	KUNIT_EXPECT_EQ(test, be64_to_cpu(guid), 0x505400fffe123456ULL);
}

static struct kunit_case shca_roce_cases[] = {
	KUNIT_CASE(shca_mtu_bytes_test),
	KUNIT_CASE(shca_netdev_mtu_test),
	KUNIT_CASE(shca_gid_v4_test),
	KUNIT_CASE(shca_guid_test),
	{}
};

static struct kunit_suite shca_roce_suite = {
	.name = "shca_roce",
	.test_cases = shca_roce_cases,
};

kunit_test_suites(&shca_roce_suite);
