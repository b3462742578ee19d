/*
 * The spawn-per-task call-site proof (issue 31): one short-lived process per task, started by
 * a named function with fork and execve, so the finding's calls (the children's execve) are
 * made from this program's code: the child runs on a copy of the parent's stack until execve
 * replaces it. Built with gcc -g -O2 (no frame pointers), as the call-site test does.
 *
 * usage: spawn [N] (default 100): runs /bin/true N times, one after another, then exits 0.
 *
 * noinline/noclone keep run_task as itself; the child's execve is not in tail position (its
 * failure is reported), so run_task has a frame of its own under it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

__attribute__((noinline, noclone)) int run_task(const char *path)
{
	char *argv[] = { (char *)path, NULL };
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execve(path, argv, environ); /* the call the finding is about */
		perror("execve");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;

	if (n < 1 || n > 100000) {
		fprintf(stderr, "usage: spawn [N]: 1 <= N <= 100000\n");
		return 2;
	}
	for (long i = 0; i < n; i++)
		if (run_task("/bin/true") != 0)
			return 1;
	return 0;
}
