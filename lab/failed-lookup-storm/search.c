/* search: a C program that finds its data files through its own search path, the way
 * include paths, plugin paths and PATH lookups work.
 *
 *   search bad|good ROOT WORKERS REQUESTS
 *
 * The search path is ROOT/inc0 .. ROOT/inc23 (never created) followed by ROOT/data, which
 * holds name0.dat .. name7.dat. WORKERS processes are forked; each serves REQUESTS
 * "requests", and every request reads all eight files.
 *   bad:  every request searches the path again: stat() in each directory until the file
 *         is found (24 failed stats per file), then open/read/close
 *   good: the parent searches once per name before forking and keeps the full paths;
 *         requests only open
 * The parent waits for every worker and exits 0 when all of them did. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NDIRS 24
#define NNAMES 8

static char dirs[NDIRS + 1][512];

/* the first directory of the search path holding NAME, written to OUT */
static int search(const char *name, char *out, size_t n)
{
    struct stat st;
    for (int d = 0; d <= NDIRS; d++) {
        snprintf(out, n, "%s/%s", dirs[d], name);
        if (stat(out, &st) == 0)
            return 0;
    }
    return -1;
}

static int read_file(const char *path)
{
    char buf[256];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, sizeof buf);
    close(fd);
    return r > 0 ? 0 : -1;
}

static char found[NNAMES][600];

static int worker(int good, int requests)
{
    char path[600], name[32];
    for (int r = 0; r < requests; r++) {
        for (int i = 0; i < NNAMES; i++) {
            const char *p = found[i];
            if (!good) {
                snprintf(name, sizeof name, "name%d.dat", i);
                if (search(name, path, sizeof path) != 0)
                    return 1;
                p = path;
            }
            if (read_file(p) != 0)
                return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "bad") && strcmp(argv[1], "good"))) {
        fprintf(stderr, "usage: search bad|good ROOT WORKERS REQUESTS\n");
        return 2;
    }
    int good = strcmp(argv[1], "good") == 0;
    int workers = atoi(argv[3]), requests = atoi(argv[4]);
    for (int d = 0; d < NDIRS; d++)
        snprintf(dirs[d], sizeof dirs[d], "%s/inc%d", argv[2], d);
    snprintf(dirs[NDIRS], sizeof dirs[NDIRS], "%s/data", argv[2]);
    if (good) {
        char name[32];
        for (int i = 0; i < NNAMES; i++) {
            snprintf(name, sizeof name, "name%d.dat", i);
            if (search(name, found[i], sizeof found[i]) != 0)
                return 1;
        }
    }
    for (int w = 0; w < workers; w++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0)
            _exit(worker(good, requests));
    }
    int ok = 1, st;
    for (int w = 0; w < workers; w++) {
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            ok = 0;
    }
    return ok ? 0 : 1;
}
