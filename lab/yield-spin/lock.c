/* lock.c: THREADS threads each take a shared lock ITERS times; the holder does something slow
 * under it (a 500 us nanosleep, standing in for I/O, a page fault or a preemption while holding
 * the lock), then a little arithmetic outside it. The variants differ only in how a thread
 * waits for the lock.
 *
 *   spin      BAD   test-and-set spinlock that calls sched_yield() after every failed attempt
 *                   (the classic user-space spinlock of many C/C++ code bases): the waiters
 *                   yield to each other for as long as the lock is held
 *   mutex     GOOD  pthread_mutex_t: waiters sleep in futex() until the holder wakes one
 *   adaptive  NEAR  spin, yield, then sleep: up to 2,000 pause-and-try turns in user space,
 *                   then up to 3 sched_yield() and a try after each, then pthread_mutex_lock()
 *                   (the strategy of Go's runtime lock and of WebKit's parking locks): a few
 *                   yields per contended acquisition, each run ended by a futex() wait
 *
 * usage: lock MODE THREADS ITERS
 * Prints the counter (THREADS*ITERS), wall time, user and system CPU time and context switches.
 * Bounded: alarm(60).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int mode; /* 0 spin, 1 mutex, 2 adaptive */
static long iters;
static volatile int spin;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t gate; /* all threads start together */
static volatile unsigned long counter, own;

static void lock(void) {
    if (mode == 1) {
        pthread_mutex_lock(&mu);
        return;
    }
    if (mode == 2) {
        for (int i = 0; i < 2000; i++) {
            if (pthread_mutex_trylock(&mu) == 0)
                return;
            __builtin_ia32_pause();
        }
        for (int i = 0; i < 3; i++) {
            sched_yield();
            if (pthread_mutex_trylock(&mu) == 0)
                return;
        }
        pthread_mutex_lock(&mu);
        return;
    }
    while (__atomic_test_and_set(&spin, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void unlock(void) {
    if (mode == 0)
        __atomic_clear(&spin, __ATOMIC_RELEASE);
    else
        pthread_mutex_unlock(&mu);
}

static void *worker(void *arg) {
    (void)arg;
    pthread_barrier_wait(&gate);
    for (long i = 0; i < iters; i++) {
        lock();
        counter++;
        /* something slow under the lock */
        struct timespec hold = {0, 500 * 1000};
        nanosleep(&hold, NULL);
        unlock();
        /* work of its own */
        unsigned long y = i;
        for (int k = 0; k < 2000; k++)
            y = y * 6364136223846793005UL + 1442695040888963407UL;
        own += y;
    }
    return NULL;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: lock spin|mutex|adaptive THREADS ITERS\n");
        return 2;
    }
    if (!strcmp(argv[1], "spin"))
        mode = 0;
    else if (!strcmp(argv[1], "mutex"))
        mode = 1;
    else if (!strcmp(argv[1], "adaptive"))
        mode = 2;
    else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    int threads = atoi(argv[2]);
    iters = atol(argv[3]);
    if (threads < 1 || threads > 256 || iters < 1) {
        fprintf(stderr, "bad THREADS or ITERS\n");
        return 2;
    }
    alarm(60);
    pthread_t t[256];
    pthread_barrier_init(&gate, NULL, threads);
    double t0 = now();
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL)) {
            perror("pthread_create");
            return 1;
        }
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    double wall = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    fprintf(stderr, "%s: counter %lu (want %ld), wall %.3f s, user %.3f s, sys %.3f s, ctxsw %ld+%ld\n", argv[1], counter,
            threads * iters, wall, user, sys, ru.ru_nvcsw, ru.ru_nivcsw);
    return counter == (unsigned long)(threads * iters) ? 0 : 1;
}
