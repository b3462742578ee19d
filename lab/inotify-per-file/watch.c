/* watch.c: a program that wants to hear about changes under a directory tree, watching it the
 * wasteful way and the way inotify is meant to be used. Bounded: alarm(60), one walk.
 *
 *   watch per-file DIR    BAD: a watch on every file and every directory of the tree
 *   watch onlydir DIR     BAD: every entry offered to inotify_add_watch with IN_ONLYDIR (files
 *                         fail with ENOTDIR): each still costs a path lookup (powerline#581)
 *   watch per-dir DIR     GOOD: a watch on each directory only (a directory's watch reports
 *                         the changes of the files in it)
 *   watch few DIR         NEAR: an editor watching the 20 files it has open
 *   watch bench DIR       no tracing: us per inotify_add_watch on the tree's files, natively
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MASK (IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)

static int ino;
static const char *mode;
static long watches, failed, files_left = 20;
static char *paths[100000];
static long npaths;

static void walk(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    if (strcmp(mode, "few") && strcmp(mode, "bench")) {
        if (inotify_add_watch(ino, dir, MASK | (strcmp(mode, "onlydir") ? 0 : IN_ONLYDIR)) >= 0) watches++;
    }
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR) {
            walk(p);
        } else if (!strcmp(mode, "per-file")) {
            if (inotify_add_watch(ino, p, MASK) >= 0) watches++; else failed++;
        } else if (!strcmp(mode, "onlydir")) {
            if (inotify_add_watch(ino, p, MASK | IN_ONLYDIR | IN_DONT_FOLLOW) >= 0) watches++; else failed++;
        } else if (!strcmp(mode, "few") && files_left > 0) {
            files_left--;
            if (inotify_add_watch(ino, p, IN_MODIFY | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF) >= 0) watches++;
        } else if (!strcmp(mode, "bench") && npaths < 100000) {
            paths[npaths++] = strdup(p);
        }
    }
    closedir(d);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: watch MODE DIR\n"); return 2; }
    alarm(60);
    mode = argv[1];
    ino = inotify_init1(IN_CLOEXEC);
    if (ino < 0) { perror("inotify_init1"); return 1; }
    walk(argv[2]);
    if (!strcmp(mode, "bench")) {
        /* each file watched, then the watches dropped (closing the instance), five times */
        double best_add = 1e9, best_onlydir = 1e9, best_stat = 1e9;
        struct stat st;
        for (int round = 0; round < 5; round++) {
            double a = now();
            for (long i = 0; i < npaths; i++) inotify_add_watch(ino, paths[i], MASK);
            double t = (now() - a) / npaths;
            if (t < best_add) best_add = t;
            close(ino);
            ino = inotify_init1(IN_CLOEXEC);
            a = now();
            for (long i = 0; i < npaths; i++) inotify_add_watch(ino, paths[i], MASK | IN_ONLYDIR);
            t = (now() - a) / npaths;
            if (t < best_onlydir) best_onlydir = t;
            a = now();
            for (long i = 0; i < npaths; i++) lstat(paths[i], &st);
            t = (now() - a) / npaths;
            if (t < best_stat) best_stat = t;
        }
        printf("%ld files: inotify_add_watch %.2f us per file (watch made), %.2f us with IN_ONLYDIR (ENOTDIR), lstat %.2f us\n",
               npaths, best_add * 1e6, best_onlydir * 1e6, best_stat * 1e6);
        return 0;
    }
    printf("%ld watches, %ld failed\n", watches, failed);
    return 0;
}
