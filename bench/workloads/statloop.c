/* Workload for bench/ebpf-overhead.sh: N stat() calls (default 500,000) alternating between a
 * path that exists and one that does not (ENOENT), like a search-path lookup storm. Prints its
 * own elapsed time on stderr as "workload-elapsed: SECONDS".
 * Usage: statloop [N] [EXISTING] [MISSING]  (defaults /etc/hostname, /nonexistent/x) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;
	const char *paths[2] = {
		argc > 2 ? argv[2] : "/etc/hostname",
		argc > 3 ? argv[3] : "/nonexistent/x",
	};
	struct timespec a, b;
	struct stat st;
	long ok = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		ok += stat(paths[i & 1], &st) == 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr, "workload-elapsed: %.6f (%ld stat, %ld found)\n",
		(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9, n, ok);
	return 0;
}
