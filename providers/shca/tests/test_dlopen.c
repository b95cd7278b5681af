// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Load the built provider the way libibverbs does (dlopen after
 * libibverbs.so.1 is loaded) and check its load-time version gate:
 *
 *   test_dlopen PROVIDER.so +LIBIBVERBS... [-LIBIBVERBS...]
 *
 * Each +LIBIBVERBS is a libibverbs the provider must accept: the provider
 * loads, every IBVERBS_PRIVATE_34 reference resolves (RTLD_NOW) and the
 * gate prints no refusal.  Each -LIBIBVERBS (e.g. another rdma-core
 * release's) must be refused, and the refusal must name the file the
 * provider was built for.  With the first +LIBIBVERBS two more cases:
 * the same file named libibverbs.so.1.13.43.0 is refused, and the same
 * file copied to another directory under its own name is accepted again,
 * so the refusal is about the version and nothing else.
 *
 * A library is found through LD_LIBRARY_PATH (its own directory must hold
 * the libibverbs.so.1 link; copies get one), in a child process
 * (re-executing this binary) that gets its own dynamic linker state and
 * whose stderr is captured.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define REFUSAL "provider disabled"

static int failures;

static int child(const char *lib)
{
	if (!dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "child: %s\n", dlerror());
		return 2;
	}
	if (!dlopen(lib, RTLD_NOW | RTLD_LOCAL)) {
		fprintf(stderr, "child: %s\n", dlerror());
		return 3;
	}
	return 0;
}

/* Run "self lib --child" with LD_LIBRARY_PATH=@ldpath; capture stderr. */
static int run_child(const char *self, const char *lib, const char *ldpath,
		     char *err, size_t errlen)
{
	int pfd[2], status;
	ssize_t n, used = 0;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		close(pfd[0]);
		if (ldpath)
			setenv("LD_LIBRARY_PATH", ldpath, 1);
		else
			unsetenv("LD_LIBRARY_PATH");
		execl(self, self, lib, "--child", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], err + used, errlen - 1 - used)) > 0)
		used += n;
	err[used] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A directory holding a copy of libibverbs @src named @file. */
static int make_fake_verbs(char *dir, const char *src, const char *file)
{
	char cmd[PATH_MAX * 4];

	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "cp -L '%s' '%s/%s' && ln -s '%s' '%s/libibverbs.so.1'", src,
		 dir, file, file, dir);
	return system(cmd);
}

static void remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static void expect(const char *name, int rc, const char *err, bool refused)
{
	bool saw = strstr(err, REFUSAL) != NULL;
	bool named = strstr(err, "built for " SHCA_LIBIBVERBS_FILE " (rdma-core "
			    SHCA_RDMA_CORE_VERSION ")") != NULL;

	if (rc != 0 || saw != refused || named != refused) {
		fprintf(stderr, "FAIL %s: rc=%d, refusal %s; stderr:\n%s\n", name,
			rc, saw ? "printed" : "not printed", err);
		failures++;
	} else {
		printf("ok   %s\n", name);
	}
}

/* @file NULL: @src in place, else a copy of @src named @file. */
static void run_case(const char *self, const char *lib, const char *name,
		     const char *src, const char *file, bool refused)
{
	char dir[] = "/tmp/shca-verbs-XXXXXX";
	char here[PATH_MAX];
	char err[4096];
	int rc;

	if (!file) {
		snprintf(here, sizeof(here), "%s", src);
		*strrchr(here, '/') = 0;
	} else if (make_fake_verbs(dir, src, file)) {
		fprintf(stderr, "FAIL %s: cannot set up %s\n", name, dir);
		failures++;
		return;
	}
	rc = run_child(self, lib, file ? dir : here, err, sizeof(err));
	expect(name, rc, err, refused);
	if (file)
		remove_dir(dir);
}

/* Run the cases for one +LIB or -LIB argument. */
static int run_arg(const char *self, const char *lib, const char *arg,
		   bool first)
{
	char real[PATH_MAX], name[PATH_MAX + 64];
	bool refused = arg[0] == '-';
	const char *base;

	if ((arg[0] != '+' && arg[0] != '-') || !realpath(arg + 1, real))
		return -1;
	base = strrchr(real, '/') + 1;
	snprintf(name, sizeof(name), "%s %s", real,
		 refused ? "refused" : "accepted");
	run_case(self, lib, name, real, NULL, refused);
	if (refused || !first)
		return 0;
	snprintf(name, sizeof(name), "%s renamed libibverbs.so.1.13.43.0 refused",
		 base);
	run_case(self, lib, name, real, "libibverbs.so.1.13.43.0", true);
	snprintf(name, sizeof(name), "%s relocated accepted", base);
	run_case(self, lib, name, real, base, false);
	return 0;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], lib[PATH_MAX];
	bool first = true;
	int i;

	if (argc == 3 && !strcmp(argv[2], "--child"))
		return child(argv[1]);
	if (argc < 3 || argv[2][0] != '+' || !realpath(argv[1], lib) ||
	    !realpath("/proc/self/exe", self))
		goto usage;
	for (i = 2; i < argc; i++) {
		if (run_arg(self, lib, argv[i], first))
			goto usage;
		first = false;
	}
	if (failures) {
		fprintf(stderr, "test_dlopen: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_dlopen: all passed\n");
	return 0;

usage:
	fprintf(stderr,
		"usage: %s path/to/libshca-rdmav34.so +LIBIBVERBS... [-LIBIBVERBS...]\n",
		argv[0]);
	return 2;
}
