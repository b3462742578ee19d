/* A loopback server and its client in one thread, shaped like nginx serving a small static
 * file: N times, the client connects and sends a 40-byte request; the server epoll_waits,
 * accept4s, setsockopts, epoll_ctl-adds, epoll_waits, recvfroms the request, opens, stats and
 * preads the file, closes it, writevs a 240-byte response, epoll_ctl-deletes and closes; the
 * client reads the response and closes (SO_LINGER 0: no TIME_WAIT piles up).
 *
 * sockloop N [OUT] [FILE]: writes "<ns> <syscalls>" for the loop (CLOCK_MONOTONIC) to OUT
 * (stdout without one). FILE (default /proc/self/exe) is the static file. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CALLS_PER_ITER 19

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	const char *path = argc > 3 ? argv[3] : "/proc/self/exe";
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(addr);
	struct linger lin = { 1, 0 };
	struct epoll_event ev, evs[8];
	static char req[40], hdr[40], body[200], resp[240], fbuf[200];
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { body, sizeof(body) } };
	struct timespec a, b;
	int one = 1, lfd, ep;
	FILE *f;

	memset(req, 'q', sizeof(req));
	memset(hdr, 'h', sizeof(hdr));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen))
		return 1;
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev))
		return 2;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		struct stat st;
		int c, s, fd;

		/* client */
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || setsockopt(c, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin)) ||
		    connect(c, (struct sockaddr *)&addr, sizeof(addr)) || write(c, req, sizeof(req)) != sizeof(req))
			return 3;
		/* server */
		if (epoll_wait(ep, evs, 8, 1000) != 1)
			return 4;
		s = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK);
		if (s < 0 || setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
			return 5;
		ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
		ev.data.fd = s;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) || epoll_wait(ep, evs, 8, 1000) != 1)
			return 6;
		if (recvfrom(s, fbuf, sizeof(fbuf), 0, NULL, NULL) != sizeof(req))
			return 7;
		fd = openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK);
		if (fd < 0 || syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) ||
		    pread(fd, body, sizeof(body), 0) < 0 || close(fd))
			return 8;
		if (writev(s, iov, 2) != sizeof(resp) || epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL) || close(s))
			return 9;
		/* client */
		if (read(c, resp, sizeof(resp)) != sizeof(resp) || close(c))
			return 10;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	f = argc > 2 ? fopen(argv[2], "w") : stdout;
	if (!f)
		return 11;
	fprintf(f, "%lld %ld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec),
		n * CALLS_PER_ITER);
	return fclose(f) != 0;
}
