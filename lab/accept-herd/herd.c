/* accept-herd lab: a pre-forked (or pre-threaded) epoll server on 127.0.0.1.
 *
 * usage: herd MODE WORKERS PORTFILE
 *   procs              BAD   WORKERS processes forked after socket/bind/listen share the listening
 *                            socket; each adds it to its own epoll instance (EPOLLIN, level
 *                            triggered) and accepts non-blocking until EAGAIN: every connection
 *                            wakes every idle worker, all but one get EAGAIN
 *   procs-exclusive    GOOD  the same with EPOLLIN|EPOLLEXCLUSIVE (Linux >= 4.5): one worker woken
 *   procs-reuseport    GOOD  each worker opens its own listening socket with SO_REUSEPORT on the
 *                            same port: the kernel hands each connection to one socket
 *   threads            BAD   WORKERS threads of one process, each with its own epoll instance on
 *                            the shared socket
 *   threads-exclusive  GOOD  the same with EPOLLEXCLUSIVE
 *   single             NEAR  one process, one epoll loop, accept until EAGAIN (one EAGAIN per
 *                            wake-up, but nobody else is woken)
 * The port is written to PORTFILE once every worker waits. SIGTERM stops the server; alarm(30)
 * bounds it whatever happens. Each connection: read the request, answer "ok", close.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef EPOLLEXCLUSIVE
#define EPOLLEXCLUSIVE (1u << 28)
#endif

static void die(const char *m) { perror(m); exit(2); }

static int exclusive, reuseport, ready_pipe[2], stop_fd = -1;
static struct sockaddr_in addr;
static volatile sig_atomic_t stopping;

static void on_term(int s) { (void)s; stopping = 1; }

static int open_listener(int reuse) {
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuse) setsockopt(l, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (bind(l, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
    return l;
}

static void handle(int c) {
    char buf[1024];
    ssize_t n = read(c, buf, sizeof buf);
    if (n > 0) {
        const char *ans = "HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
        if (write(c, ans, strlen(ans)) < 0) perror("write");
    }
    close(c);
}

static void worker(int l) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN | (exclusive ? EPOLLEXCLUSIVE : 0), .data.fd = l};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev) < 0) die("epoll_ctl");
    if (stop_fd >= 0) {
        struct epoll_event sev = {.events = EPOLLIN, .data.fd = stop_fd};
        epoll_ctl(ep, EPOLL_CTL_ADD, stop_fd, &sev);
    }
    if (write(ready_pipe[1], "r", 1) != 1) die("ready");
    while (!stopping) {
        struct epoll_event evs[8];
        int n = epoll_wait(ep, evs, 8, -1);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == stop_fd) {
                close(ep);
                return;
            }
            for (;;) {
                int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0) break; /* EAGAIN: somebody else took it, or the queue is empty */
                handle(c);
            }
        }
    }
    close(ep);
}

static void *thread_main(void *arg) {
    worker(*(int *)arg);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: herd MODE WORKERS PORTFILE\n");
        return 2;
    }
    const char *mode = argv[1];
    int workers = atoi(argv[2]);
    if (workers < 1 || workers > 64) workers = 4;
    alarm(30);
    exclusive = strstr(mode, "exclusive") != NULL;
    reuseport = strstr(mode, "reuseport") != NULL;
    int threads = !strncmp(mode, "threads", 7);
    if (!strcmp(mode, "single")) workers = 1;
    if (pipe(ready_pipe) < 0) die("pipe");
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);

    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* the shared listener, or (reuseport) a bound, never listening socket that reserves the port */
    int l = open_listener(reuseport);
    socklen_t al = sizeof addr;
    getsockname(l, (struct sockaddr *)&addr, &al);
    if (!reuseport && listen(l, 128) < 0) die("listen");

    pid_t pids[64];
    pthread_t tids[64];
    if (threads) stop_fd = eventfd(0, EFD_CLOEXEC);
    for (int i = 0; i < workers; i++) {
        if (threads) {
            pthread_create(&tids[i], NULL, thread_main, &l);
            continue;
        }
        pids[i] = fork();
        if (pids[i] == 0) {
            int mine = l;
            if (reuseport) {
                mine = open_listener(1);
                if (listen(mine, 128) < 0) die("listen");
            }
            worker(mine);
            _exit(0);
        }
    }
    char c;
    for (int i = 0; i < workers; i++)
        if (read(ready_pipe[0], &c, 1) != 1) die("ready");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[3]);
    FILE *f = fopen(tmp, "w");
    if (!f) die("portfile");
    fprintf(f, "%d\n", ntohs(addr.sin_port));
    fclose(f);
    rename(tmp, argv[3]);

    sigset_t none;
    sigemptyset(&none);
    while (!stopping) sigsuspend(&none);
    if (threads) {
        uint64_t one = 1;
        if (write(stop_fd, &one, sizeof one) < 0) perror("stop");
        for (int i = 0; i < workers; i++) pthread_join(tids[i], NULL);
    } else {
        for (int i = 0; i < workers; i++) kill(pids[i], SIGTERM);
        for (int i = 0; i < workers; i++) waitpid(pids[i], NULL, 0);
    }
    return 0;
}
