# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# shca out-of-tree module.
#   make [module] [KDIR=/path/to/kernel/build] [BUILD=build/<name>]
#   make modules-all    build/6.1/shca.ko and build/6.12/shca.ko
#   make sparse         C=2 against both stock kernels
#   make checkpatch     checkpatch.pl --strict --no-tree on our sources
#   make provider       the provider for the host's rdma-core, built in
#                       rdma-core's tree (scripts/rdma-core.sh): into
#                       build/provider/<release>/, copied to providers/shca/build/
#   make provider-all   build/provider/44.0/ and build/provider/56.1/
#   make progs          build/progs/: the test programs the e2e suites run
#   make debs           build/debs/: shca-dkms and libshca1 (one per rdma-core) .debs
#   make check          everything (scripts/check.sh); ends "N passed, N failed"
#   make check-full     every suite on every kernel at soak sizes (not CI)
#   make demo           VM (6.1): shca0/shca1 across two namespaces, ibv_devinfo, rping
#   make bench          VMs (6.12): shca vs rdma_rxe bandwidth/latency tables,
#                       on one host and between two
#   make clean
#
# Each kernel gets its own build directory holding a symlink mirror of
# the sources, so several kernels can be built side by side.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
SCRIPTS := $(TOP)/scripts

kinfo = $(shell eval "$$($(SCRIPTS)/kernel-info.sh $(1))" && echo $$KDIR)

KDIR ?= $(call kinfo,6.1)
BUILD ?= build/$(notdir $(KDIR))
KMAKEFLAGS ?= W=1

SRC_DIRS := drivers kunit include
MOD_SRCS := $(shell find $(addprefix $(TOP)/,drivers kunit include) \
		-name '*.[ch]' 2>/dev/null)

SHELL := /bin/bash

.PHONY: all module modules-all sparse checkpatch clean provider provider-all check check-full demo bench

all: module

# Debian's linux-headers-*-amd64/Makefile includes the -common tree by
# an absolute /usr/src path; for headers unpacked elsewhere, point make
# at the sibling -common Makefile instead.
kmakefile = $(shell inc=$$(sed -n 's/^include //p' $(1)/Makefile 2>/dev/null); \
	if [ -n "$$inc" ] && [ ! -e "$$inc" ]; then \
		echo "-f $(1)/../$$(basename $$(dirname $$inc))/Makefile"; fi)

# $(1) = build dir, $(2) = KDIR, $(3) = extra make flags, $(4) = suffix.
# The "+" hands our jobserver to the kernel's make (without it, make -jN
# module compiled one file at a time).
define kbuild
	@mkdir -p $(1)
	@for d in $(SRC_DIRS); do rm -rf $(1)/$$d; cp -rs $(TOP)/$$d $(1)/$$d; done
	@ln -sf $(TOP)/Kbuild $(1)/Kbuild
	+$(MAKE) -C $(2) $(call kmakefile,$(2)) M=$(abspath $(1)) $(KMAKEFLAGS) $(3) modules $(4)
endef

module:
	$(call kbuild,$(BUILD),$(KDIR),)

modules-all:
	$(call kbuild,build/6.1,$(call kinfo,6.1),)
	$(call kbuild,build/6.12,$(call kinfo,6.12),)

sparse:
	$(call kbuild,build/sparse-6.1,$(call kinfo,6.1),C=2,2>&1 | tee build/sparse-6.1.log; exit $${PIPESTATUS[0]})
	$(call kbuild,build/sparse-6.12,$(call kinfo,6.12),C=2,2>&1 | tee build/sparse-6.12.log; exit $${PIPESTATUS[0]})
	@! grep -E '(warning|error):' build/sparse-6.1.log build/sparse-6.12.log
	@echo "sparse: clean"

CHECKPATCH_FILES := $(MOD_SRCS)

checkpatch:
	@src=$$($(SCRIPTS)/linux-source.sh) && \
	$$src/scripts/checkpatch.pl --no-tree --strict --show-types -q -f \
		$(CHECKPATCH_FILES); rc=$$?; \
	[ $$rc -eq 0 ] && echo "checkpatch: clean"; exit $$rc

# The rdma-core release installed here (44.0 on Debian 12).
RDMA_CORE_HOST = $(shell $(SCRIPTS)/rdma-core.sh host-version)

provider:
	$(SCRIPTS)/rdma-core.sh build $(RDMA_CORE_HOST)
	@mkdir -p $(TOP)/providers/shca/build
	cp $(TOP)/build/provider/$(RDMA_CORE_HOST)/libshca-rdmav34.so \
	   $(TOP)/build/provider/$(RDMA_CORE_HOST)/shca.driver $(TOP)/providers/shca/build/

provider-all:
	for v in $$($(SCRIPTS)/rdma-core.sh versions); do \
		$(SCRIPTS)/rdma-core.sh build $$v || exit; done

.PHONY: progs
progs:
	$(MAKE) -C $(TOP)/scripts/e2e/progs

# Debian packages (scripts/deb-build.sh): shca-dkms_<ver>_all.deb and
# libshca1_<ver>+rdmacore<R>_<arch>.deb for each supported rdma-core R.
.PHONY: debs
debs:
	$(SCRIPTS)/deb-build.sh

check:
	$(SCRIPTS)/check.sh

# Soak sizes (scripts/e2e/README): netem 1 GiB, 10^5 fuzz packets in
# batches of 100, 1000 hostile rounds, the direct suite's 6 MiB x5 and
# 16 QPs x300, rc's 6 MiB READs x10, the verbs fuzzer 30 minutes
# unprivileged and 5 as root; the seeds are printed by the suites.
check-full:
	SHCA_TIER=full SHCA_NETEM_MIB=$${SHCA_NETEM_MIB:-1024} \
	SHCA_DIRECT_BIG=$${SHCA_DIRECT_BIG:-6M} SHCA_DIRECT_BIG_N=$${SHCA_DIRECT_BIG_N:-5} \
	SHCA_DIRECT_Q16_N=$${SHCA_DIRECT_Q16_N:-300} SHCA_RC_READ_N=$${SHCA_RC_READ_N:-10} \
	SHCA_FUZZ_N=$${SHCA_FUZZ_N:-100000} SHCA_FUZZ_BATCH=$${SHCA_FUZZ_BATCH:-100} \
	SHCA_FUZZ_ROUNDS=$${SHCA_FUZZ_ROUNDS:-1000} \
	SHCA_FUZZ_SECS=$${SHCA_FUZZ_SECS:-1800} SHCA_FUZZ_ROOT_SECS=$${SHCA_FUZZ_ROOT_SECS:-300} \
	$(SCRIPTS)/check.sh

bench:
	$(SCRIPTS)/deps.sh bench
	$(call kbuild,build/6.12,$(call kinfo,6.12),)
	$(MAKE) provider
	$(SCRIPTS)/bench.sh

# The demo boots 6.1 only, so it builds and fetches only that kernel's.
demo:
	$(SCRIPTS)/deps.sh demo
	$(call kbuild,build/6.1,$(call kinfo,6.1),)
	$(MAKE) provider
	$(SCRIPTS)/vm-run --kernel 6.1 --timeout 900 -- $(SCRIPTS)/demo.sh

clean:
	rm -rf $(TOP)/build $(TOP)/providers/shca/build
