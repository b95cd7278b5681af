/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: which netfilter hooks the same-host path may pass by (direct.c),
 * as a pure function.  KUnit: kunit/shca_kunit_direct.c.
 *
 * A message takes the same-host path only where no netfilter hook could
 * see or drop its packets on the wire, but for the security modules'
 * labelling hooks, which every namespace holds while such a module is
 * on: they only mark a packet for the socket it ends at, which a direct
 * packet ends at all the same.  Such a hook is known by its function, a
 * function of the kernel itself (never of a module), at the entry of
 * that function, not by the priority it was registered at: anybody may
 * register an nftables chain, or a hook of a module, at that priority.
 * direct.c asks kallsyms for the name (sprint_symbol(): "name+0x0/0xsize"
 * for the kernel's own text, "name+0x0/0xsize [module]" for a module's).
 */
#ifndef SHCA_DIRECT_LOGIC_H
#define SHCA_DIRECT_LOGIC_H

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/string.h>

/*
 * The labelling hooks of SELinux, AppArmor and Smack on the ways a RoCE v2
 * packet takes (LOCAL_OUT, POST_ROUTING; none is on PRE_ROUTING or
 * LOCAL_IN), the same for IPv4 and IPv6; their names in Linux 6.1 and
 * 6.12.  A hook not named here makes a namespace's traffic take the wire.
 */
static const char * const shca_lsm_nf_hooks[] = {
	"apparmor_ip_postroute",
	"selinux_ip_output",
	"selinux_ip_postroute",
	"smack_ip_output",
};

/**
 * shca_lsm_hook_sym - does @sym name the entry of a labelling hook?
 * @sym: sprint_symbol()'s text for a hook function's address
 *
 * Return: true for "NAME+0x0/0xSIZE" with NAME one of shca_lsm_nf_hooks
 * and nothing after SIZE (no module's name).
 */
static inline bool shca_lsm_hook_sym(const char *sym)
{
	static const char entry[] = "+0x0/0x";
	const char *p = NULL;
	unsigned int i;
	size_t n;

	for (i = 0; i < ARRAY_SIZE(shca_lsm_nf_hooks) && !p; i++) {
		n = strlen(shca_lsm_nf_hooks[i]);
		if (!strncmp(sym, shca_lsm_nf_hooks[i], n))
			p = sym + n;
	}
	if (!p || strncmp(p, entry, sizeof(entry) - 1))
		return false;
	p += sizeof(entry) - 1;
	if (!isxdigit(*p))
		return false;
	while (isxdigit(*p))
		p++;
	return !*p;
}

#endif /* SHCA_DIRECT_LOGIC_H */
