import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * Deep-stack workload for the benchmarks (make bench): {@code threads} workers recurse {@code depth} frames down
 * through {@link #down} and burn CPU at the bottom for a few milliseconds before they unwind and do it again, so
 * almost every sample sees a stack about {@code depth} + 4 frames deep. Used to measure the sampler's handler
 * cost against stack depth.
 *
 * <p>Usage: {@code java BenchDeep [seconds=5] [depth=200] [threads=1]}. Prints {@code OPS N} (bottom visits per
 * second), {@code VISITS N}, {@code CPU worker_ms=M} (the workers' own thread CPU time, each read by the worker
 * itself as it ends) and {@code DEEP depth=D threads=T}.
 */
public final class BenchDeep {
    static volatile boolean stop;
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5.0;
        int depth = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        long[] visits = new long[threads];
        long[] cpuNanos = new long[threads];
        Thread[] workers = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            int slot = i;
            workers[i] = new Thread(() -> {
                long x = 0x2545F4914F6CDD1DL + slot;
                long n = 0;
                while (!stop) {
                    x = down(depth, x);
                    n++;
                }
                visits[slot] = n;
                cpuNanos[slot] = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
                sink += x;
            }, "deep-worker-" + i);
            workers[i].start();
        }
        long t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000));
        stop = true;
        long total = 0;
        long workerNanos = 0;
        for (int i = 0; i < threads; i++) {
            workers[i].join();
            total += visits[i];
            workerNanos += cpuNanos[i];
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        System.out.println(String.format(Locale.ROOT, "OPS %.1f", total / elapsed));
        System.out.println("VISITS " + total);
        System.out.println(String.format(Locale.ROOT, "CPU worker_ms=%.3f", workerNanos / 1e6));
        System.out.println("DEEP depth=" + depth + " threads=" + threads + " checksum=" + Long.toHexString(sink));
    }

    /** One frame per level; the bottom burns CPU. */
    static long down(int depth, long x) {
        if (depth <= 1) {
            return bottom(x);
        }
        return down(depth - 1, x) + 1;
    }

    /** About 2 ms of xorshift once compiled. */
    static long bottom(long x) {
        for (int i = 0; i < 2_000_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }
}
