/* fd-close-sweep lab: a parent that spawns a child which, before exec'ing /bin/true, closes
 * the fds it might have inherited in one of several ways.
 *
 *   sweep MODE NOFILE SPAWNS
 *
 * MODE: close   BAD   close(fd) for every fd from 3 up to the nofile limit (most fail: EBADF)
 *       fcntl   BAD   fcntl(fd, F_GETFD) for every fd up to the limit, close() the open ones
 *       range   GOOD  close_range(3, ~0U, 0): one call (Linux >= 5.9)
 *       procfd  GOOD  close only the fds listed in /proc/self/fd
 *       few     NEAR  close(fd) for fds 3..63 only (a program closing what it knows it opened)
 * NOFILE: the soft RLIMIT_NOFILE to set first (the hard limit is raised too when permitted).
 * SPAWNS: children to start one after another. Everything ends by itself; alarm(60) bounds it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_all(const char *mode, long limit) {
    if (!strcmp(mode, "close")) {
        for (long fd = 3; fd < limit; fd++) close((int)fd);
    } else if (!strcmp(mode, "fcntl")) {
        for (long fd = 3; fd < limit; fd++)
            if (fcntl((int)fd, F_GETFD) != -1) close((int)fd);
    } else if (!strcmp(mode, "range")) {
        syscall(SYS_close_range, 3U, ~0U, 0U);
    } else if (!strcmp(mode, "procfd")) {
        DIR *d = opendir("/proc/self/fd");
        if (!d) return;
        int own = dirfd(d);
        int fds[1024], n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 1024) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] != '.' && fd >= 3 && fd != own) fds[n++] = fd;
        }
        closedir(d);
        for (int i = 0; i < n; i++) close(fds[i]);
    } else if (!strcmp(mode, "few")) {
        for (int fd = 3; fd < 64; fd++) close(fd);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: sweep close|fcntl|range|procfd|few NOFILE SPAWNS\n");
        return 2;
    }
    alarm(60);
    const char *mode = argv[1];
    long nofile = atol(argv[2]);
    int spawns = atoi(argv[3]);
    struct rlimit rl = {(rlim_t)nofile, (rlim_t)nofile};
    struct rlimit cur;
    getrlimit(RLIMIT_NOFILE, &cur);
    if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max > rl.rlim_max) rl.rlim_max = cur.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        rl.rlim_cur = cur.rlim_max < (rlim_t)nofile ? cur.rlim_max : (rlim_t)nofile;
        rl.rlim_max = cur.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &cur);
    /* a few fds the children inherit, as a real parent has (a log, a pipe) */
    int log = open("/dev/null", O_WRONLY);
    int p[2];
    if (pipe(p) != 0) return 1;
    for (int i = 0; i < spawns; i++) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            close_all(mode, (long)cur.rlim_cur);
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
    }
    close(log);
    close(p[0]);
    close(p[1]);
    return 0;
}
