/* poller.c: a reader watching fds for input, the way that wastes a core while idle and the way
 * that waits. Every loop is bounded (an iteration count, and alarm(60)).
 *
 *   poller eof N       BAD: 6 pipes whose writers are gone (EOF). Each round: poll() on all 6
 *                      (returns at once: a hung-up fd is always "ready"), then per fd
 *                      ioctl(FIONREAD) -> 0 and read() -> 0, and the fd is kept in the set.
 *                      rdpadd's loop in rivendell#1004. N rounds.
 *   poller sleep N     BAD: a pty nobody types into, asked ioctl(FIONREAD) every millisecond
 *                      (a sleep between looks instead of a wait for readiness). N looks.
 *   poller tcgets N    BAD: a pty whose mode is polled with tcgetattr() (ioctl TCGETS) every
 *                      millisecond to see whether it changed. N looks.
 *   poller poll N      GOOD: the same 6 pipes at EOF: poll(), read() -> 0 is EOF, the fd is
 *                      closed and dropped from the set; then an idle pty waited on with
 *                      poll(timeout 100 ms) N/100 times (at least 3).
 *   poller tty-start N NEAR: an interactive program's start on a pty: tcgetattr, tcsetattr to raw
 *                      mode, TIOCGWINSZ, a prompt, poll(timeout 100 ms) 3 times, the mode restored.
 *   poller bench N     no tracing: ns per call of each, natively (README.md)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define NFD 6

static void eof_pipes(int *r) {
    for (int i = 0; i < NFD; i++) {
        int p[2];
        if (pipe(p) != 0) { perror("pipe"); exit(1); }
        close(p[1]); /* the writer is gone: the read end is at EOF */
        r[i] = p[0];
    }
}

static void pty(int *master, int *slave) {
    if (openpty(master, slave, NULL, NULL, NULL) != 0) { perror("openpty"); exit(1); }
}

static void ms_sleep(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static void bench(long n) {
    int r[NFD], m, s, avail;
    char buf[4096];
    struct termios t;
    struct pollfd pf[NFD];
    eof_pipes(r);
    pty(&m, &s);
    for (int i = 0; i < NFD; i++) pf[i] = (struct pollfd){.fd = r[i], .events = POLLIN};
    double a, c;
    a = now();
    for (long i = 0; i < n; i++) ioctl(r[0], FIONREAD, &avail);
    printf("ioctl(FIONREAD) on a pipe at EOF: %.0f ns\n", (now() - a) / n * 1e9);
    a = now();
    for (long i = 0; i < n; i++) ioctl(s, FIONREAD, &avail);
    printf("ioctl(FIONREAD) on an idle pty: %.0f ns\n", (now() - a) / n * 1e9);
    a = now();
    for (long i = 0; i < n; i++) tcgetattr(s, &t);
    printf("ioctl(TCGETS) on a pty: %.0f ns\n", (now() - a) / n * 1e9);
    a = now();
    for (long i = 0; i < n; i++) read(r[0], buf, sizeof buf);
    printf("read() = 0 on a pipe at EOF: %.0f ns\n", (now() - a) / n * 1e9);
    a = now();
    for (long i = 0; i < n; i++) poll(pf, NFD, 1000);
    printf("poll() on 6 pipes at EOF (returns at once): %.0f ns\n", (now() - a) / n * 1e9);
    /* one round of the eof loop: 13 calls */
    a = now();
    c = cpu();
    for (long i = 0; i < n / 10; i++) {
        poll(pf, NFD, 1000);
        for (int j = 0; j < NFD; j++) {
            ioctl(r[j], FIONREAD, &avail);
            read(r[j], buf, sizeof buf);
        }
    }
    printf("eof round (poll + 6 x (FIONREAD + read)): %.0f ns wall, %.0f ns CPU, %.0f ns per call\n",
           (now() - a) / (n / 10) * 1e9, (cpu() - c) / (n / 10) * 1e9, (now() - a) / (n / 10) / 13 * 1e9);
    /* a look every millisecond: CPU per look, the wake-up included */
    long looks = 1000;
    a = now();
    c = cpu();
    for (long i = 0; i < looks; i++) {
        ioctl(s, FIONREAD, &avail);
        ms_sleep(1);
    }
    printf("sleep loop (FIONREAD + nanosleep 1 ms): %.0f us wall, %.0f ns CPU per look\n",
           (now() - a) / looks * 1e6, (cpu() - c) / looks * 1e9);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: poller MODE N\n"); return 2; }
    long n = atol(argv[2]);
    alarm(60);
    int r[NFD], m, s, avail;
    char buf[4096];
    if (!strcmp(argv[1], "eof")) {
        struct pollfd pf[NFD];
        eof_pipes(r);
        for (int i = 0; i < NFD; i++) pf[i] = (struct pollfd){.fd = r[i], .events = POLLIN};
        for (long k = 0; k < n; k++) {
            poll(pf, NFD, 1000);
            for (int i = 0; i < NFD; i++) {
                if (ioctl(r[i], FIONREAD, &avail) == 0 && avail > 0) continue; /* never: at EOF */
                (void)read(r[i], buf, sizeof buf);                             /* 0: EOF, ignored */
            }
        }
    } else if (!strcmp(argv[1], "sleep")) {
        pty(&m, &s);
        for (long k = 0; k < n; k++) {
            if (ioctl(s, FIONREAD, &avail) == 0 && avail > 0) (void)read(s, buf, sizeof buf);
            ms_sleep(1);
        }
    } else if (!strcmp(argv[1], "tcgets")) {
        struct termios t, last;
        pty(&m, &s);
        tcgetattr(s, &last);
        for (long k = 0; k < n; k++) {
            tcgetattr(s, &t);
            if (memcmp(&t, &last, sizeof t)) last = t; /* never: nobody changes it */
            ms_sleep(1);
        }
    } else if (!strcmp(argv[1], "poll")) {
        struct pollfd pf[NFD];
        int left = NFD;
        eof_pipes(r);
        for (int i = 0; i < NFD; i++) pf[i] = (struct pollfd){.fd = r[i], .events = POLLIN};
        while (left > 0) {
            if (poll(pf, NFD, 1000) <= 0) break;
            for (int i = 0; i < NFD; i++) {
                if (pf[i].fd < 0 || !pf[i].revents) continue;
                if (read(pf[i].fd, buf, sizeof buf) <= 0) { /* EOF: stop watching it */
                    close(pf[i].fd);
                    pf[i].fd = -1;
                    left--;
                }
            }
        }
        pty(&m, &s);
        struct pollfd one = {.fd = s, .events = POLLIN};
        long waits = n / 100 < 3 ? 3 : n / 100;
        for (long k = 0; k < waits; k++) {
            if (poll(&one, 1, 100) > 0) (void)read(s, buf, sizeof buf);
        }
    } else if (!strcmp(argv[1], "tty-start")) {
        struct termios saved, raw;
        struct winsize ws;
        pty(&m, &s);
        tcgetattr(s, &saved);
        raw = saved;
        cfmakeraw(&raw);
        tcsetattr(s, TCSANOW, &raw);
        ioctl(s, TIOCGWINSZ, &ws);
        (void)write(s, "> ", 2);
        struct pollfd one = {.fd = s, .events = POLLIN};
        for (int k = 0; k < 3; k++) {
            if (poll(&one, 1, 100) > 0) (void)read(s, buf, sizeof buf);
        }
        tcsetattr(s, TCSANOW, &saved);
    } else if (!strcmp(argv[1], "bench")) {
        bench(n);
    } else {
        fprintf(stderr, "poller: unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
