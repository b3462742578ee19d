/* One of each capture kind on loopback: pipe2's fds, ppoll's timeout (M identical calls, then one
 * that differs only in the timeout), epoll_ctl's event, setsockopt's value, bind/getsockname/
 * connect/accept addresses, writev's first buffer, and a UDP sendmsg/recvfrom with addresses. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long m = argc > 1 ? atol(argv[1]) : 100;
	struct sockaddr_in a = { .sin_family = AF_INET }, b;
	socklen_t len = sizeof(b);
	struct timespec zero = { 0, 0 }, tiny = { 0, 1000 };
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1122334455667788ULL };
	struct iovec iov[2] = { { "hello-", 6 }, { "world", 5 } };
	struct msghdr msg = { 0 };
	char buf[64];
	int p[2], one = 1, ep, l, c, s, u1, u2;

	if (pipe2(p, O_CLOEXEC))
		return 1;
	for (long i = 0; i < m; i++)
		ppoll(NULL, 0, &zero, NULL);
	ppoll(NULL, 0, &tiny, NULL);
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
		return 2;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		return 3;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) || getsockname(l, (struct sockaddr *)&b, &len))
		return 4;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&b, sizeof(b)))
		return 5;
	len = sizeof(a);
	s = accept(l, (struct sockaddr *)&a, &len);
	if (s < 0 || writev(c, iov, 2) != 11 || read(s, buf, sizeof(buf)) != 11)
		return 6;

	u1 = socket(AF_INET, SOCK_DGRAM, 0);
	u2 = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = 0;
	len = sizeof(b);
	if (bind(u2, (struct sockaddr *)&a, sizeof(a)) || getsockname(u2, (struct sockaddr *)&b, &len))
		return 7;
	msg.msg_name = &b;
	msg.msg_namelen = sizeof(b);
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	if (sendmsg(u1, &msg, 0) != 11)
		return 8;
	len = sizeof(a);
	if (recvfrom(u2, buf, sizeof(buf), 0, (struct sockaddr *)&a, &len) != 11)
		return 9;
	return 0;
}
