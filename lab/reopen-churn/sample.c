/* sample: a monitoring loop reading /proc/self/stat SAMPLES times (as an agent samples CPU time).
 *
 *   sample reopen|pread SAMPLES
 *
 * reopen: fopen(), fgets(), fclose() per sample: open/read/close each time
 * pread:  one open(), then pread(fd, buf, n, 0) per sample: /proc files produce their
 *         contents again on every read from offset 0
 * Bounded: alarm(60). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long utime_of(const char *line) {
    const char *p = strrchr(line, ')');
    long v = 0;
    if (p) sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld", &v);
    return v;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "reopen") && strcmp(argv[1], "pread"))) {
        fprintf(stderr, "usage: sample reopen|pread SAMPLES\n");
        return 2;
    }
    alarm(60);
    long n = atol(argv[2]), sum = 0;
    char buf[1024];
    if (!strcmp(argv[1], "reopen")) {
        for (long i = 0; i < n; i++) {
            FILE *f = fopen("/proc/self/stat", "r");
            if (!f || !fgets(buf, sizeof buf, f)) return 1;
            fclose(f);
            sum += utime_of(buf);
        }
    } else {
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 1;
        for (long i = 0; i < n; i++) {
            ssize_t r = pread(fd, buf, sizeof buf - 1, 0);
            if (r <= 0) return 1;
            buf[r] = 0;
            sum += utime_of(buf);
        }
        close(fd);
    }
    printf("%ld samples, %ld\n", n, sum);
    return 0;
}
