/* Calls getppid N times and writes how long the loop took (ns, CLOCK_MONOTONIC) to FILE. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	struct timespec a, b;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	f = argc > 2 ? fopen(argv[2], "w") : stdout;
	if (!f)
		return 1;
	fprintf(f, "%lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	return fclose(f) != 0;
}
