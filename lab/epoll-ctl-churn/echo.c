/* echo.c: an epoll echo server on 127.0.0.1 (the parent) and a client (a forked child) that
 * makes REQUESTS round trips of 64 bytes, one at a time. The variants differ only in how the
 * server registers its connection with epoll.
 *
 *   mod      BAD   level-triggered, interest toggled per request: EPOLLIN; after the read
 *                  EPOLL_CTL_MOD to EPOLLOUT; after the write EPOLL_CTL_MOD back to EPOLLIN (two
 *                  epoll_ctl per request: the registration costs more calls than the I/O)
 *   et       GOOD  registered once, EPOLLIN|EPOLLOUT|EPOLLET: read until EAGAIN, write the answer
 *                  at once (wait for EPOLLOUT only when the socket buffer is full)
 *   oneshot  NEAR  EPOLLIN|EPOLLONESHOT, re-armed with EPOLL_CTL_MOD after every request (the
 *                  pattern for handing fds to several threads; one thread here): info at most
 *   conn     NEAR  a new connection per request: EPOLL_CTL_ADD at accept, close after the answer
 *                  (registration once per fd, as it must be: quiet)
 *
 * usage: echo MODE REQUESTS    Bounded: alarm(30).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG 64

static void die(const char *what) {
    perror(what);
    exit(1);
}

static int connect_to(int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a))
        die("connect");
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
}

static void client(int port, long n, int per_conn) {
    char buf[MSG];
    memset(buf, 'x', sizeof buf);
    int s = per_conn ? -1 : connect_to(port);
    for (long i = 0; i < n; i++) {
        if (per_conn)
            s = connect_to(port);
        if (write(s, buf, MSG) != MSG)
            die("client write");
        for (int got = 0; got < MSG;) {
            ssize_t r = read(s, buf + got, MSG - got);
            if (r <= 0)
                die("client read");
            got += r;
        }
        if (per_conn)
            close(s);
    }
    if (!per_conn)
        close(s);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: echo mod|et|oneshot|conn REQUESTS\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = atol(argv[2]);
    int mod = !strcmp(mode, "mod"), et = !strcmp(mode, "et"), oneshot = !strcmp(mode, "oneshot"),
        conn = !strcmp(mode, "conn");
    if (!(mod || et || oneshot || conn) || n < 1) {
        fprintf(stderr, "bad MODE or REQUESTS\n");
        return 2;
    }
    alarm(30);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 64) ||
        getsockname(ls, (struct sockaddr *)&a, &al))
        die("listen");
    int port = ntohs(a.sin_port);
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        close(ls);
        client(port, n, conn);
        _exit(0);
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev))
        die("epoll_ctl listen");
    long served = 0;
    char buf[4096];
    ssize_t pending = 0; /* bytes read and not yet echoed */
    while (served < n) {
        struct epoll_event evs[8];
        int k = epoll_wait(ep, evs, 8, -1);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < k; i++) {
            int fd = evs[i].data.fd;
            if (fd == ls) {
                int c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (c < 0)
                    continue;
                int one = 1;
                setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
                if (et)
                    ce.events = EPOLLIN | EPOLLOUT | EPOLLET;
                if (oneshot)
                    ce.events = EPOLLIN | EPOLLONESHOT;
                if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce))
                    die("epoll_ctl add");
                continue;
            }
            if (mod && (evs[i].events & EPOLLOUT)) {
                /* the answer, then back to waiting for a request */
                if (write(fd, buf, pending) != pending)
                    die("write");
                pending = 0;
                served++;
                struct epoll_event ce = {.events = EPOLLIN, .data.fd = fd};
                if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ce))
                    die("epoll_ctl mod");
                continue;
            }
            if (evs[i].events & (EPOLLIN | EPOLLHUP)) {
                ssize_t r = read(fd, buf, sizeof buf);
                if (r == 0 || (r < 0 && errno != EAGAIN)) {
                    close(fd);
                    if (!conn)
                        served = n; /* the client is done */
                    continue;
                }
                if (r < 0)
                    continue;
                if (mod) {
                    /* wait until the socket can take the answer */
                    pending = r;
                    struct epoll_event ce = {.events = EPOLLOUT, .data.fd = fd};
                    if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ce))
                        die("epoll_ctl mod");
                    continue;
                }
                if (write(fd, buf, r) != r)
                    die("write");
                served++;
                if (et) {
                    /* edge-triggered: drain until EAGAIN */
                    while ((r = read(fd, buf, sizeof buf)) > 0) {
                        if (write(fd, buf, r) != r)
                            die("write");
                        served += r / MSG;
                    }
                    if (r == 0)
                        close(fd);
                }
                if (oneshot) {
                    struct epoll_event ce = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = fd};
                    if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ce))
                        die("epoll_ctl rearm");
                }
                if (conn)
                    close(fd);
            }
        }
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
