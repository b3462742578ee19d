/* clock.c: a loop that handles ITEMS items and timestamps each one twice (start and end),
 * writing one log line per item to /dev/null through stdio (buffered: one write per 4 KiB), as
 * a request handler with a latency log would.
 * The variants differ only in how the clock is read.
 *
 *   syscall   BAD   syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ...): every read enters the
 *                   kernel, as every clock_gettime() does when the vDSO cannot serve it (a
 *                   clocksource other than tsc: hpet, acpi_pm, xen; some emulators and
 *                   sandboxes; ARM32 kernels before 4.1)
 *   vdso      GOOD  clock_gettime(CLOCK_MONOTONIC, ...) through glibc: the vDSO answers in user
 *                   space, no system call
 *   few       NEAR  syscall(SYS_clock_gettime, ...) for the first 50 items only (a start-up
 *                   that reads the clock a hundred times), then the vDSO
 *   bench     (not traced) ns per call of each way, for the README
 *
 * usage: clock MODE ITEMS
 * Bounded: alarm(60).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int kernel_clock; /* read the clock through the kernel */

static void now(struct timespec *ts) {
    if (kernel_clock)
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ts);
    else
        clock_gettime(CLOCK_MONOTONIC, ts);
}

static double ns_per_call(int kernel, long n) {
    struct timespec a, b, t;
    kernel_clock = 0;
    now(&a);
    kernel_clock = kernel;
    for (long i = 0; i < n; i++)
        now(&t);
    kernel_clock = 0;
    now(&b);
    return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: clock syscall|vdso|few|bench ITEMS\n");
        return 2;
    }
    long items = atol(argv[2]);
    if (items < 1) {
        fprintf(stderr, "bad ITEMS\n");
        return 2;
    }
    alarm(60);
    if (!strcmp(argv[1], "bench")) {
        for (int round = 0; round < 3; round++)
            printf("vdso %.1f ns/call, syscall %.1f ns/call\n", ns_per_call(0, items), ns_per_call(1, items));
        return 0;
    }
    int few = !strcmp(argv[1], "few");
    if (!strcmp(argv[1], "syscall") || few)
        kernel_clock = 1;
    else if (strcmp(argv[1], "vdso")) {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    FILE *log = fopen("/dev/null", "we");
    if (!log) {
        perror("/dev/null");
        return 1;
    }
    unsigned long sum = 0;
    for (long i = 0; i < items; i++) {
        if (few && i == 50)
            kernel_clock = 0;
        struct timespec start, end;
        now(&start);
        /* the item's work */
        unsigned long x = i;
        for (int k = 0; k < 200; k++)
            x = x * 6364136223846793005UL + 1442695040888963407UL;
        sum += x;
        now(&end);
        fprintf(log, "item %ld took %ld ns\n", i, (end.tv_sec - start.tv_sec) * 1000000000L + (end.tv_nsec - start.tv_nsec));
    }
    if (fclose(log)) {
        perror("/dev/null");
        return 1;
    }
    return sum == 42; /* keep the work */
}
