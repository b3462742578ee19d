/* nagle.c: a request/response client and server over loopback TCP, to show Nagle's algorithm
 * meeting the peer's delayed ACK.
 *
 *   nagle server PORTFILE [SLEEP_MS]   listen on 127.0.0.1 (a free port, written to PORTFILE),
 *                                      serve one connection: read an 8-byte header ("%7d\n": the
 *                                      body length), then the body, then (after SLEEP_MS) answer
 *                                      with 16 bytes in one write; alarm(120)
 *   nagle client MODE PORT N           N requests of a 8-byte header and a 100-byte body, each
 *                                      answered before the next; MODE says how they are written:
 *     two-writes   write(header); write(body)            (Nagle holds the body: BAD)
 *     nodelay      the same with TCP_NODELAY set          (GOOD)
 *     writev       one writev(header, body)               (GOOD)
 *     msg-more     send(header, MSG_MORE); send(body)     (GOOD: the kernel waits for the body)
 *     one-write    header and body copied into one write  (GOOD, and the near miss's client)
 *   prints the mean round trip in ms to stdout.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BODY 100

static void die(const char *what) { perror(what); exit(1); }

static int read_full(int fd, char *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int server(const char *portfile, int sleep_ms) {
    alarm(120);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0) die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0) die("bind/listen");
    socklen_t al = sizeof a;
    getsockname(ls, (struct sockaddr *)&a, &al);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
    FILE *f = fopen(tmp, "w");
    if (!f) die("portfile");
    fprintf(f, "%d\n", ntohs(a.sin_port));
    fclose(f);
    rename(tmp, portfile);
    int c = accept(ls, NULL, NULL);
    if (c < 0) die("accept");
    char hdr[9] = {0}, body[4096];
    const char resp[16] = "OK 0000000000000";
    while (read_full(c, hdr, 8) == 0) {
        int len = atoi(hdr);
        if (len < 0 || len > (int)sizeof body || read_full(c, body, (size_t)len) < 0) break;
        if (sleep_ms > 0) usleep((useconds_t)sleep_ms * 1000);
        if (write(c, resp, sizeof resp) != sizeof resp) break;
    }
    close(c);
    close(ls);
    return 0;
}

static int client(const char *mode, int port, int n) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) die("socket");
    if (!strcmp(mode, "nodelay")) {
        int one = 1;
        if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) die("TCP_NODELAY");
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    char hdr[9], body[BODY], resp[16], both[8 + BODY];
    snprintf(hdr, sizeof hdr, "%7d\n", BODY);
    memset(body, 'x', sizeof body);
    double total = 0;
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (!strcmp(mode, "writev")) {
            struct iovec iov[2] = {{hdr, 8}, {body, BODY}};
            if (writev(s, iov, 2) != 8 + BODY) die("writev");
        } else if (!strcmp(mode, "msg-more")) {
            if (send(s, hdr, 8, MSG_MORE) != 8 || send(s, body, BODY, 0) != BODY) die("send");
        } else if (!strcmp(mode, "one-write")) {
            memcpy(both, hdr, 8);
            memcpy(both + 8, body, BODY);
            if (write(s, both, sizeof both) != (ssize_t)sizeof both) die("write");
        } else {
            if (write(s, hdr, 8) != 8 || write(s, body, BODY) != BODY) die("write");
        }
        if (read_full(s, resp, sizeof resp) < 0) die("read");
        total += now_ms() - t0;
    }
    close(s);
    printf("%s: %d requests, mean round trip %.2f ms\n", mode, n, total / n);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "server")) return server(argv[2], argc > 3 ? atoi(argv[3]) : 0);
    if (argc == 5 && !strcmp(argv[1], "client")) return client(argv[2], atoi(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: nagle server PORTFILE [SLEEP_MS] | nagle client MODE PORT N\n");
    return 2;
}
