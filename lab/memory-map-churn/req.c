/* req.c: a server loop in miniature: REQUESTS requests, each filling a buffer of SIZE KiB (a
 * decoded image, a response assembled in memory, a per-request scratch area) and reading it back.
 *
 *   each   malloc(SIZE) and free() per request (glibc's allocator decides what reaches the kernel)
 *   reuse  one buffer allocated before the loop and reused by every request
 *
 * usage: req each|reuse SIZE_KIB REQUESTS
 * Prints a checksum, wall time, CPU time and the page faults of the run (getrusage).
 * Bounded: alarm(60).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: req each|reuse SIZE_KIB REQUESTS\n");
        return 2;
    }
    int reuse = !strcmp(argv[1], "reuse");
    if (!reuse && strcmp(argv[1], "each")) {
        fprintf(stderr, "req: unknown mode %s\n", argv[1]);
        return 2;
    }
    size_t size = (size_t)atol(argv[2]) * 1024;
    long n = atol(argv[3]);
    if (size == 0 || n < 1) {
        fprintf(stderr, "req: bad arguments\n");
        return 2;
    }
    alarm(60);
    double t0 = now();
    unsigned long sum = 0;
    char *kept = reuse ? malloc(size) : NULL;
    for (long i = 0; i < n; i++) {
        char *buf = reuse ? kept : malloc(size);
        if (!buf) {
            perror("malloc");
            return 1;
        }
        memset(buf, (int)(i & 0xff), size); /* the request fills its buffer */
        for (size_t k = 0; k < size; k += 4096)
            sum += (unsigned char)buf[k];
        if (!reuse)
            free(buf);
    }
    free(kept);
    double wall = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "%s %s KiB x %ld: sum %lu wall %.3f s user %.3f s sys %.3f s minor faults %ld\n", argv[1], argv[2],
            n, sum, wall, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
            ru.ru_minflt);
    return 0;
}
