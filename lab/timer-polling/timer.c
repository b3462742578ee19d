/* timer.c: a daemon waits for one event that comes after DELAY ms (default 2000): a child that
 * writes a byte to a pipe and exits. The variants differ only in how the parent waits.
 *
 *   select20   BAD   select() on the pipe with a 20 ms timeout, again and again: 50 wake-ups a
 *                    second for nothing until the byte arrives
 *   wait20     BAD   the child is only waited for: nanosleep(20 ms), then waitpid(-1, WNOHANG),
 *                    again and again until it is reaped
 *   block      GOOD  select() on the pipe with no timeout, then a blocking waitpid()
 *   pidfd      GOOD  pidfd_open() for the child and poll() on it with no timeout, then waitid()
 *   tick100    NEAR  a GUI-like idle tick: poll(NULL, 0, 100) for the whole wait, then a
 *                    blocking read (10 wake-ups a second: info at most)
 *   server20   NEAR  a server polling a socketpair with a 20 ms timeout while a client sends a
 *                    message every 30 ms: timeouts alternate with real reads (quiet)
 *
 * usage: timer MODE [DELAY_MS]   Bounded: alarm(30).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: timer select20|wait20|block|pidfd|tick100|server20 [DELAY_MS]\n");
        return 2;
    }
    const char *mode = argv[1];
    long delay = argc > 2 ? atol(argv[2]) : 2000;
    if (delay < 1 || delay > 20000) {
        fprintf(stderr, "bad DELAY_MS\n");
        return 2;
    }
    alarm(30);
    int fds[2];
    int server = !strcmp(mode, "server20");
    if (server ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds) : pipe(fds))
        die("pipe");
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        close(fds[0]);
        if (server) {
            /* a client: a message every 30 ms for DELAY ms */
            for (long t = 0; t < delay; t += 30) {
                sleep_ms(30);
                if (write(fds[1], "ping\n", 5) != 5)
                    _exit(1);
            }
        } else {
            sleep_ms(delay);
            if (write(fds[1], "x", 1) != 1)
                _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    char buf[256];
    int status = 0;
    if (!strcmp(mode, "select20")) {
        for (;;) {
            fd_set r;
            FD_ZERO(&r);
            FD_SET(fds[0], &r);
            struct timeval tv = {0, 20000};
            int n = select(fds[0] + 1, &r, NULL, NULL, &tv);
            if (n < 0 && errno != EINTR)
                die("select");
            if (n > 0)
                break;
        }
        if (read(fds[0], buf, 1) != 1)
            die("read");
        waitpid(child, &status, 0);
    } else if (!strcmp(mode, "wait20")) {
        for (;;) {
            sleep_ms(20);
            pid_t p = waitpid(-1, &status, WNOHANG);
            if (p < 0)
                die("waitpid");
            if (p == child)
                break;
        }
    } else if (!strcmp(mode, "block")) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(fds[0], &r);
        if (select(fds[0] + 1, &r, NULL, NULL, NULL) != 1)
            die("select");
        if (read(fds[0], buf, 1) != 1)
            die("read");
        waitpid(child, &status, 0);
    } else if (!strcmp(mode, "pidfd")) {
        int pfd = (int)syscall(SYS_pidfd_open, child, 0);
        if (pfd < 0)
            die("pidfd_open");
        struct pollfd p = {pfd, POLLIN, 0};
        if (poll(&p, 1, -1) != 1)
            die("poll");
        siginfo_t si;
        if (waitid(P_PIDFD, pfd, &si, WEXITED))
            die("waitid");
        status = si.si_status << 8;
    } else if (!strcmp(mode, "tick100")) {
        struct pollfd p = {fds[0], POLLIN, 0};
        /* the toolkit's idle tick: nothing to do but look again */
        while (poll(NULL, 0, 100) == 0) {
            if (poll(&p, 1, 0) == 1)
                break;
        }
        if (read(fds[0], buf, 1) != 1)
            die("read");
        waitpid(child, &status, 0);
    } else if (server) {
        long got = 0;
        for (;;) {
            struct pollfd p = {fds[0], POLLIN, 0};
            int n = poll(&p, 1, 20);
            if (n < 0 && errno != EINTR)
                die("poll");
            if (n == 1) {
                ssize_t r = read(fds[0], buf, sizeof buf);
                if (r <= 0)
                    break; /* the client is gone */
                got += r;
            }
        }
        waitpid(child, &status, 0);
        fprintf(stderr, "server20: %ld bytes\n", got);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
