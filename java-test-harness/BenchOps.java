import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;

/**
 * Throughput workload for the benchmarks (make bench): {@code threads} CPU-bound workers repeat one small
 * operation (fill a 64-long array from a xorshift generator, sort it, fold it through a short call chain; a new
 * array every 8 operations), and
 * the main thread measures operations per second over a fixed window that starts after a warm-up.
 *
 * <p>Usage: {@code java BenchOps [warmupSeconds=3] [windowSeconds=5] [threads=2]}. Output, one item per line:
 * <pre>
 * OPS 1234567.8                 operations per wall-clock second in the window, all workers together
 * CPUOPS 617283.9               operations per second of worker CPU time in the window
 * CPU worker_ms=12345 window_worker_ms=9876 window_ms=5000 threads=2
 * </pre>
 * {@code worker_ms} is the workers' thread CPU time over their whole lives (each read by the worker itself just
 * before it ends), {@code window_worker_ms} their CPU time inside the window.
 */
public final class BenchOps {
    static final int BATCH = 256;
    static volatile boolean stop;
    static volatile long sink;

    /** One counter per worker, padded so that workers do not share a cache line. */
    static final class Counter {
        long p0, p1, p2, p3, p4, p5, p6;
        volatile long ops;
        long q0, q1, q2, q3, q4, q5, q6;
        volatile long cpuNanos;
    }

    public static void main(String[] args) throws InterruptedException {
        double warmup = args.length > 0 ? Double.parseDouble(args[0]) : 3.0;
        double window = args.length > 1 ? Double.parseDouble(args[1]) : 5.0;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();

        Counter[] counters = new Counter[threads];
        Thread[] workers = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            Counter c = counters[i] = new Counter();
            long seed = 0x9E3779B97F4A7C15L * (i + 1);
            workers[i] = new Thread(() -> work(c, seed), "bench-worker-" + i);
            workers[i].start();
        }
        Thread.sleep((long) (warmup * 1000));
        long ops0 = total(counters);
        long cpu0 = cpu(mx, workers);
        long t0 = System.nanoTime();
        Thread.sleep((long) (window * 1000));
        long ops1 = total(counters);
        long cpu1 = cpu(mx, workers);
        long t1 = System.nanoTime();
        stop = true;
        long workerNanos = 0;
        for (int i = 0; i < threads; i++) {
            workers[i].join();
            workerNanos += counters[i].cpuNanos;
        }
        double seconds = (t1 - t0) / 1e9;
        System.out.println(String.format(Locale.ROOT, "OPS %.1f", (ops1 - ops0) / seconds));
        System.out.println(String.format(Locale.ROOT, "CPUOPS %.1f", (ops1 - ops0) / ((cpu1 - cpu0) / 1e9)));
        System.out.println(String.format(Locale.ROOT, "CPU worker_ms=%d window_worker_ms=%d window_ms=%d threads=%d",
                workerNanos / 1_000_000, (cpu1 - cpu0) / 1_000_000, (t1 - t0) / 1_000_000, threads));
        System.out.println("checksum " + Long.toHexString(sink));
    }

    static long total(Counter[] counters) {
        long n = 0;
        for (Counter c : counters) {
            n += c.ops;
        }
        return n;
    }

    static long cpu(ThreadMXBean mx, Thread[] workers) {
        long n = 0;
        for (Thread w : workers) {
            n += mx.getThreadCpuTime(w.getId());
        }
        return n;
    }

    static void work(Counter c, long seed) {
        long[] data = new long[64];
        long x = seed | 1;
        long acc = 0;
        long done = 0;
        while (!stop) {
            for (int i = 0; i < BATCH; i++) {
                if ((i & 7) == 0) {
                    data = new long[64]; // a little garbage: young collections happen, as in real programs
                }
                x = fill(data, x);
                Arrays.sort(data);
                acc += fold(data, 0);
            }
            done += BATCH;
            c.ops = done;
        }
        sink += acc;
        c.cpuNanos = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    static long fill(long[] data, long x) {
        for (int i = 0; i < data.length; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            data[i] = x & 0xffff_ffffL;
        }
        return x;
    }

    /** A short call chain (a few frames deep) over the sorted array. */
    static long fold(long[] data, int depth) {
        if (depth < 6) {
            return fold(data, depth + 1) * 31 + depth;
        }
        long h = 0;
        for (long v : data) {
            h = h * 1_000_003L + v;
        }
        return h;
    }
}
