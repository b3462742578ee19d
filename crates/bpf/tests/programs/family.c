/* Forks 2 worker processes and starts 2 threads. Each of the five (main included) calls
 * getppid N times and opens a path naming itself under a missing directory. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long n;

static void work(const char *who)
{
	char path[128];

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	snprintf(path, sizeof(path), "/nonexistent-syslint-test/%s", who);
	openat(AT_FDCWD, path, O_RDONLY);
}

static void *thread_main(void *arg)
{
	work(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	pid_t w[2];
	int status;

	n = argc > 1 ? atol(argv[1]) : 1000;
	for (int i = 0; i < 2; i++) {
		w[i] = fork();
		if (w[i] < 0)
			return 1;
		if (w[i] == 0) {
			work(i == 0 ? "worker0" : "worker1");
			_exit(0);
		}
	}
	if (pthread_create(&t[0], NULL, thread_main, "thread0") || pthread_create(&t[1], NULL, thread_main, "thread1"))
		return 2;
	work("main");
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	for (int i = 0; i < 2; i++)
		if (waitpid(w[i], &status, 0) != w[i] || !WIFEXITED(status) || WEXITSTATUS(status))
			return 3;
	return 0;
}
