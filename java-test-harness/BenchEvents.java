import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.Deflater;

/**
 * Throughput workload for the alloc and lock overhead benchmark (make event-cost): {@code threads} workers repeat
 * one operation for a fixed window after a warm-up, and the main thread prints operations per second.
 *
 * <p>Modes: {@code alloc} - each operation allocates a byte[] of 16 to 1024 bytes (sizes cycle), an Object[8]
 * and a small object, and keeps the last few alive so the allocations stay real; {@code lock} - each operation
 * enters one of two shared locks (a {@code synchronized} monitor and a {@code ReentrantLock}, alternately) for a
 * short critical section, so the workers contend; {@code zip} - each operation deflates 16 KiB of semi-random
 * bytes, so the workers spend most of their time in zlib (native frames, for the cstack= cost).
 *
 * <p>Usage: {@code java BenchEvents MODE [warmupSeconds=3] [windowSeconds=5] [threads=2]}. Output: {@code OPS n}.
 */
public final class BenchEvents {
    static volatile boolean stop;
    static volatile boolean counting;
    static final Object MONITOR = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static long shared;

    static final class Small {
        long a, b;
        Small(long a) {
            this.a = a;
            this.b = a * 31;
        }
    }

    static long allocOp(Object[] keep, int i) {
        byte[] b = new byte[16 + (i & 63) * 16];
        Object[] o = new Object[8];
        Small s = new Small(i);
        o[i & 7] = s;
        b[i % b.length] = (byte) i;
        keep[i & 15] = b;
        keep[(i + 8) & 15] = o;
        return b.length + s.b;
    }

    static long zipOp(Deflater d, byte[] in, byte[] out, int i) {
        in[i & (in.length - 1)] = (byte) i;
        d.reset();
        d.setInput(in);
        d.finish();
        long n = 0;
        while (!d.finished()) n += d.deflate(out);
        return n;
    }

    static long lockOp(int i) {
        if ((i & 1) == 0) {
            synchronized (MONITOR) {
                for (int k = 0; k < 200; k++) shared += k ^ i;
                return shared;
            }
        }
        LOCK.lock();
        try {
            for (int k = 0; k < 200; k++) shared += k ^ i;
            return shared;
        } finally {
            LOCK.unlock();
        }
    }

    public static void main(String[] args) throws InterruptedException {
        String mode = args[0];
        double warmup = args.length > 1 ? Double.parseDouble(args[1]) : 3.0;
        double window = args.length > 2 ? Double.parseDouble(args[2]) : 5.0;
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        long[] ops = new long[threads * 16];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int slot = t * 16;
            ts[t] = new Thread(() -> {
                Object[] keep = new Object[16];
                Deflater d = new Deflater(6);
                byte[] in = new byte[16384], out = new byte[4096];
                java.util.Random r = new java.util.Random(slot);
                for (int k = 0; k < in.length; k++) in[k] = (byte) (r.nextInt(16) + 'a');
                long sink = 0, n = 0;
                for (int i = 0; !stop; i++) {
                    sink += mode.equals("alloc") ? allocOp(keep, i) : mode.equals("zip") ? zipOp(d, in, out, i) : lockOp(i);
                    if (counting) n++;
                }
                ops[slot] = n + (sink == 42 ? 1 : 0);
            }, "bench-" + t);
            ts[t].start();
        }
        Thread.sleep((long) (warmup * 1000));
        counting = true;
        long t0 = System.nanoTime();
        Thread.sleep((long) (window * 1000));
        counting = false;
        long t1 = System.nanoTime();
        stop = true;
        long total = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            total += ops[t * 16];
        }
        System.out.printf(java.util.Locale.ROOT, "OPS %.1f%n", total / ((t1 - t0) / 1e9));
    }
}
