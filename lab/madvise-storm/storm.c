/* storm.c MODE N KIB: memory given back to the kernel and faulted in again, op after op.
 *
 *   dontneed N KIB  BAD: one region of KIB KiB; each of N ops writes all of it, then gives it
 *                   back with madvise(MADV_DONTNEED), as an allocator that returns freed memory
 *                   at once does: the next op faults every page in again, zeroed
 *   keep N KIB      GOOD: the same ops on the same region, never given back
 *   phase N MIB     NEAR: N phases, each writing a MIB MiB region and releasing it once at its
 *                   end (a batch job between stages): a handful of large madvise calls
 *   malloc N KIB    N ops of malloc(KIB), write it, free: what the allocator does with it is
 *                   the allocator's (run.sh preloads jemalloc with and without its decay)
 *   bench N KIB     native costs without a tracer: ns per op with and without the madvise,
 *                   the time inside the madvise calls and the rest (the re-faults), and ns per
 *                   madvise of a region already given back (the call alone)
 *
 * Bounded: alarm(60). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static volatile unsigned long sink;

/* one op: write every byte of the region (the work that touches the memory) */
static void work(char *p, size_t len, long i) {
    memset(p, (int)(i & 0x7f) + 1, len);
    sink += p[len / 2];
}

static char *region(size_t len) {
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    return p;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: storm MODE N KIB\n"); return 2; }
    alarm(60);
    const char *mode = argv[1];
    long n = atol(argv[2]);
    size_t len = (size_t)atol(argv[3]) * 1024;
    if (!strcmp(mode, "dontneed") || !strcmp(mode, "keep")) {
        int release = !strcmp(mode, "dontneed");
        char *p = region(len);
        for (long i = 0; i < n; i++) {
            work(p, len, i);
            if (release && madvise(p, len, MADV_DONTNEED) != 0) { perror("madvise"); return 1; }
        }
    } else if (!strcmp(mode, "phase")) {
        len *= 1024;
        char *p = region(len);
        for (long i = 0; i < n; i++) {
            work(p, len, i);
            madvise(p, len, MADV_DONTNEED);
        }
    } else if (!strcmp(mode, "malloc")) {
        for (long i = 0; i < n; i++) {
            char *p = malloc(len);
            if (!p) return 1;
            work(p, len, i);
            free(p);
        }
    } else if (!strcmp(mode, "bench")) {
        char *p = region(len);
        work(p, len, 0);
        double t0 = now_ns();
        for (long i = 0; i < n; i++) work(p, len, i);
        double keep = (now_ns() - t0) / n;
        double inside = 0;
        t0 = now_ns();
        for (long i = 0; i < n; i++) {
            work(p, len, i);
            double t1 = now_ns();
            madvise(p, len, MADV_DONTNEED);
            inside += now_ns() - t1;
        }
        double storm = (now_ns() - t0) / n;
        inside /= n;
        t0 = now_ns();
        for (long i = 0; i < n; i++) madvise(p, len, MADV_DONTNEED);
        double call = (now_ns() - t0) / n;
        size_t pages = len / 4096;
        printf("%zu KiB (%zu pages): op %.0f ns kept, %.0f ns with madvise: %.0f ns extra per op "
               "(%.0f ns per page); inside madvise %.0f ns, the re-faults after it %.0f ns (%.0f ns "
               "per page); madvise with nothing resident %.0f ns\n",
               len / 1024, pages, keep, storm, storm - keep, (storm - keep) / pages, inside,
               storm - keep - inside, (storm - keep - inside) / pages, call);
    } else {
        fprintf(stderr, "storm: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
