// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: which netfilter hooks the same-host path passes by
 * (direct_logic.h): the security modules' labelling hooks, by the name
 * of a function of the kernel's own, at its entry; nothing else.
 */
#include <kunit/test.h>

#include "direct_logic.h"

/* The labelling hooks, as kallsyms names them in the kernel's text. */
static void shca_direct_test_lsm(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, shca_lsm_hook_sym("apparmor_ip_postroute+0x0/0x1a0"));
	KUNIT_EXPECT_TRUE(test, shca_lsm_hook_sym("selinux_ip_output+0x0/0xd0"));
	KUNIT_EXPECT_TRUE(test, shca_lsm_hook_sym("selinux_ip_postroute+0x0/0x4f0"));
	KUNIT_EXPECT_TRUE(test, shca_lsm_hook_sym("smack_ip_output+0x0/0x60"));
}

/* A module's function of the same name is not the kernel's own. */
static void shca_direct_test_module(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_output+0x0/0xd0 [evil]"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("nft_do_chain_ipv4+0x0/0x30 [nf_tables]"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("apparmor_ip_postroute+0x0/0x1a0 "));
}

/* Only the entry of the function, with its size. */
static void shca_direct_test_entry(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_output+0x10/0xd0"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_output+0x0/0x"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_output+0x0/"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_output"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("0xffffffffc0123456"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym(""));
}

/* Other functions, and names that only begin like a hook's. */
static void shca_direct_test_others(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("nft_do_chain_ipv4+0x0/0x30"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("nf_hook_run_bpf+0x0/0x90"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("ipv4_conntrack_local+0x0/0x90"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_output2+0x0/0xd0"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_forward+0x0/0xd0"));
	KUNIT_EXPECT_FALSE(test, shca_lsm_hook_sym("selinux_ip_outpu+0x0/0xd0"));
}

static struct kunit_case shca_direct_test_cases[] = {
	KUNIT_CASE(shca_direct_test_lsm),
	KUNIT_CASE(shca_direct_test_module),
	KUNIT_CASE(shca_direct_test_entry),
	KUNIT_CASE(shca_direct_test_others),
	{}
};

static struct kunit_suite shca_direct_test_suite = {
	.name = "shca_direct",
	.test_cases = shca_direct_test_cases,
};

kunit_test_suites(&shca_direct_test_suite);
