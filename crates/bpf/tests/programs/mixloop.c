/* Cheap calls that never coalesce, to see the kernel program's cost with little else around:
 * N times getppid(i) (no capture), epoll_ctl on a bad fd with an epoll_event holding i (12
 * captured bytes), write 40 bytes to a socketpair and read them back (socket payloads),
 * openat of a missing path (a path). sockbench's alternative loop (mixloop N OUT). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CALLS_PER_ITER 5

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	static char buf[64];
	struct epoll_event ev = { .events = EPOLLIN };
	struct timespec a, b;
	int sv[2];
	FILE *f;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		syscall(SYS_getppid, i);
		ev.data.u64 = i;
		syscall(SYS_epoll_ctl, -1, EPOLL_CTL_ADD, -1, &ev);
		buf[0] = (char)i;
		if (write(sv[0], buf, 40) != 40 || read(sv[1], buf, sizeof(buf)) != 40)
			return 2;
		syscall(SYS_openat, AT_FDCWD, "/nonexistent/syslint", O_RDONLY, i);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	f = argc > 2 ? fopen(argv[2], "w") : stdout;
	if (!f)
		return 3;
	fprintf(f, "%lld %ld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec),
		n * CALLS_PER_ITER);
	return fclose(f) != 0;
}
