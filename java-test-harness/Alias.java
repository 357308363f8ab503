import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A workload built to alias with a sampler of fixed period: each thread runs a, b, c (a tenth of the rotation's CPU
 * each) and d (seven tenths) in a fixed rotation that repeats every {@code rotationUs} of CPU (10 ms, the default
 * interval, unless told). A sampler firing at exact multiples of the rotation sees the same phase every time. Each
 * method spins until the thread's CPU clock has advanced by its share, and the time each really took is summed, so
 * the truth is measured, not assumed.
 *
 * <p>Usage: {@code java Alias [seconds=30] [threads=2] [minCpuSeconds=0] [rotationUs=10000]}: each thread stops once
 * {@code seconds} of wall time have passed and it used its part of {@code minCpuSeconds} (so a busy machine
 * lengthens the run rather than thins its samples), at the latest after six times {@code seconds}; prints
 * {@code TRUTH a=.. b=.. c=.. d=..} (shares of the four methods' CPU time) and {@code ALIAS_DONE}.
 */
public final class Alias {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long sink;
    /** A tenth of the rotation, in ns of CPU. */
    static long tenth;

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 30;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        double minCpuSeconds = args.length > 2 ? Double.parseDouble(args[2]) : 0;
        tenth = (args.length > 3 ? Long.parseLong(args[3]) : 10_000) * 100;
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long hardEnd = start + (long) (6 * seconds * 1e9);
        long minCpuPerThread = (long) (minCpuSeconds * 1e9 / threads);
        long[][] spent = new long[threads][4];
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final long[] mine = spent[t];
            Thread th = new Thread(() -> {
                long used = 0;
                for (long now = start; now < hardEnd && (now < end || used < minCpuPerThread);
                        now = System.nanoTime()) {
                    long a = a(), b = b(), c = c(), d = d();
                    mine[0] += a;
                    mine[1] += b;
                    mine[2] += c;
                    mine[3] += d;
                    used += a + b + c + d;
                }
            }, "alias-" + t);
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
        long[] sum = new long[4];
        long total = 0;
        for (long[] s : spent) {
            for (int i = 0; i < 4; i++) {
                sum[i] += s[i];
                total += s[i];
            }
        }
        System.out.printf(Locale.ROOT, "TRUTH a=%.4f b=%.4f c=%.4f d=%.4f cpu_ms=%d%n", sum[0] / (double) total,
                sum[1] / (double) total, sum[2] / (double) total, sum[3] / (double) total, total / 1_000_000);
        System.out.println("ALIAS_DONE");
    }

    static long a() {
        return spin(tenth);
    }

    static long b() {
        return spin(tenth);
    }

    static long c() {
        return spin(tenth);
    }

    static long d() {
        return spin(7 * tenth);
    }

    /** Burn ns of this thread's CPU time; returns the CPU time really used. */
    static long spin(long ns) {
        long t0 = MX.getCurrentThreadCpuTime();
        long now = t0;
        long x = sink;
        while (now - t0 < ns) {
            // a few microseconds between clock reads: a part of 100 us overshoots by about 3 us
            for (int i = 0; i < 500; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            now = MX.getCurrentThreadCpuTime();
        }
        sink = x;
        return now - t0;
    }
}
