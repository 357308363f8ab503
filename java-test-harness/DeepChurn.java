import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Deep stacks and thread churn for measuring the profiler's own cost (bench/agent_cost.sh): {@code workers} threads
 * recurse 1000-3000 frames (a random depth each time) through two methods in a fixed per-thread pattern, burn CPU at
 * the bottom, unwind and start again; meanwhile short-lived threads are started in waves of 4 (each recursing ~1000
 * frames for a few ms), so threads are attached and released all the time. With {@code distinct}, the pattern is
 * random on every descent too, so nearly every sample is a stack never seen before (the worst case for the
 * profiler's stores and recording size).
 *
 * <p>Usage: {@code java DeepChurn [seconds=120] [workers=2] [distinct]}. Prints
 * {@code DEEPCHURN_DONE visits=N threads=M} at the end of the measured run (the JVM exits right after: the time from
 * that line to exit is the exit delay).
 */
public final class DeepChurn {
    static volatile long sink;
    static volatile boolean stop;

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 120;
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        boolean distinct = args.length > 2 && args[2].equals("distinct");
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long[] visits = new long[workers];
        List<Thread> ts = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            final int id = w;
            Thread t = new Thread(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                while (!stop) {
                    sink += a(1000 + r.nextInt(2001), distinct ? r.nextLong() : 0x5DEECE66DL * (id + 1));
                    visits[id]++;
                }
            }, "deep-worker-" + w);
            t.start();
            ts.add(t);
        }
        long started = 0;
        while (System.nanoTime() < end) {
            List<Thread> wave = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Thread t = new Thread(() -> sink += a(1000, 0xB504F333L), "churn-" + started);
                t.start();
                wave.add(t);
                started++;
            }
            for (Thread t : wave) {
                t.join();
            }
            Thread.sleep(20);
        }
        stop = true;
        for (Thread t : ts) {
            t.join();
        }
        long v = 0;
        for (long x : visits) {
            v += x;
        }
        System.out.println("DEEPCHURN_DONE visits=" + v + " threads=" + started);
    }

    static long a(int depth, long bits) {
        if (depth == 0) {
            return burn(bits);
        }
        return ((bits & 1) == 0 ? a(depth - 1, Long.rotateRight(bits, 1)) : b(depth - 1, Long.rotateRight(bits, 1))) + 1;
    }

    static long b(int depth, long bits) {
        if (depth == 0) {
            return burn(bits);
        }
        return ((bits & 1) == 0 ? a(depth - 1, Long.rotateRight(bits, 1)) : b(depth - 1, Long.rotateRight(bits, 1))) + 2;
    }

    static long burn(long x) {
        for (int i = 0; i < 200_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }
}
