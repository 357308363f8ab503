import java.util.Locale;

/**
 * The cost of starting a platform thread, for the thread-start tracing of pprof THREADCREATE tasks: {@code rounds}
 * rounds, each starting {@code batch} threads that end at once and joining them, {@code depth} frames below main (the
 * stack a wrapper of Thread.start0 records). The first round warms up and is not counted.
 *
 * <p>Usage: {@code java ThreadStarts [rounds=20] [batch=500] [depth=50]}. Prints
 * <pre>STARTS starts=... us_per_start=...</pre>
 */
public final class ThreadStarts {
    public static void main(String[] args) throws InterruptedException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        int depth = args.length > 2 ? Integer.parseInt(args[2]) : 50;
        startAt(depth, 1, batch); // warm-up
        long t0 = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            startAt(depth, 1, batch);
        }
        long ns = System.nanoTime() - t0;
        System.out.println(String.format(Locale.ROOT, "STARTS starts=%d us_per_start=%.2f", (long) rounds * batch,
                ns / 1e3 / ((long) rounds * batch)));
    }

    /** Recurses to depth, then starts and joins batch threads. */
    static void startAt(int depth, int level, int batch) throws InterruptedException {
        if (level < depth) {
            startAt(depth, level + 1, batch);
            return;
        }
        Thread[] ts = new Thread[batch];
        for (int i = 0; i < batch; i++) {
            ts[i] = new Thread(() -> { });
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
    }
}
