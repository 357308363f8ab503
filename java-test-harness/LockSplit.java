import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lock contention with a known split, for the lock profiler. Two modes:
 *
 * <ul>
 * <li>{@code contended}: {@value #SYNC_THREADS} threads ({@code locksplit-sync-K}) loop on {@code syncSite()}, which
 *     enters {@code synchronized (LOCK_A)} (a plain {@code java.lang.Object}) and holds it for {@value #HOLD_MS} ms
 *     (Thread.sleep); {@value #REENTRANT_THREADS} threads ({@code locksplit-reentrant-K}) loop on
 *     {@code reentrantSite()}, which takes a {@code ReentrantLock} (nonfair) and holds it as long. A lock that is
 *     always held has one holder and all its other threads waiting, so the sync site accumulates about
 *     (4 - 1) / (2 - 1) = 3 times the reentrant site's waiting. Between two acquisitions a thread spins
 *     {@value #GAP_US} us outside the lock, which gives a woken waiter the time to take the lock before the thread
 *     that just released it comes back (otherwise HotSpot's monitors let one thread barge in again and again).</li>
 * <li>{@code none}: one thread ({@code locksplit-solo}) calls the same two sites with nothing to hold and nobody to
 *     contend with; beside it a control, {@code controlSite()}, waits {@value #CONTROL_ROUNDS} times for about
 *     {@value #CONTROL_HOLD_MS} ms on a monitor another thread holds: real contention elsewhere, so an empty
 *     result for the two sites means something.</li>
 * </ul>
 *
 * <p>The truth is measured, not assumed: System.nanoTime right before the acquire and right after it returns, for
 * every acquisition. It is a little more than what a profiler can see: it includes the uncontended attempt, the
 * spinning before the JVM blocks the thread, and the JVMTI callbacks; waits shorter than the profiler's threshold are
 * counted apart ({@code *Short*}), since a profiler with a threshold does not record them.
 *
 * <p>Usage: {@code java LockSplit [seconds=8] [contended|none] [thresholdUs=10]}. Prints at exit:
 * <pre>TRUTH syncWaitNs=... reentrantWaitNs=... syncWaitNsOver=... reentrantWaitNsOver=... syncWaits=...
 *      syncWaitsOver=... reentrantWaits=... reentrantWaitsOver=... syncShortNs=... reentrantShortNs=...
 *      syncMaxNs=... reentrantMaxNs=... controlWaitNs=... controlWaits=... threshold_ns=10000 wall_ms=...</pre>
 * ({@code *Over}: the waits at or above the threshold, which a profiler with that threshold records.)
 */
public final class LockSplit {
    static final int SYNC_THREADS = 4;
    static final int REENTRANT_THREADS = 2;
    static final int HOLD_MS = 2;
    static final int GAP_US = 50;
    static final int CONTROL_ROUNDS = 10;
    static final int CONTROL_HOLD_MS = 20;

    static final Object LOCK_A = new Object();
    static final ReentrantLock LOCK_B = new ReentrantLock();
    static final Object LOCK_C = new Object();

    static volatile long sink;
    static volatile int controlState;

    /** Waits measured on one thread at one site. */
    static final class Waits {
        final long thresholdNs;
        long totalNs;
        long overNs;
        long count;
        long overCount;
        long maxNs;

        Waits(long thresholdNs) {
            this.thresholdNs = thresholdNs;
        }

        void add(long ns) {
            totalNs += ns;
            count++;
            maxNs = Math.max(maxNs, ns);
            if (ns >= thresholdNs) {
                overNs += ns;
                overCount++;
            }
        }

        void addAll(Waits w) {
            totalNs += w.totalNs;
            overNs += w.overNs;
            count += w.count;
            overCount += w.overCount;
            maxNs = Math.max(maxNs, w.maxNs);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 8.0;
        String mode = args.length > 1 ? args[1] : "contended";
        long thresholdNs = (args.length > 2 ? Long.parseLong(args[2]) : 10) * 1000;
        String truth;
        if (mode.equals("contended")) {
            truth = runContended(seconds, thresholdNs);
        } else if (mode.equals("none")) {
            truth = runNone(seconds, thresholdNs);
        } else {
            System.err.println("LockSplit: mode must be contended or none, not " + mode);
            System.exit(2);
            return;
        }
        System.out.println("TRUTH " + truth);
    }

    /** Contended mode for seconds; returns the TRUTH fields (without "TRUTH "). */
    static String runContended(double seconds, long thresholdNs) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        List<Thread> threads = new ArrayList<>();
        List<Waits> sync = new ArrayList<>();
        List<Waits> reentrant = new ArrayList<>();
        for (int i = 0; i < SYNC_THREADS; i++) {
            Waits w = new Waits(thresholdNs);
            sync.add(w);
            threads.add(new Thread(() -> {
                while (System.nanoTime() < end) {
                    syncSite(w, HOLD_MS);
                    gap();
                }
            }, "locksplit-sync-" + i));
        }
        for (int i = 0; i < REENTRANT_THREADS; i++) {
            Waits w = new Waits(thresholdNs);
            reentrant.add(w);
            threads.add(new Thread(() -> {
                while (System.nanoTime() < end) {
                    reentrantSite(w, HOLD_MS);
                    gap();
                }
            }, "locksplit-reentrant-" + i));
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        return format(sum(sync, thresholdNs), sum(reentrant, thresholdNs), new Waits(thresholdNs), thresholdNs,
                System.nanoTime() - start);
    }

    /** None mode: the sites uncontended on one thread, and the control's real contention beside it. */
    static String runNone(double seconds, long thresholdNs) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        Waits sync = new Waits(thresholdNs);
        Waits reentrant = new Waits(thresholdNs);
        Waits control = new Waits(thresholdNs);
        Thread solo = new Thread(() -> {
            long x = 1;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) {
                    syncSite(sync, 0);
                    reentrantSite(reentrant, 0);
                    x = x * 6364136223846793005L + i;
                }
            }
            sink = x;
        }, "locksplit-solo");
        Thread holder = new Thread(() -> {
            for (int r = 0; r < CONTROL_ROUNDS; r++) {
                synchronized (LOCK_C) {
                    controlState = 1; // the waiter may go now
                    sleepMs(CONTROL_HOLD_MS);
                }
                while (controlState != 2) { // the waiter got through
                    Thread.onSpinWait();
                }
            }
        }, "locksplit-control-holder");
        Thread waiter = new Thread(() -> {
            for (int r = 0; r < CONTROL_ROUNDS; r++) {
                while (controlState != 1) {
                    Thread.onSpinWait();
                }
                controlSite(control);
                controlState = 2; // the holder sets 1 again once it holds the monitor again
            }
        }, "locksplit-control-waiter");
        solo.start();
        holder.start();
        waiter.start();
        solo.join();
        holder.join();
        waiter.join();
        return format(sync, reentrant, control, thresholdNs, System.nanoTime() - start);
    }

    static void syncSite(Waits w, int holdMs) {
        long t0 = System.nanoTime();
        synchronized (LOCK_A) {
            w.add(System.nanoTime() - t0);
            sleepMs(holdMs);
        }
    }

    static void reentrantSite(Waits w, int holdMs) {
        long t0 = System.nanoTime();
        LOCK_B.lock();
        try {
            w.add(System.nanoTime() - t0);
            sleepMs(holdMs);
        } finally {
            LOCK_B.unlock();
        }
    }

    static void controlSite(Waits w) {
        long t0 = System.nanoTime();
        synchronized (LOCK_C) {
            w.add(System.nanoTime() - t0);
        }
    }

    static void sleepMs(int ms) {
        if (ms <= 0) {
            return;
        }
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Spins GAP_US outside any lock. */
    static void gap() {
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < GAP_US * 1000L) {
            Thread.onSpinWait();
        }
    }

    static Waits sum(List<Waits> ws, long thresholdNs) {
        Waits all = new Waits(thresholdNs);
        ws.forEach(all::addAll);
        return all;
    }

    static String format(Waits sync, Waits reentrant, Waits control, long thresholdNs, long wallNs) {
        return String.format(Locale.ROOT, "syncWaitNs=%d reentrantWaitNs=%d syncWaitNsOver=%d reentrantWaitNsOver=%d"
                        + " syncWaits=%d syncWaitsOver=%d reentrantWaits=%d reentrantWaitsOver=%d syncShortNs=%d"
                        + " reentrantShortNs=%d syncMaxNs=%d reentrantMaxNs=%d controlWaitNs=%d controlWaits=%d"
                        + " controlWaitNsOver=%d threshold_ns=%d wall_ms=%d",
                sync.totalNs, reentrant.totalNs, sync.overNs, reentrant.overNs, sync.count, sync.overCount,
                reentrant.count, reentrant.overCount, sync.totalNs - sync.overNs, reentrant.totalNs - reentrant.overNs,
                sync.maxNs, reentrant.maxNs, control.totalNs, control.count, control.overNs, thresholdNs,
                wallNs / 1_000_000);
    }
}
