/* busy-poll lab: a client waits for a slow server's answers in different ways.
 *
 * usage: spin MODE [REQUESTS [DELAY_MS]]
 *
 * Forks a server child on 127.0.0.1 (an ephemeral port) that answers each request line after
 * DELAY_MS milliseconds; the parent sends REQUESTS requests one after the other and waits for
 * each answer with MODE:
 *   poll0     BAD   poll(fd, 1, 0) in a loop until the answer is there
 *   epoll0    BAD   epoll_wait(ep, ..., 0) in a loop
 *   select0   BAD   select() with a zero timeval in a loop (glibc: pselect6)
 *   eagain    BAD   non-blocking read() in a loop until it stops failing with EAGAIN
 *   yield     BAD   a reader thread blocks in read(); the main thread spins on sched_yield()
 *                   until the reader's flag is set (cheap identical syscalls, no blocking)
 *   timeout   GOOD  poll(fd, 1, 1000): a real timeout, the thread sleeps in the kernel
 *   fewpolls  NEAR  one poll(fd, 1, 0) readiness check per request, then a blocking poll(-1)
 *   epoll     NEAR  a blocking epoll_wait(ep, ..., -1) per answer
 * Bounded: alarm(10) in both processes, loopback only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *m) { perror(m); exit(2); }

static void serve(int lfd, int requests, int delay_ms) {
    int c = accept(lfd, NULL, NULL);
    if (c < 0) die("accept");
    char buf[256];
    for (int i = 0; i < requests; i++) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        usleep(delay_ms * 1000);
        const char *ans = "answer\n";
        if (write(c, ans, strlen(ans)) < 0) die("write");
    }
    close(c);
    _exit(0);
}

static atomic_int answered;
static int client_fd;
static char answer[64];

static void *reader(void *arg) {
    (void)arg;
    ssize_t n = read(client_fd, answer, sizeof answer);
    (void)n;
    atomic_store(&answered, 1);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: spin MODE [REQUESTS [DELAY_MS]]\n");
        return 2;
    }
    const char *mode = argv[1];
    int requests = argc > 2 ? atoi(argv[2]) : 3;
    int delay_ms = argc > 3 ? atoi(argv[3]) : 200;
    alarm(10);

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 4) < 0) die("bind/listen");
    socklen_t al = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &al);
    pid_t srv = fork();
    if (srv == 0) serve(lfd, requests, delay_ms);
    close(lfd);

    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    client_fd = fd;
    int ep = -1;
    if (!strcmp(mode, "epoll0") || !strcmp(mode, "epoll")) {
        ep = epoll_create1(0);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    }
    if (!strcmp(mode, "eagain")) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

    long spins = 0;
    char buf[64];
    for (int i = 0; i < requests; i++) {
        if (write(fd, "question\n", 9) != 9) die("write");
        struct pollfd p = {.fd = fd, .events = POLLIN};
        struct epoll_event evs[4];
        ssize_t n = -1;
        if (!strcmp(mode, "poll0")) {
            while (poll(&p, 1, 0) == 0) spins++;
        } else if (!strcmp(mode, "epoll0")) {
            while (epoll_wait(ep, evs, 4, 0) == 0) spins++;
        } else if (!strcmp(mode, "select0")) {
            for (;;) {
                fd_set r;
                FD_ZERO(&r);
                FD_SET(fd, &r);
                struct timeval tv = {0, 0};
                if (select(fd + 1, &r, NULL, NULL, &tv) != 0) break;
                spins++;
            }
        } else if (!strcmp(mode, "eagain")) {
            while ((n = read(fd, buf, sizeof buf)) < 0 && errno == EAGAIN) spins++;
        } else if (!strcmp(mode, "yield")) {
            pthread_t t;
            atomic_store(&answered, 0);
            pthread_create(&t, NULL, reader, NULL);
            while (!atomic_load(&answered)) {
                sched_yield();
                spins++;
            }
            pthread_join(t, NULL);
            n = 0;
        } else if (!strcmp(mode, "timeout")) {
            while (poll(&p, 1, 1000) == 0) spins++;
        } else if (!strcmp(mode, "fewpolls")) {
            if (poll(&p, 1, 0) == 0) poll(&p, 1, -1);
        } else if (!strcmp(mode, "epoll")) {
            epoll_wait(ep, evs, 4, -1);
        } else {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
        if (n < 0 && read(fd, buf, sizeof buf) <= 0) die("read");
    }
    close(fd);
    int st;
    waitpid(srv, &st, 0);
    fprintf(stderr, "%s: %d requests, %ld empty waits\n", mode, requests, spins);
    return 0;
}
