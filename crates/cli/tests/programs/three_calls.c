/* N rounds of three different cheap syscalls: a sequence the kernel cannot coalesce (no
 * run of one call or of a pair), so every call is a record. Used to overflow a deliberately
 * tiny eBPF ring buffer. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    for (long i = 0; i < n; i++) {
        syscall(SYS_getpid);
        syscall(SYS_getppid);
        syscall(SYS_gettid);
    }
    return 0;
}
