import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongUnaryOperator;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import jsampler.JSampler;

/**
 * The stress workload of {@code bench/stress.py} ({@code make stress}, {@code make stress-smoke}): everything that is
 * hard on a profiler, at once, while the profiler is started, dumped and stopped from inside (the Java API) and from
 * outside (attach, a backend task). Each activity is a loop of steps with a progress counter:
 *
 * <ul>
 * <li>{@code churn}: waves of 16 short threads (each about 1 ms of work, a third of them renamed mid-life);</li>
 * <li>{@code soe}: recursion into StackOverflowError and back ({@code WalkStress.recurse});</li>
 * <li>{@code deopt}: compiled callers of {@code WalkStress.Shape} meet a subclass from a fresh loader (deoptimised),
 *     rare branches hit uncommon traps;</li>
 * <li>{@code unload}: throw-away loaders define their own {@code ChurnVictim} (UnloadChurn's) and run it, then are
 *     dropped; {@code System.gc()} every 2 s unloads them;</li>
 * <li>{@code gc}: a 32 MiB ring of retained arrays replaced at random (old-generation churn) and short-lived
 *     garbage;</li>
 * <li>{@code jni}: Deflater/Inflater round trips (zlib through JNI) and reads of /dev/zero;</li>
 * <li>{@code lock}: three threads on one contended monitor, two on a ReentrantLock held across a sleep (parks);</li>
 * <li>{@code api}: start/dump/stop cycles through {@code jsampler.JSampler}, configurations in turn, every outcome
 *     logged to {@code DIR/api.log}: {@code ok}, a refusal (another entry point's session runs, or stopped ours:
 *     one line, one of the dispatcher's known refusals) or {@code FAIL};</li>
 * <li>{@code status}: {@code JSampler.status()} every 20 ms, each answer starting {@code state=}.</li>
 * </ul>
 *
 * <p>Control: {@code DIR/control} holds {@code run}, {@code pause} or {@code stop}, read every 100 ms. At
 * {@code pause} every activity parks between two steps (an API cycle finishes first), two {@code System.gc()} run and
 * {@code STRESS_PAUSED} is printed; {@code run} resumes ({@code STRESS_RESUMED}); {@code stop} ends the activities
 * and main prints {@code STRESS_DONE} with the counters and returns. Every 5 s main prints {@code STRESS_BEAT} with
 * the counters and the process CPU time.
 *
 * <p>Watchdog: while the phase is {@code run}, an activity whose counter has not moved for {@code stallSec} seconds
 * of wall time, or while the process used {@code stallCpuSec} seconds of CPU, is a stall: {@code STRESS_STALL} and
 * a dump of every Java thread are printed, and after {@code STALL_GRACE_S} seconds (for the driver to take native
 * stacks) the JVM halts with status 3.
 *
 * <p>Usage: {@code java -cp jsampler.jar:classes Stress DIR [stallSec=600] [stallCpuSec=120]} (with
 * {@code -agentpath} loading the library; WalkStress.java and UnloadChurn.java compiled beside it). With
 * {@code -Dstress.control=true} the workload runs without the profiler, for a reference run: no {@code api} and no
 * {@code status} activity, and the library is never loaded.
 */
public final class Stress {
    static final int RUN = 0;
    static final int PAUSE = 1;
    static final int STOP = 2;
    static final int STALL_GRACE_S = 60;
    static final String[] PHASES = {"run", "pause", "stop"};

    static volatile int phase = RUN;
    static volatile long sink;
    static final Object GATE = new Object();
    static final AtomicLong parked = new AtomicLong();
    static final List<Activity> ACTIVITIES = new ArrayList<>();
    static final List<Thread> THREADS = new ArrayList<>();
    static PrintWriter out;

    /** A named loop of steps run by one or more threads, with a progress counter the watchdog reads. */
    abstract static class Activity {
        final String name;
        final int threads;
        final AtomicLong progress = new AtomicLong();
        long seen = -1;
        long seenNs;
        long seenCpuNs;

        Activity(String name, int threads) {
            this.name = name;
            this.threads = threads;
        }

