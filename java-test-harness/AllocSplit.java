import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * Allocation with a known split, for the allocation profiler. Two modes, on one worker thread
 * ({@code allocsplit-worker}):
 *
 * <ul>
 * <li>{@code split}: each round calls {@code allocBig()}, which allocates {@value #BIG_PER_CALL} {@code long[512]}
 *     (4112 bytes each with 16-byte array headers), and {@code allocSmall()}, which allocates {@value #SMALL_PER_CALL}
 *     {@link Small} objects (32 bytes each with 12-byte object headers): about 3:1 in bytes, with objects of very
 *     different sizes (a sampler that counted objects instead of bytes, or weighed a sample by the size of the
 *     object that happened to be sampled, would be far off).</li>
 * <li>{@code none}: each round calls {@code computeOnly()}, about 2 ms of arithmetic that allocates nothing, then
 *     {@code allocElsewhere()}, which allocates 64 {@code byte[8192]} (about 0.5 MB, so the pace, not the
 *     computing, sets the rate): the hot method must have no allocation
 *     sample, while the samples of allocElsewhere show the profiler was working.</li>
 * </ul>
 *
 * <p>The truth is measured, not assumed: every call of every site is bracketed by
 * {@code com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes()} (exact to the byte in HotSpot: it adds the
 * current TLAB's used bytes), from the first call on. Every object is stored into a ring of 256 references, so
 * escape analysis cannot remove the allocations, and stays reachable only briefly. The worker is paced to
 * {@code mbPerSecond} of allocation (sleeping 1 ms when ahead), so the number of samples at a given sampling
 * interval does not depend on the machine's speed.
 *
 * <p>Usage: {@code java AllocSplit [seconds=10] [split|none] [mbPerSecond=256]}. Prints at exit, for split:
 * <pre>TRUTH allocBig=0.7507 allocSmall=0.2493 big_bytes=... small_bytes=... big_calls=... small_calls=...
 *      big_bytes_per_call=12336 small_bytes_per_call=4096 rounds=... wall_ms=...</pre>
 * and for none:
 * <pre>TRUTH computeOnly_bytes=0 elsewhere_bytes=... compute_ms=... rounds=... wall_ms=...</pre>
 * ({@code computeOnly_bytes} is what the MXBean saw allocated inside computeOnly: 0 unless the JVM itself
 * allocated on the thread there).
 */
public final class AllocSplit {
    static final int BIG_LENGTH = 512;
    static final int BIG_PER_CALL = 3;
    static final int SMALL_PER_CALL = 128;
    static final int ELSEWHERE_PER_CALL = 64;
    static final int ELSEWHERE_LENGTH = 8192;
    static final int RING = 256;

    static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** The small objects' class: header 12 bytes + two longs at offsets 16 and 24 = 32 bytes. */
    static final class Small {
        long a;
        long b;

        Small(long a) {
            this.a = a;
            this.b = ~a;
        }
    }

    /** Keeps the last RING objects reachable; one ring per worker thread. */
    static final class Ring {
        final Object[] slots = new Object[RING];
        int next;

        void keep(Object o) {
            slots[next++ & (RING - 1)] = o;
        }
    }

    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10.0;
        String mode = args.length > 1 ? args[1] : "split";
        double mbPerSecond = args.length > 2 ? Double.parseDouble(args[2]) : 256;
        if (!MX.isThreadAllocatedMemorySupported()) {
            System.err.println("AllocSplit: thread allocated memory is not supported by this JVM");
            System.exit(2);
        }
        MX.setThreadAllocatedMemoryEnabled(true);
        String[] truth = new String[1];
        Thread worker;
        if (mode.equals("split")) {
            worker = new Thread(() -> truth[0] = runSplit(seconds, mbPerSecond), "allocsplit-worker");
        } else if (mode.equals("none")) {
            worker = new Thread(() -> truth[0] = runNone(seconds, mbPerSecond), "allocsplit-worker");
        } else {
            System.err.println("AllocSplit: mode must be split or none, not " + mode);
            System.exit(2);
            return;
        }
        worker.start();
        worker.join();
        System.out.println("TRUTH " + truth[0]);
    }

    /** Split mode on the calling thread for seconds; returns the TRUTH fields (without "TRUTH "). */
    static String runSplit(double seconds, double mbPerSecond) {
        Ring ring = new Ring();
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        double bytesPerNs = mbPerSecond * 1e6 / 1e9;
        long big = 0;
        long small = 0;
        long rounds = 0;
        long seed = 0x2545F4914F6CDD1DL;
        while (true) {
            long b0 = MX.getCurrentThreadAllocatedBytes();
            seed = allocBig(ring, seed);
            long b1 = MX.getCurrentThreadAllocatedBytes();
            seed = allocSmall(ring, seed);
            long b2 = MX.getCurrentThreadAllocatedBytes();
            big += b1 - b0;
            small += b2 - b1;
            rounds++;
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            pace(big + small, now - start, bytesPerNs);
        }
        sink = seed;
        double total = big + small;
        return String.format(Locale.ROOT, "allocBig=%.4f allocSmall=%.4f big_bytes=%d small_bytes=%d big_calls=%d"
                        + " small_calls=%d big_bytes_per_call=%.1f small_bytes_per_call=%.1f rounds=%d wall_ms=%d",
                big / total, small / total, big, small, rounds, rounds, (double) big / rounds,
                (double) small / rounds, rounds, (System.nanoTime() - start) / 1_000_000);
    }

    /** None mode: computeOnly (no allocation) and allocElsewhere, for seconds. */
    static String runNone(double seconds, double mbPerSecond) {
        Ring ring = new Ring();
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        double bytesPerNs = mbPerSecond * 1e6 / 1e9;
        long computeBytes = 0;
        long elsewhere = 0;
        long computeNs = 0;
        long rounds = 0;
        long seed = 0x9E3779B97F4A7C15L;
        while (true) {
            long t0 = System.nanoTime();
            long b0 = MX.getCurrentThreadAllocatedBytes();
            seed = computeOnly(seed, 2_000_000);
            long b1 = MX.getCurrentThreadAllocatedBytes();
            long t1 = System.nanoTime();
            allocElsewhere(ring, seed);
            long b2 = MX.getCurrentThreadAllocatedBytes();
            computeBytes += b1 - b0;
            elsewhere += b2 - b1;
            computeNs += t1 - t0;
            rounds++;
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            pace(elsewhere, now - start, bytesPerNs);
        }
        sink = seed;
        return String.format(Locale.ROOT, "computeOnly_bytes=%d elsewhere_bytes=%d compute_ms=%d rounds=%d wall_ms=%d",
                computeBytes, elsewhere, computeNs / 1_000_000, rounds, (System.nanoTime() - start) / 1_000_000);
    }

    /** Ahead of the allocation rate: sleep a millisecond (Thread.sleep allocates nothing on the heap). */
    static void pace(long bytes, long elapsedNs, double bytesPerNs) {
        if (bytes > elapsedNs * bytesPerNs) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static long allocBig(Ring ring, long seed) {
        for (int i = 0; i < BIG_PER_CALL; i++) {
            long[] a = new long[BIG_LENGTH];
            a[(int) (seed & (BIG_LENGTH - 1))] = seed;
            ring.keep(a);
            seed = seed * 6364136223846793005L + 1442695040888963407L;
        }
        return seed;
    }

    static long allocSmall(Ring ring, long seed) {
        for (int i = 0; i < SMALL_PER_CALL; i++) {
            ring.keep(new Small(seed));
            seed = seed * 6364136223846793005L + 1442695040888963407L;
        }
        return seed;
    }

    static void allocElsewhere(Ring ring, long seed) {
        for (int i = 0; i < ELSEWHERE_PER_CALL; i++) {
            byte[] b = new byte[ELSEWHERE_LENGTH];
            b[i] = (byte) seed;
            ring.keep(b);
        }
    }

    /** Arithmetic only, for about ns of wall time (the clock read every 4096 steps); allocates nothing. */
    static long computeOnly(long seed, long ns) {
        long t0 = System.nanoTime();
        long x = seed;
        do {
            for (int i = 0; i < 4096; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
        } while (System.nanoTime() - t0 < ns);
        return x;
    }
}
