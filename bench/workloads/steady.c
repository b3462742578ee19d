/* A busy neighbour at a steady rate: RATE syscalls a second for SECONDS seconds, three
 * different cheap calls in turn (getpid, getppid, gettid: no run the kernel can fold, so every
 * call is a record of a full-detail trace), paced by the vDSO clock (no syscall of its own) with
 * a nanosleep every 1,000 calls when ahead. bench/agent-latency.sh BUSY=RATE runs it beside each
 * lab so that every window of the agent ends at its bound of records, as on a busy host (the
 * saturated bench nginx and wrk made ~330,000 calls a second under full detail).
 *
 * usage: steady RATE SECONDS */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double rate = argc > 1 ? atof(argv[1]) : 330000;
    double secs = argc > 2 ? atof(argv[2]) : 60;
    if (rate <= 0 || secs <= 0) return 2;
    double start = now();
    long done = 0;
    for (;;) {
        for (int i = 0; i < 1000; i += 3) {
            syscall(SYS_getpid);
            syscall(SYS_getppid);
            syscall(SYS_gettid);
        }
        done += 1002;
        double t = now() - start;
        if (t >= secs) return 0;
        double ahead = done / rate - t;
        if (ahead > 0) {
            struct timespec d = {(time_t)ahead, (long)((ahead - (time_t)ahead) * 1e9)};
            nanosleep(&d, NULL);
        }
    }
}