        abstract void step(int worker) throws Exception;

        /** Ends of the run (after the last step). */
        void finish() throws Exception {
        }

        void loop(int worker) {
            try {
                while (gate()) {
                    step(worker);
                    progress.incrementAndGet();
                }
            } catch (Throwable e) {
                report("STRESS_FAIL activity " + name + " threw " + e);
                e.printStackTrace(System.out);
                System.out.flush();
                Runtime.getRuntime().halt(1); // a dead activity would make the rest of the run show nothing
            }
        }
    }

    /** Between two steps: true to go on, false at stop; parks while paused. */
    static boolean gate() throws InterruptedException {
        if (phase == RUN) {
            return true;
        }
        synchronized (GATE) {
            if (phase == PAUSE) {
                parked.incrementAndGet();
                while (phase == PAUSE) {
                    GATE.wait();
                }
                parked.decrementAndGet();
            }
            return phase == RUN;
        }
    }

    static synchronized void report(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]).toAbsolutePath();
        long stallNs = (args.length > 1 ? Long.parseLong(args[1]) : 600) * 1_000_000_000L;
        long stallCpuNs = (args.length > 2 ? Long.parseLong(args[2]) : 120) * 1_000_000_000L;
        Files.createDirectories(dir.resolve("api"));
        Path control = dir.resolve("control");
        boolean reference = Boolean.getBoolean("stress.control");
        JSampler p = reference ? null : JSampler.getInstance();
        out = new PrintWriter(Files.newBufferedWriter(dir.resolve("api.log"), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND), true);
        byte[] extra = resource("/WalkStressExtra.class");
        byte[] victim = resource("/ChurnVictim.class");

        ACTIVITIES.add(new Churn());
        ACTIVITIES.add(new Activity("soe", 1) {
            @Override
            void step(int w) {
                try {
                    WalkStress.recurse(1);
                } catch (StackOverflowError e) {
                    sink++;
                }
            }
        });
        ACTIVITIES.add(new Deopt(extra));
        ACTIVITIES.add(new Unload(victim));
        ACTIVITIES.add(new Gc());
        ACTIVITIES.add(new Jni());
        ACTIVITIES.add(new Locks());
        StressApi api = reference ? null : new StressApi(p, dir.resolve("api"));
        if (!reference) {
            ACTIVITIES.add(api);
            ACTIVITIES.add(new Activity("status", 1) {
                @Override
                void step(int w) throws Exception {
                    String s = p.status();
                    if (!s.startsWith("state=")) {
                        api.fail("status answered '" + s + "'");
                    }
                    Thread.sleep(20);
                }
            });
        }
        for (Activity a : ACTIVITIES) {
            for (int i = 0; i < a.threads; i++) {
                final int w = i;
                Thread t = new Thread(() -> a.loop(w), "stress-" + a.name + (a.threads > 1 ? "-" + i : ""));
                t.setDaemon(true);
                THREADS.add(t);
            }
        }
        for (Thread t : THREADS) {
            t.start();
        }
        Thread dog = new Thread(() -> watchdog(stallNs, stallCpuNs, p), "stress-watchdog");
        dog.setDaemon(true);
        dog.start();
        report("STRESS_STARTED pid=" + ProcessHandle.current().pid());

        long t0 = System.nanoTime();
        long nextBeat = t0 + 5_000_000_000L;
        long nextGc = t0 + 2_000_000_000L;
        while (true) {
            Thread.sleep(100);
            String want = read(control);
            long now = System.nanoTime();
            if (phase == RUN && now >= nextGc) {
                System.gc();
                nextGc = now + 2_000_000_000L;
            }
            if (now >= nextBeat) {
                report("STRESS_BEAT t=" + (now - t0) / 1_000_000_000L + " phase=" + PHASES[phase] + counters());
                nextBeat = now + 5_000_000_000L;
            }
            if (want.equals("pause") && phase == RUN) {
                setPhase(PAUSE);
                int all = THREADS.size();
                while (parked.get() < all) {
                    Thread.sleep(50);
                }
                System.gc();
                Thread.sleep(200);
                System.gc();
                report("STRESS_PAUSED" + counters());
            } else if (want.equals("run") && phase == PAUSE) {
                setPhase(RUN);
                report("STRESS_RESUMED");
            } else if (want.equals("stop")) {
                setPhase(STOP);
                break;
            }
        }
        for (Thread t : THREADS) {
            t.join();
        }
        for (Activity a : ACTIVITIES) {
            a.finish();
        }
        report("STRESS_DONE" + counters() + (api == null ? "" : api.summary()));
        out.close();
    }

    static void setPhase(int p) {
        synchronized (GATE) {
            phase = p;
            GATE.notifyAll();
        }
    }

    static String read(Path control) {
        try {
            return new String(Files.readAllBytes(control), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "run";
        }
    }

    static byte[] resource(String name) throws IOException {
        try (InputStream in = Stress.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException(name + " is not on the class path");
            }
            return in.readAllBytes();
        }
    }

    static long cpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static String counters() {
        StringBuilder b = new StringBuilder();
        for (Activity a : ACTIVITIES) {
            b.append(' ').append(a.name).append('=').append(a.progress.get());
        }
        b.append(" threads_started=").append(Churn.started.get());
        b.append(" cpu_ms=").append(cpuNs() / 1_000_000L);
        b.append(" unloaded_classes=").append(ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount());
        return b.toString();
    }

    /** Checks every 5 s that each activity moves while the phase is run (see the class comment). */
    static void watchdog(long stallNs, long stallCpuNs, JSampler p) {
        while (true) {
            try {
                Thread.sleep(5000);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long cpu = cpuNs();
            for (Activity a : ACTIVITIES) {
                long v = a.progress.get();
                if (phase != RUN || v != a.seen) {
                    a.seen = v;
                    a.seenNs = now;
                    a.seenCpuNs = cpu;
                    continue;
                }
                if (now - a.seenNs >= stallNs || cpu - a.seenCpuNs >= stallCpuNs) {
                    stall(a, now - a.seenNs, cpu - a.seenCpuNs, p);
                }
            }
        }
    }

    static void stall(Activity a, long idleNs, long cpuNs, JSampler p) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "STRESS_STALL activity=%s progress=%d idle_s=%.1f cpu_s=%.1f%n", a.name,
                a.progress.get(), idleNs / 1e9, cpuNs / 1e9));
        b.append("agent: ").append(p == null ? "not loaded (control run)" : p.status()).append('\n');
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            b.append('"').append(t.getName()).append("\" ").append(t.getState()).append('\n');
            for (StackTraceElement f : e.getValue()) {
                b.append("    at ").append(f).append('\n');
            }
        }
        report(b.toString());
        try {
            Thread.sleep(STALL_GRACE_S * 1000L);
        } catch (InterruptedException e) {
            // halt anyway
        }
        Runtime.getRuntime().halt(3);
    }

    // ------------------------------------------------------------------ activities

    /** Waves of 16 short threads; every third renames itself mid-life. */
    static final class Churn extends Activity {
        static final AtomicLong started = new AtomicLong();

        Churn() {
            super("churn", 1);
        }

        @Override
        void step(int w) throws InterruptedException {
            Thread[] wave = new Thread[16];
            for (int i = 0; i < wave.length; i++) {
                long n = started.incrementAndGet();
                wave[i] = new Thread(() -> {
                    long x = n;
                    long stop = System.nanoTime() + 1_000_000L;
                    while (System.nanoTime() < stop) {
                        x += x * 31 + 7;
                    }
                    if (n % 3 == 0) {
                        Thread.currentThread().setName("stress-churned-" + n);
                    }
                    sink += x + new long[16].length;
                }, "stress-short-" + n);
                wave[i].start();
            }
            for (Thread t : wave) {
                t.join();
            }
        }
    }

    /** WalkStress's deoptimisation storm, one loader per step. */
    static final class Deopt extends Activity {
        final byte[] extra;
        final WalkStress.Shape square = new WalkStress.Square();

        Deopt(byte[] extra) {
            super("deopt", 1);
            this.extra = extra;
        }

        @Override
        void step(int w) throws Exception {
            long s = 0;
            for (int i = 0; i < 100_000; i++) {
                s += WalkStress.measure(square, i);
                if ((i & 0x7fff) == 0x7fff && (s & 1) == 0) {
                    s += WalkStress.rareBranch(i);
                }
            }
            ClassLoader l = new WalkStress.OneClassLoader(extra);
            java.lang.reflect.Constructor<?> make = l.loadClass("WalkStressExtra").getDeclaredConstructor();
            make.setAccessible(true);
            s += WalkStress.measure((WalkStress.Shape) make.newInstance(), 3);
            sink += s;
        }
    }

    /** UnloadChurn's throw-away loaders: a fresh ChurnVictim (with its lambda) run for about 5 ms. */
    static final class Unload extends Activity {
        final byte[] victim;

        Unload(byte[] victim) {
            super("unload", 1);
            this.victim = victim;
        }

        @Override
        void step(int w) throws Exception {
            Class<?> c = new ChildFirstLoader(victim).loadClass("ChurnVictim");
            java.lang.reflect.Constructor<?> make = c.getDeclaredConstructor();
            make.setAccessible(true);
            LongUnaryOperator v = (LongUnaryOperator) make.newInstance();
            long stop = System.nanoTime() + 5_000_000L;
            while (System.nanoTime() < stop) {
                sink += v.applyAsLong(sink);
            }
        }
    }

    /** Old-generation churn (a ring of retained arrays) and short-lived garbage, about 1 MiB a step. */
    static final class Gc extends Activity {
        final Object[] ring = new Object[2048];

        Gc() {
            super("gc", 1);
        }

        @Override
        void step(int w) {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            for (int i = 0; i < 16; i++) {
                ring[r.nextInt(ring.length)] = new byte[r.nextInt(1024, 32768)];
            }
            List<Object> young = new ArrayList<>();
            for (int i = 0; i < 4096; i++) {
                young.add(new long[r.nextInt(1, 32)]);
                if (young.size() > 512) {
                    young.clear();
                }
            }
            sink += young.size();
        }
    }

    /** zlib through JNI (Deflater, Inflater), CRC32, and reads through RandomAccessFile. */
    static final class Jni extends Activity {
        final byte[] in = new byte[64 << 10];
        final byte[] packed = new byte[128 << 10];
        final byte[] back = new byte[64 << 10];
        final byte[] small = new byte[64];

        Jni() {
            super("jni", 1);
            ThreadLocalRandom r = ThreadLocalRandom.current();
            for (int i = 0; i < in.length; i++) {
                in[i] = (byte) r.nextInt(16);
            }
        }

        @Override
        void step(int w) throws Exception {
            Deflater d = new Deflater(6);
            d.setInput(in);
            d.finish();
            int n = d.deflate(packed);
            d.end();
            Inflater inf = new Inflater();
            inf.setInput(packed, 0, n);
            int m = inf.inflate(back);
            inf.end();
            CRC32 a = new CRC32();
            a.update(in);
            CRC32 b = new CRC32();
            b.update(back, 0, m);
            if (a.getValue() != b.getValue()) {
                throw new IllegalStateException("zlib round trip differs");
            }
            try (RandomAccessFile f = new RandomAccessFile("/dev/zero", "r")) {
                for (int i = 0; i < 64; i++) {
                    f.seek(i);
                    f.read(small);
                }
            }
        }
    }

    /** A contended monitor (three threads) and a ReentrantLock held across a 1 ms sleep (two threads). */
    static final class Locks extends Activity {
        static final Object MONITOR = new Object();
        static final ReentrantLock LOCK = new ReentrantLock();

        Locks() {
            super("lock", 5);
        }

        @Override
        void step(int w) throws InterruptedException {
            if (w < 3) {
                synchronized (MONITOR) {
                    long stop = System.nanoTime() + 200_000L;
                    while (System.nanoTime() < stop) {
                        sink++;
                    }
                }
                Thread.sleep(0, 100_000);
            } else {
                LOCK.lock();
                try {
                    Thread.sleep(1);
                } finally {
                    LOCK.unlock();
                }
            }
        }
    }
}
