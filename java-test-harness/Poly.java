import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Ordinary polymorphic Java code: a recursive expression tree of nine {@link Node} subclasses evaluated through a
 * megamorphic virtual call ({@code Node.eval}), binary nodes combining their children through an interface with
 * five implementations ({@code Op.apply}, itable dispatch). Beside it runs a plain loop ({@code Poly.mix}), so a
 * profile has two parts whose true split the workload measures itself.
 *
 * <p>Every evaluation and every mix call is timed with {@link ThreadMXBean#getCurrentThreadCpuTime()}; at exit one
 * line gives the true shares:
 * <pre>TRUTH eval=0.6012 mix=0.3988 cpu_ms=12034 threads=2 rounds=1187 checksum=...</pre>
 *
 * <p>Usage: {@code java Poly [seconds=5] [threads=2] [minCpuSeconds=0]} (same stop rule as CpuSplit).
 */
public final class Poly {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final LongAdder cpuEval = new LongAdder();
    static final LongAdder cpuMix = new LongAdder();
    static final AtomicLong cpuTotal = new AtomicLong();
    static final LongAdder rounds = new LongAdder();
    static final AtomicLong checksum = new AtomicLong();

    /** Combines two values: five implementations, so the call site in {@link Bin} dispatches through itables. */
    interface Op {
        long apply(long a, long b);
    }

    static final class Plus implements Op {
        public long apply(long a, long b) { return a + b; }
    }

    static final class Times implements Op {
        public long apply(long a, long b) { return a * b + 1; }
    }

    static final class Xor implements Op {
        public long apply(long a, long b) { return a ^ (b << 1); }
    }

    static final class Rot implements Op {
        public long apply(long a, long b) { return Long.rotateLeft(a, (int) b & 63) - b; }
    }

    static final class Pick implements Op {
        public long apply(long a, long b) { return a > b ? a - b : b - a; }
    }

    static final Op[] OPS = {new Plus(), new Times(), new Xor(), new Rot(), new Pick()};

    abstract static class Node {
        abstract long eval(long[] env);
    }

    static final class Const extends Node {
        final long v;
        Const(long v) { this.v = v; }
        long eval(long[] env) { return v; }
    }

    static final class Var extends Node {
        final int slot;
        Var(int slot) { this.slot = slot; }
        long eval(long[] env) { return env[slot]; }
    }

    static final class Neg extends Node {
        final Node x;
        Neg(Node x) { this.x = x; }
        long eval(long[] env) { return -x.eval(env); }
    }

    static final class Add extends Node {
        final Node l, r;
        Add(Node l, Node r) { this.l = l; this.r = r; }
        long eval(long[] env) { return l.eval(env) + r.eval(env); }
    }

    static final class Mul extends Node {
        final Node l, r;
        Mul(Node l, Node r) { this.l = l; this.r = r; }
        long eval(long[] env) { return l.eval(env) * (r.eval(env) | 1); }
    }

    static final class Max extends Node {
        final Node l, r;
        Max(Node l, Node r) { this.l = l; this.r = r; }
        long eval(long[] env) { return Math.max(l.eval(env), r.eval(env)); }
    }

    static final class Cond extends Node {
        final Node c, a, b;
        Cond(Node c, Node a, Node b) { this.c = c; this.a = a; this.b = b; }
        long eval(long[] env) { return (c.eval(env) & 1) == 0 ? a.eval(env) : b.eval(env); }
    }

    static final class Bin extends Node {
        final Op op;
        final Node l, r;
        Bin(Op op, Node l, Node r) { this.op = op; this.l = l; this.r = r; }
        long eval(long[] env) { return op.apply(l.eval(env), r.eval(env)); }
    }

    static final class Store extends Node {
        final int slot;
        final Node x;
        Store(int slot, Node x) { this.slot = slot; this.x = x; }
        long eval(long[] env) { return env[slot] = x.eval(env) ^ env[slot]; }
    }

    /** A random tree of the given depth over all nine node kinds and all five ops. */
    static Node tree(ThreadLocalRandom random, int depth) {
        if (depth == 0) {
            return random.nextBoolean() ? new Const(random.nextLong()) : new Var(random.nextInt(8));
        }
        switch (random.nextInt(7)) {
            case 0: return new Neg(tree(random, depth - 1));
            case 1: return new Add(tree(random, depth - 1), tree(random, depth - 1));
            case 2: return new Mul(tree(random, depth - 1), tree(random, depth - 1));
            case 3: return new Max(tree(random, depth - 1), tree(random, depth - 1));
            case 4: return new Cond(tree(random, depth - 2 < 0 ? 0 : depth - 2), tree(random, depth - 1),
                    tree(random, depth - 1));
            case 5: return new Store(random.nextInt(8), tree(random, depth - 1));
            default: return new Bin(OPS[random.nextInt(OPS.length)], tree(random, depth - 1), tree(random, depth - 1));
        }
    }

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5.0;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        double minCpuSeconds = args.length > 2 ? Double.parseDouble(args[2]) : 0.0;
        MX.setThreadCpuTimeEnabled(true);
        long start = System.nanoTime();
        long softEnd = start + (long) (seconds * 1e9);
        long hardEnd = start + (long) (3 * seconds * 1e9);
        long minCpuNanos = (long) (minCpuSeconds * 1e9);
        Thread[] workers = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            workers[i] = new Thread(() -> work(softEnd, hardEnd, minCpuNanos), "poly-" + i);
            workers[i].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        long e = cpuEval.sum(), m = cpuMix.sum();
        double total = e + m;
        System.out.println(String.format(Locale.ROOT,
                "TRUTH eval=%.4f mix=%.4f cpu_ms=%d threads=%d rounds=%d wall_ms=%d checksum=%x", e / total,
                m / total, Math.round(total / 1e6), threads, rounds.sum(), (System.nanoTime() - start) / 1_000_000,
                checksum.get()));
    }

    /** One worker: rounds of evaluate (a fresh tree every 64 rounds) and mix, each call timed in CPU time. */
    static void work(long softEnd, long hardEnd, long minCpuNanos) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long[] env = new long[8];
        long acc = random.nextLong();
        Node root = tree(random, 14);
        for (long round = 0; ; round++) {
            if ((round & 63) == 63) {
                root = tree(random, 14);
            }
            int reps = 1 + random.nextInt(12);
            long t0 = MX.getCurrentThreadCpuTime();
            acc += evaluate(root, env, reps);
            long t1 = MX.getCurrentThreadCpuTime();
            acc = mix(acc, 12_000 * reps);
            long t2 = MX.getCurrentThreadCpuTime();
            cpuEval.add(t1 - t0);
            cpuMix.add(t2 - t1);
            long used = cpuTotal.addAndGet(t2 - t0);
            rounds.increment();
            long now = System.nanoTime();
            if (now >= hardEnd || (now >= softEnd && used >= minCpuNanos)) {
                break;
            }
        }
        checksum.accumulateAndGet(acc, (x, y) -> x ^ y);
    }

    /** The tree evaluator: reps evaluations of root with a changing environment. */
    static long evaluate(Node root, long[] env, int reps) {
        long sum = 0;
        for (int i = 0; i < reps; i++) {
            env[i & 7] += i;
            sum += root.eval(env);
        }
        return sum;
    }

    /** A plain loop, no calls: a murmur-style finaliser folded over the counter. */
    static long mix(long h, int iterations) {
        for (int i = 0; i < iterations; i++) {
            long k = h + i;
            k ^= k >>> 33;
            k *= 0xff51afd7ed558ccdL;
            k ^= k >>> 29;
            h = k ^ (h >>> 1);
        }
        return h;
    }
}
