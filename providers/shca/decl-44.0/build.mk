# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Builds providers/shca against shca's own declarations of rdma-core
# 44.0's private interface (this directory) and Debian's libibverbs-dev /
# libibverbs1 44.0-2, when no rdma-core 44.0 source tree can be had.
# Driven by scripts/rdma-core.sh (build 44.0, compare 44.0):
#
#   make -f build.mk O=DIR SYSROOT=DIR DEB_CFLAGS=... DEB_LDFLAGS=... \
#        [all | probe]
#
# O        build directory (objects, include/, the results)
# SYSROOT  Debian's libibverbs-dev and libibverbs1 44.0-2 unpacked
#          (dpkg-deb -x): usr/include/infiniband/verbs.h ...,
#          usr/lib/<multiarch>/libibverbs.so.1.14.44.0
#
# Results in O, named as rdma-core's CMake build names them:
# lib/libshca-rdmav34.so, lib/libibverbs.so.1*, bin/shca_test_unit,
# bin/shca_test_dlopen, providers/shca/shca.driver; and probe, the layout
# probe (probe.c) built against these declarations.
#
# The compiler and linker flags are those the in-tree build uses:
# dpkg-buildflags (hardening=+all, from scripts/rdma-core.sh), then what
# rdma-core 44.0's buildlib adds for every C file (its warnings, Release:
# -O3 -DNDEBUG, -std=gnu11) and for a provider (-fPIC; -Wl,--as-needed
# -Wl,--no-undefined and a version script that exports nothing, so the
# provider's only entry is its constructor), then our own -Werror set.

DECL    := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
PROV    := $(abspath $(DECL)/..)
REPO    := $(abspath $(PROV)/../..)
MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH)
SYSLIB  := $(SYSROOT)/usr/lib/$(MULTIARCH)
# The libibverbs this provider is bound to (SHCA_LIBIBVERBS_FILE).
IBVERBS := libibverbs.so.1.14.44.0

ifeq ($(origin CC),default)
CC := gcc
endif

RDMA_CORE_WARN := -Wall -Wextra -Wno-sign-compare -Wno-unused-parameter \
	-Wmissing-prototypes -Wmissing-declarations -Wwrite-strings -Wformat=2 \
	-Wcast-function-type -Wformat-nonliteral -Wdate-time -Wnested-externs \
	-Wshadow -Wstrict-prototypes -Wold-style-definition -Wredundant-decls
SHCA_WARN := -Wall -Wextra -Wunused-parameter -Wsign-compare -Werror
CFLAGS := $(DEB_CFLAGS) $(RDMA_CORE_WARN) -O3 -DNDEBUG
DEFS := -D_GNU_SOURCE -DSHCA_RDMA_CORE_VERSION=\"44.0\" \
	-DSHCA_RDMA_CORE_VERSION_CODE=4400 \
	-DSHCA_LIBIBVERBS_FILE=\"$(IBVERBS)\"
# Our declarations, then what is generated from include/uapi (O/include),
# then Debian's public headers; all as system headers, as in the tree.
INCS := -isystem $(DECL) -isystem $(O)/include -isystem $(SYSROOT)/usr/include
LDFLAGS := $(DEB_LDFLAGS) -Wl,--as-needed -Wl,--no-undefined

SRCS  := cq.c flow.c qp.c qp_ex.c ring.c shca.c srq.c tm.c wq.c
TSRCS := tests/test_unit.c tests/test_tm.c tests/test_wq.c
HDRS  := $(O)/include/rdma/shca-abi.h $(O)/include/kernel-abi/shca-abi.h

.PHONY: all probe
all: $(O)/lib/libshca-rdmav34.so $(O)/bin/shca_test_unit \
	$(O)/bin/shca_test_dlopen $(O)/providers/shca/shca.driver
probe: $(O)/probe

$(O)/include/rdma/shca-abi.h: $(REPO)/include/uapi/rdma/shca-abi.h
	mkdir -p $(@D)
	cp $< $@
$(O)/include/kernel-abi/shca-abi.h: $(REPO)/include/uapi/rdma/shca-abi.h $(DECL)/kernel-abi.awk
	mkdir -p $(@D)
	awk -f $(DECL)/kernel-abi.awk $< >$@.tmp
	mv $@.tmp $@

$(O)/lib/$(IBVERBS): $(SYSLIB)/$(IBVERBS)
	mkdir -p $(@D)
	cp $< $@
	ln -sfn $(IBVERBS) $(O)/lib/libibverbs.so.1

# Provider objects (PIC) in obj/, the test build's in tobj/.
$(O)/obj/%.o: $(PROV)/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(DEFS) $(INCS) $(CFLAGS) -fPIC $(SHCA_WARN) -std=gnu11 -MD -MP -c -o $@ $<
$(O)/tobj/%.o: $(PROV)/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(DEFS) $(INCS) -I$(PROV) $(CFLAGS) $(SHCA_WARN) -std=gnu11 -MD -MP -c -o $@ $<

$(O)/lib/libshca-rdmav34.so: $(addprefix $(O)/obj/,$(SRCS:.c=.o)) $(O)/lib/$(IBVERBS) $(DECL)/provider.map
	$(CC) $(CFLAGS) -fPIC $(LDFLAGS) -Wl,--version-script,$(DECL)/provider.map \
		-shared -o $@ $(filter %.o,$^) $(O)/lib/$(IBVERBS)

$(O)/bin/shca_test_unit: $(addprefix $(O)/tobj/,$(TSRCS:.c=.o) $(SRCS:.c=.o)) $(O)/lib/$(IBVERBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) \
		-Wl,-rpath,'$$ORIGIN/../lib' $(O)/lib/$(IBVERBS)

$(O)/bin/shca_test_dlopen: $(O)/tobj/tests/test_dlopen.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -ldl

$(O)/providers/shca/shca.driver: $(PROV)/shca.driver
	mkdir -p $(@D)
	cp $< $@

$(O)/probe: $(DECL)/probe.c $(PROV)/shca.h $(HDRS)
	$(CC) $(DEFS) $(INCS) -I$(PROV) $(CFLAGS) $(SHCA_WARN) -std=gnu11 -MD -MP -o $@ $<

# -MD, not -MMD: our declarations are system headers (-isystem) too.
-include $(wildcard $(O)/*.d $(O)/obj/*.d $(O)/tobj/*.d $(O)/tobj/tests/*.d)

# compare: the same probe against rdma-core's tree's headers (TREE_INCLUDE,
# its build directory's include/), with the same flags.
$(O)/probe-tree: $(DECL)/probe.c $(PROV)/shca.h
	$(CC) $(DEFS) -isystem $(TREE_INCLUDE) -I$(PROV) $(CFLAGS) $(SHCA_WARN) -std=gnu11 -MD -MP -o $@ $<
