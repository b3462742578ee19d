/* records: an append-only record log, written the three ways programs usually do it.
 *
 *   records each|batch|osync|save DIR WRITERS RECORDS
 *
 * WRITERS processes are forked; each appends RECORDS records of 100 bytes to its own file
 * DIR/log<N> and exits 0 when every call succeeded.
 *   each:  write() then fsync() after every record (durable per record, one flush each)
 *   batch: write() every record, fdatasync() once at the end (group commit)
 *   osync: the file is opened with O_DSYNC, so every write() is itself a flush
 *   save:  an editor-style save: the whole content in one write() to a temp file, one
 *          fsync(), rename() over the target (RECORDS sets the size)
 * The parent waits for the writers and exits 0 when all of them did. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define REC 100

static int writer(const char *mode, const char *dir, int n, int id)
{
    char path[512], tmp[520], rec[REC];
    snprintf(path, sizeof path, "%s/log%d", dir, id);
    memset(rec, 'r', sizeof rec);
    rec[REC - 1] = '\n';
    if (strcmp(mode, "save") == 0) {
        size_t len = (size_t)n * REC;
        char *all = malloc(len);
        if (!all)
            return 1;
        for (int i = 0; i < n; i++)
            memcpy(all + (size_t)i * REC, rec, REC);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, all, len) != (ssize_t)len || fsync(fd) != 0 || close(fd) != 0)
            return 1;
        free(all);
        return rename(tmp, path) == 0 ? 0 : 1;
    }
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
    if (strcmp(mode, "osync") == 0)
        flags |= O_DSYNC;
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return 1;
    for (int i = 0; i < n; i++) {
        if (write(fd, rec, REC) != REC)
            return 1;
        if (strcmp(mode, "each") == 0 && fsync(fd) != 0)
            return 1;
    }
    if (strcmp(mode, "batch") == 0 && fdatasync(fd) != 0)
        return 1;
    return close(fd) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: records each|batch|osync|save DIR WRITERS RECORDS\n");
        return 2;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "each") && strcmp(mode, "batch") && strcmp(mode, "osync") && strcmp(mode, "save")) {
        fprintf(stderr, "records: unknown mode %s\n", mode);
        return 2;
    }
    int writers = atoi(argv[3]), n = atoi(argv[4]);
    for (int w = 0; w < writers; w++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0)
            _exit(writer(mode, argv[2], n, w));
    }
    int ok = 1, st;
    for (int w = 0; w < writers; w++) {
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            ok = 0;
    }
    return ok ? 0 : 1;
}
