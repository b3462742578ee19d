/* stamp: a logger that formats a local timestamp for each of LINES log lines with
 * localtime() + strftime() and writes them (buffered) to stdout.
 *
 *   stamp LINES
 *
 * glibc's localtime() calls tzset(), which, when TZ is unset, checks whether /etc/localtime
 * changed: a stat of it per call (glibc 2.36: newfstatat(AT_FDCWD, "/etc/localtime", ...)).
 * With TZ set (TZ=:/etc/localtime, or a zone name) the check is skipped. localtime_r() does
 * not call tzset() on every call and shows neither. Bounded: alarm(60). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: stamp LINES\n");
        return 2;
    }
    alarm(60);
    long lines = atol(argv[1]);
    char buf[64];
    for (long i = 0; i < lines; i++) {
        time_t now = time(NULL);
        struct tm *tm = localtime(&now);
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", tm);
        printf("%s request %ld served\n", buf, i);
    }
    return 0;
}
