/* A client that needs a TCP server on 127.0.0.1:PORT that is not there (nothing listens), and
 * retries its connect: syslint lab retry-storm (README.md).
 *
 *   client now     PORT N   blocking connect, retried at once after each ECONNREFUSED (BAD)
 *   client nonblock PORT N  non-blocking connect + poll + getsockopt(SO_ERROR), retried at once
 *                           (BAD: how event loops connect; the failure is SO_ERROR's)
 *   client backoff PORT N   exponential backoff with full jitter: sleeps rand(0, min(cap, 1 ms * 2^k))
 *                           before retry k, cap 100 ms, for at most SECONDS s (GOOD)
 *   client few     PORT N   N retries with exponential backoff from 1 ms, then gives up (near miss)
 *
 * Bounded: at most N attempts (and alarm(60)); exits 1 when it never connected. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in addr;

/* One attempt: 0 when connected, else the errno. */
static int attempt(int nonblock) {
    int s = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (s < 0) { perror("socket"); exit(2); }
    int err = 0;
    if (connect(s, (struct sockaddr *)&addr, sizeof addr) < 0) {
        err = errno;
        if (nonblock && err == EINPROGRESS) {
            struct pollfd p = { .fd = s, .events = POLLOUT };
            poll(&p, 1, 1000);
            socklen_t len = sizeof err;
            getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
        }
    }
    if (err) close(s);
    else close(s); /* connected: this lab only needs to know */
    return err;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_ms(double ms) {
    struct timespec t = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: client now|nonblock|backoff|few PORT N\n"); return 2; }
    alarm(60);
    const char *mode = argv[1];
    addr.sin_family = AF_INET;
    addr.sin_port = htons(atoi(argv[2]));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long n = atol(argv[3]);
    double seconds = getenv("SECONDS_MAX") ? atof(getenv("SECONDS_MAX")) : 2.0;
    int nonblock = strcmp(mode, "nonblock") == 0;
    int backoff = strcmp(mode, "backoff") == 0 || strcmp(mode, "few") == 0;
    srand(getpid());
    double start = now();
    for (long k = 0; k < n; k++) {
        if (attempt(nonblock) == 0) return 0;
        if (backoff) {
            double ceiling = 1.0 * (1L << (k < 20 ? k : 20));
            if (strcmp(mode, "backoff") == 0) {
                if (ceiling > 100) ceiling = 100;
                if (now() - start > seconds) break;
                sleep_ms(ceiling * rand() / RAND_MAX);   /* full jitter */
            } else {
                sleep_ms(ceiling);
            }
        }
    }
    fprintf(stderr, "client: gave up\n");
    return 1;
}
