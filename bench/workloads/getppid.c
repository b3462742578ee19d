/* Workload for bench/ebpf-overhead.sh: N getppid() calls (default 2,000,000), the cheapest
 * syscall there is, so tracing cost per event dominates. Prints its own elapsed time (from the
 * first to the last call, so tracer start-up and report are not counted) on stderr as
 * "workload-elapsed: SECONDS". Usage: getppid [N] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	struct timespec a, b;
	long sum = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sum += syscall(SYS_getppid);   /* syscall(): never cached by libc */
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr, "workload-elapsed: %.6f (%ld getppid, sum %ld)\n",
		(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9, n, sum);
	return 0;
}
