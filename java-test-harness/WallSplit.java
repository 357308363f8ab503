import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One worker thread, {@code wallsplit-worker}, that spends about 90% of its wall time asleep and 10% computing: each
 * round sleeps in {@code sleepPart()} (Thread.sleep of 45 ms on average) and then spins in {@code computePart()} for
 * a ninth of the time the sleep really took (5 ms on average), both timed with System.nanoTime. Each round scales
 * both by the same random factor (0.5..1.5), which keeps the split near 90/10 while breaking any phase lock between
 * the rounds and a sampler of fixed period (a fixed 50 ms round would be a multiple of a 10 ms interval).
 *
 * <p>The truth is measured, not assumed: the wall time inside each method, summed over all rounds from the first
 * on. A wall-clock profile of the worker must show sleepPart at about that share; a CPU profile must show almost
 * only computePart (a sleeping thread uses no CPU).
 *
 * <p>With {@code idleThreads} > 0, that many extra threads ({@code wallsplit-idle-K}) are started first and block
 * on a latch in {@code idleWait()} until the worker is done: threads a wall-clock sampler sees in every sample
 * although they never run (the idle-thread overhead benchmark uses many of them).
 *
 * <p>With {@code workers} > 1, that many workers run the same rounds side by side ({@code wallsplit-worker},
 * {@code wallsplit-worker-1}, ...), each with its own random round lengths; the truth then adds up their times.
 *
 * <p>Usage: {@code java WallSplit [seconds=10] [idleThreads=0] [meanSleepMs=45] [workers=1]}. Prints at exit:
 * <pre>TRUTH sleepPart=0.9003 computePart=0.0997 sleep_ms=8976 compute_ms=994 other_ms=3 rounds=199 wall_ms=9973
 *      idle_threads=0 compute_steps=...</pre>
 * The shares are of the time in the two methods together; other_ms is the worker's time in neither. cpu_compute_ms
 * and cpu_ms are the workers' CPU time in computePart and in all (a cpu profile's truth).
 */
public final class WallSplit {
    static volatile long sink;

    /** The workers' CPU time (the truth of a cpu profile's shares). */
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10.0;
        int idleThreads = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        int meanSleepMs = args.length > 2 ? Integer.parseInt(args[2]) : 45;
        int workers = args.length > 3 ? Integer.parseInt(args[3]) : 1;

        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch idleStarted = new CountDownLatch(idleThreads);
        Thread[] idle = new Thread[idleThreads];
        for (int i = 0; i < idleThreads; i++) {
            idle[i] = new Thread(() -> idleWait(idleStarted, release), "wallsplit-idle-" + i);
            idle[i].start();
        }
        idleStarted.await();

        long[][] each = new long[workers][6]; // per worker: sleep ns, compute ns, rounds, compute steps, CPU ns in
                                              // computePart, the worker's CPU ns
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        Thread[] worker = new Thread[workers];
        for (int i = 0; i < workers; i++) {
            long[] mine = each[i];
            worker[i] = new Thread(() -> work(end, meanSleepMs, mine), i == 0 ? "wallsplit-worker"
                    : "wallsplit-worker-" + i);
            worker[i].start();
        }
        long[] spent = new long[6];
        for (int i = 0; i < workers; i++) {
            worker[i].join();
            for (int k = 0; k < 6; k++) {
                spent[k] += each[i][k];
            }
        }
        long wall = System.nanoTime() - start;
        release.countDown();
        for (Thread t : idle) {
            t.join();
        }

        double both = spent[0] + spent[1];
        System.out.println(String.format(Locale.ROOT,
                "TRUTH sleepPart=%.4f computePart=%.4f sleep_ms=%d compute_ms=%d other_ms=%d rounds=%d wall_ms=%d"
                        + " idle_threads=%d compute_steps=%d workers=%d checksum=%x cpu_compute_ms=%.1f cpu_ms=%.1f",
                spent[0] / both, spent[1] / both, spent[0] / 1_000_000, spent[1] / 1_000_000,
                Math.max(0, wall * workers - spent[0] - spent[1]) / 1_000_000, spent[2], wall / 1_000_000,
                idleThreads, spent[3], workers, sink, spent[4] / 1e6, spent[5] / 1e6));
    }

    /** The worker: rounds of sleepPart then computePart until the end, each call timed in wall time. */
    static void work(long end, int meanSleepMs, long[] spent) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long sleepNs = 0;
        long computeNs = 0;
        long rounds = 0;
        long computeCpuNs = 0;
        long seed = 0x9E3779B97F4A7C15L;
        long cpuStart = MX.getCurrentThreadCpuTime();
        while (System.nanoTime() < end) {
            double scale = 0.5 + random.nextDouble();
            long sleepMs = Math.max(1, Math.round(meanSleepMs * scale));
            long t0 = System.nanoTime();
            sleepPart(sleepMs);
            long t1 = System.nanoTime();
            // A ninth of the sleep as it really was (Thread.sleep overshoots a little): 90/10 of wall time.
            long c1 = MX.getCurrentThreadCpuTime();
            seed = computePart((t1 - t0) / 9, seed, spent);
            long t2 = System.nanoTime();
            computeCpuNs += MX.getCurrentThreadCpuTime() - c1;
            sleepNs += t1 - t0;
            computeNs += t2 - t1;
            rounds++;
        }
        sink = seed;
        spent[0] = sleepNs;
        spent[1] = computeNs;
        spent[2] = rounds;
        spent[4] = computeCpuNs;
        spent[5] = MX.getCurrentThreadCpuTime() - cpuStart;
    }

    static void sleepPart(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Spins for ns of wall time: xorshift steps, the clock read every 1000 steps (counted in spent[3]); allocates
     *  nothing. */
    static long computePart(long ns, long seed, long[] spent) {
        long t0 = System.nanoTime();
        long x = seed;
        do {
            for (int i = 0; i < 1000; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            spent[3] += 1000;
        } while (System.nanoTime() - t0 < ns);
        return x;
    }

    static void idleWait(CountDownLatch started, CountDownLatch release) {
        started.countDown();
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
