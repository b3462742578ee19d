// HotLock.java: THREADS threads each apply ITERS updates to shared state under ONE lock, each
// update holding the lock for about 60 us of busy work (System.nanoTime through the vDSO: no
// syscalls inside the critical section), so the threads (more than the cores) contend.
//   synchronized: a synchronized (LOCK) block (HotSpot's object monitor)
//   reentrant:    a java.util.concurrent.locks.ReentrantLock (AQS, LockSupport.park)
//   sharded:      GOOD: a lock per thread, merged once at the end
// usage: java HotLock MODE [THREADS] [ITERS]      (bounded: ends after THREADS*ITERS updates)
import java.util.concurrent.locks.ReentrantLock;

public class HotLock {
    static final Object LOCK = new Object();
    static final ReentrantLock RLOCK = new ReentrantLock();
    static long shared;

    static long work(long x) {
        long end = System.nanoTime() + 60_000;
        while (System.nanoTime() < end) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] a) throws Exception {
        String mode = a[0];
        int threads = a.length > 1 ? Integer.parseInt(a[1]) : 8;
        int iters = a.length > 2 ? Integer.parseInt(a[2]) : 300;
        long[] shard = new long[threads * 16];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                for (int i = 0; i < iters; i++) {
                    switch (mode) {
                        case "synchronized":
                            synchronized (LOCK) { shared = work(shared); }
                            break;
                        case "reentrant":
                            RLOCK.lock();
                            try { shared = work(shared); } finally { RLOCK.unlock(); }
                            break;
                        case "sharded":
                            shard[me * 16] = work(shard[me * 16]);
                            break;
                        default:
                            throw new IllegalArgumentException(mode);
                    }
                }
            }, "worker-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        long sum = shared;
        for (int t = 0; t < threads; t++) sum += shard[t * 16];
        System.out.println(sum != 42 ? "done" : "");
    }
}
