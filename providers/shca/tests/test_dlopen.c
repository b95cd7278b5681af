// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Load the built provider the way libibverbs does (dlopen after
 * libibverbs.so.1 is loaded) and check its load-time version gate:
 *
 *  1. with the system libibverbs 44.0: the provider loads, every
 *     IBVERBS_PRIVATE_34 reference resolves (RTLD_NOW) and the gate
 *     prints no refusal;
 *  2. with the same library file named libibverbs.so.1.13.43.0 (found via
 *     LD_LIBRARY_PATH): the gate refuses and says so on stderr;
 *  3. with it named libibverbs.so.1.14.44.0 in another directory: accepted
 *     again, so case 2 failed because of the version and nothing else.
 *
 * Each case runs in a child process (re-executing this binary) so that
 * each gets its own dynamic linker state and its stderr can be captured.
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

#define SYS_VERBS "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"
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

/* A directory holding a copy of the system libibverbs named @file. */
static int make_fake_verbs(char *dir, const char *file)
{
	char cmd[PATH_MAX * 3];

	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "cp -L %s %s/%s && ln -s %s %s/libibverbs.so.1", SYS_VERBS,
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

	if (rc != 0 || saw != refused) {
		fprintf(stderr, "FAIL %s: rc=%d, refusal %s; stderr:\n%s\n", name,
			rc, saw ? "printed" : "not printed", err);
		failures++;
	} else {
		printf("ok   %s\n", name);
	}
}

static void run_case(const char *self, const char *lib, const char *name,
		     const char *file, bool refused)
{
	char dir[] = "/tmp/shca-verbs-XXXXXX";
	char err[4096];
	int rc;

	if (file && make_fake_verbs(dir, file)) {
		fprintf(stderr, "FAIL %s: cannot set up %s\n", name, dir);
		failures++;
		return;
	}
	rc = run_child(self, lib, file ? dir : NULL, err, sizeof(err));
	expect(name, rc, err, refused);
	if (file)
		remove_dir(dir);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], lib[PATH_MAX];

	if (argc == 3 && !strcmp(argv[2], "--child"))
		return child(argv[1]);
	if (argc != 2 || !realpath(argv[1], lib) ||
	    !realpath("/proc/self/exe", self)) {
		fprintf(stderr, "usage: %s path/to/libshca-rdmav34.so\n", argv[0]);
		return 2;
	}

	run_case(self, lib, "system libibverbs 44.0 accepted", NULL, false);
	run_case(self, lib, "libibverbs.so.1.13.43.0 refused",
		 "libibverbs.so.1.13.43.0", true);
	run_case(self, lib, "relocated libibverbs.so.1.14.44.0 accepted",
		 "libibverbs.so.1.14.44.0", false);
	if (failures) {
		fprintf(stderr, "test_dlopen: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_dlopen: all passed\n");
	return 0;
}
