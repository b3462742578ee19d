/* mask.c MODE N [K]: signals blocked and unblocked around every small operation.
 *
 *   wrap N      BAD: N small writes to /dev/null, each between rt_sigprocmask(SIG_BLOCK, all)
 *               and rt_sigprocmask(SIG_SETMASK, old), as an interposed wrapper or a runtime
 *               that protects each call does: two system calls of overhead per operation
 *   once N      GOOD: the same writes, the signals blocked once before them and restored once
 *               after
 *   critical N K  NEAR: N writes, every K-th inside a signal-safe critical section (block,
 *               write, restore): a section taken a few hundred times among other work
 *   jmp N       BAD through libc: N operations each entered through sigsetjmp(env, 1), which
 *               saves the signal mask with a system call (an error path a la setjmp/longjmp
 *               exception handling), then a write
 *   bench N     native costs without a tracer: ns per write alone, per write with a block and
 *               restore around it, and per sigprocmask call
 *
 * Bounded: alarm(60). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int fd;
static char buf[64];

static void op(void) {
    if (write(fd, buf, sizeof buf) != sizeof buf) { perror("write"); exit(1); }
}

static void wrapped(void) {
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    op();
    sigprocmask(SIG_SETMASK, &old, NULL);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: mask MODE N [K]\n"); return 2; }
    alarm(60);
    const char *mode = argv[1];
    long n = atol(argv[2]);
    long k = argc > 3 ? atol(argv[3]) : 10;
    memset(buf, 'x', sizeof buf);
    fd = open("/dev/null", O_WRONLY);
    if (fd < 0) { perror("/dev/null"); return 1; }
    if (!strcmp(mode, "wrap")) {
        for (long i = 0; i < n; i++) wrapped();
    } else if (!strcmp(mode, "once")) {
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, &old);
        for (long i = 0; i < n; i++) op();
        sigprocmask(SIG_SETMASK, &old, NULL);
    } else if (!strcmp(mode, "critical")) {
        for (long i = 0; i < n; i++) {
            if (i % k == 0) wrapped();
            else op();
        }
    } else if (!strcmp(mode, "jmp")) {
        static sigjmp_buf env;
        for (long i = 0; i < n; i++) {
            if (sigsetjmp(env, 1) == 0) op();
        }
    } else if (!strcmp(mode, "bench")) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) op();
        double plain = (now_ns() - t0) / n;
        t0 = now_ns();
        for (long i = 0; i < n; i++) wrapped();
        double wrap = (now_ns() - t0) / n;
        sigset_t all, old;
        sigfillset(&all);
        t0 = now_ns();
        for (long i = 0; i < n; i++) sigprocmask(SIG_BLOCK, &all, &old);
        double call = (now_ns() - t0) / n;
        printf("write %.0f ns; write between block and restore %.0f ns: %.0f ns extra per op, "
               "%.0f ns per rt_sigprocmask (alone %.0f ns)\n",
               plain, wrap, wrap - plain, (wrap - plain) / 2, call);
    } else {
        fprintf(stderr, "mask: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
