// SPDX-License-Identifier: GPL-2.0
/*
 * scripts/vm-run --selftest: a module whose init triggers WARN_ON(1), to
 * prove that vm-run fails a run whose kernel log has a WARNING even when the
 * command itself succeeds.  Never shipped; built in a temp dir.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init vmrun_selftest_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit vmrun_selftest_warn_exit(void)
{
}

module_init(vmrun_selftest_warn_init);
module_exit(vmrun_selftest_warn_exit);
MODULE_DESCRIPTION("vm-run self-test: WARN_ON at load");
MODULE_LICENSE("GPL");
