import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Splits CPU between three methods, burnA, burnB and burnC, in a fixed ratio of work units (5:3:2), and measures
 * its own truth: the thread CPU time spent inside each method, summed over all worker threads.
 *
 * <p>Every call of every burn method is timed with {@link ThreadMXBean#getCurrentThreadCpuTime()}, from the very
 * first call on, so the truth covers the same period the profiler samples (interpreted, warming up and compiled
 * code alike). Each round scales its three calls by the same random factor, which keeps the split fixed while
 * breaking any phase lock between the rounds and a periodic sampling timer.
 *
 * <p>At exit it prints one machine-readable line:
 * <pre>TRUTH burnA=0.5012 burnB=0.2998 burnC=0.1990 cpu_ms=12034 threads=2 rounds=1187 checksum=...</pre>
 *
 * <p>Usage: {@code java CpuSplit [seconds=5] [threads=2] [minCpuSeconds=0] [duty=1]}. The workers stop once
 * {@code seconds} of wall time have passed and the burn methods have used at least {@code minCpuSeconds} of CPU in
 * total (so a busy machine still yields enough samples), but never later than three times {@code seconds}. With a
 * {@code duty} below 1 each worker rests after each round for as long as makes its rounds that share of its time (a
 * target that only has to be sampled, not to fill a core): CPU samples and the truth keep the same split.
 */
public final class CpuSplit {
    static final int UNITS_A = 5;
    static final int UNITS_B = 3;
    static final int UNITS_C = 2;
    /**
     * Loop iterations in one work unit of each method, calibrated so that a unit costs about the same CPU time
     * (roughly 0.2 ms once compiled) in all three: the CPU split then comes out close to 50/30/20.
     */
    static final int ITERATIONS_A = 250_000;
    static final int ITERATIONS_B = 163_000;
    static final int ITERATIONS_C = 122_000;

    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final LongAdder cpuA = new LongAdder();
    static final LongAdder cpuB = new LongAdder();
    static final LongAdder cpuC = new LongAdder();
    static final AtomicLong burnCpuTotal = new AtomicLong();
    static final LongAdder rounds = new LongAdder();
    static final AtomicLong checksum = new AtomicLong();

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5.0;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        double minCpuSeconds = args.length > 2 ? Double.parseDouble(args[2]) : 0.0;
        double duty = args.length > 3 ? Double.parseDouble(args[3]) : 1.0;
        if (!(duty > 0 && duty <= 1)) {
            System.err.println("CpuSplit: duty must be in (0, 1]: " + duty);
            System.exit(2);
        }
        if (!MX.isCurrentThreadCpuTimeSupported()) {
            System.err.println("CpuSplit: thread CPU time is not supported by this JVM");
            System.exit(2);
        }
        MX.setThreadCpuTimeEnabled(true);

        long start = System.nanoTime();
        long softEnd = start + (long) (seconds * 1e9);
        long hardEnd = start + (long) (3 * seconds * 1e9);
        long minCpuNanos = (long) (minCpuSeconds * 1e9);

        Thread[] workers = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            workers[i] = new Thread(() -> work(softEnd, hardEnd, minCpuNanos, duty), "cpusplit-" + i);
            workers[i].start();
        }
        for (Thread w : workers) {
            w.join();
        }

        long a = cpuA.sum(), b = cpuB.sum(), c = cpuC.sum();
        double total = a + b + c;
        System.out.println(String.format(Locale.ROOT,
                "TRUTH burnA=%.4f burnB=%.4f burnC=%.4f cpu_ms=%d threads=%d rounds=%d wall_ms=%d checksum=%x",
                a / total, b / total, c / total, Math.round(total / 1e6), threads, rounds.sum(),
                (System.nanoTime() - start) / 1_000_000, checksum.get()));
    }

    /** One worker: rounds of burnA, burnB, burnC, each call timed in thread CPU time, resting after each to duty. */
    static void work(long softEnd, long hardEnd, long minCpuNanos, double duty) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long seed = random.nextLong() | 1;
        while (true) {
            double scale = 0.5 + random.nextDouble(); // same factor for all three: the split stays 5:3:2

            long t0 = MX.getCurrentThreadCpuTime();
            seed = burnA((int) (UNITS_A * ITERATIONS_A * scale), seed);
            long t1 = MX.getCurrentThreadCpuTime();
            seed = burnB((int) (UNITS_B * ITERATIONS_B * scale), seed);
            long t2 = MX.getCurrentThreadCpuTime();
            seed = burnC((int) (UNITS_C * ITERATIONS_C * scale), seed);
            long t3 = MX.getCurrentThreadCpuTime();

            cpuA.add(t1 - t0);
            cpuB.add(t2 - t1);
            cpuC.add(t3 - t2);
            long used = burnCpuTotal.addAndGet(t3 - t0);
            rounds.increment();

            long now = System.nanoTime();
            if (now >= hardEnd || (now >= softEnd && used >= minCpuNanos)) {
                break;
            }
            if (duty < 1) {
                java.util.concurrent.locks.LockSupport.parkNanos((long) ((t3 - t0) * (1 / duty - 1)));
            }
        }
        checksum.accumulateAndGet(seed, (x, y) -> x ^ y);
    }

    /** xorshift64 with an additive Weyl sequence: each step depends on the previous one. */
    static long burnA(int iterations, long seed) {
        long x = seed;
        long weyl = 0;
        for (int i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            weyl += 0x9E3779B97F4A7C15L;
            x += weyl ^ i;
        }
        return x;
    }

    /** 64-bit linear congruential generator with an xor-rotate output step. */
    static long burnB(int iterations, long seed) {
        long x = seed;
        long acc = 0;
        for (int i = 0; i < iterations; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            acc ^= Long.rotateLeft(x, (int) (x >>> 58)) + i;
            x ^= acc >>> 29;
        }
        return x ^ acc;
    }

    /** A murmur3-style finaliser folded over the loop counter. */
    static long burnC(int iterations, long seed) {
        long h = seed;
        for (int i = 0; i < iterations; i++) {
            long k = h + i;
            k ^= k >>> 33;
            k *= 0xff51afd7ed558ccdL;
            k ^= k >>> 33;
            k *= 0xc4ceb9fe1a85ec53L;
            k ^= k >>> 33;
            h = k ^ (h >>> 1);
        }
        return h;
    }
}
