import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Runs the integration checks of every JDK side by side on a few threads, so that checks waiting on their child JVMs
 * (start-up, sleeping workloads, attach round trips) overlap. A check that measures time, CPU shares or sample
 * counts against what the machine can give runs alone ({@code exclusive}): it takes the write side of one
 * read-write lock, every other check the read side. A check marked {@code last} runs after every other check of its
 * driver (it looks at all their runs). Each check's output is held and printed in one piece when it ends.
 */
final class CheckRunner {
    /** Checks in flight at once: the machine's two cores mostly wait on child JVMs starting and sleeping. */
    static final int PARALLEL = 3;

    static final class Task {
        final IntegrationTest owner;
        final String name;
        final boolean exclusive;
        final boolean last;
        final Runnable body;

        Task(IntegrationTest owner, String name, boolean exclusive, boolean last, Runnable body) {
            this.owner = owner;
            this.name = name;
            this.exclusive = exclusive;
            this.last = last;
            this.body = body;
        }
    }

    private final List<Task> tasks = new ArrayList<>();
    /** How long one check took. */
    private record Timing(double seconds, String label, String name, boolean alone) {
    }

    /** Every check's time, printed longest first at the end. */
    private final List<Timing> timings = new ArrayList<>();
    private final ReentrantReadWriteLock machine = new ReentrantReadWriteLock(true);
    private static final PrintStream REAL_OUT = System.out;
    private static final ThreadLocal<ByteArrayOutputStream> HELD = new ThreadLocal<>();

    /** From now on System.out of a thread running a check goes to that check's buffer. */
    static void holdOutput() {
        System.setOut(new PrintStream(new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                target().write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                target().write(b, off, len);
            }

            @Override
            public void flush() {
                if (HELD.get() == null) {
                    REAL_OUT.flush();
                }
            }

            private OutputStream target() {
                ByteArrayOutputStream held = HELD.get();
                return held != null ? held : REAL_OUT;
            }
        }, true, StandardCharsets.UTF_8));
    }

    void add(IntegrationTest owner, String name, boolean exclusive, boolean last, Runnable body) {
        tasks.add(new Task(owner, name, exclusive, last, body));
    }

    /** Runs every task: the drivers' checks interleaved, exclusive ones alone, `last` ones at the end. */
    void runAll() throws InterruptedException {
        List<Task> order = new ArrayList<>();
        List<Task> finals = new ArrayList<>();
        for (Task t : tasks) {
            (t.last ? finals : order).add(t);
        }
        // Exclusive checks first, most of them long: the shared ones then fill the machine until the end.
        order.sort((a, b) -> Boolean.compare(b.exclusive, a.exclusive));
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
        List<Future<?>> pending = new ArrayList<>();
        for (Task t : order) {
            pending.add(pool.submit(() -> run(t)));
        }
        for (Future<?> f : pending) {
            try {
                f.get();
            } catch (java.util.concurrent.ExecutionException e) {
                REAL_OUT.println("harness: " + e.getCause());
            }
        }
        for (Task t : finals) {
            run(t);
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        printTimings();
    }

    /** The twelve longest checks, so that the phase's time can be read off (alone ones add up; shared overlap). */
    private void printTimings() {
        List<Timing> sorted;
        synchronized (timings) {
            sorted = new ArrayList<>(timings);
        }
        sorted.sort((a, b) -> Double.compare(b.seconds(), a.seconds()));
        double alone = sorted.stream().filter(Timing::alone).mapToDouble(Timing::seconds).sum();
        double shared = sorted.stream().filter(x -> !x.alone()).mapToDouble(Timing::seconds).sum();
        REAL_OUT.printf(Locale.ROOT, "harness: checks alone %.0f s, shared %.0f s (over %d threads); longest:%n",
                alone, shared, PARALLEL);
        for (Timing x : sorted.subList(0, Math.min(12, sorted.size()))) {
            REAL_OUT.printf(Locale.ROOT, "    %.1f %s %s (%s)%n", x.seconds(), x.label(), x.name(),
                    x.alone() ? "alone" : "shared");
        }
    }

    private void run(Task t) {
        ReentrantReadWriteLock.ReadLock shared = machine.readLock();
        ReentrantReadWriteLock.WriteLock alone = machine.writeLock();
        if (t.exclusive) {
            alone.lock();
        } else {
            shared.lock();
        }
        ByteArrayOutputStream held = new ByteArrayOutputStream();
        HELD.set(held);
        long t0 = System.nanoTime();
        try {
            t.owner.runCheck(t.name, t.body);
        } finally {
            synchronized (timings) {
                timings.add(new Timing((System.nanoTime() - t0) / 1e9, t.owner.label, t.name, t.exclusive));
            }
            HELD.remove();
            if (t.exclusive) {
                alone.unlock();
            } else {
                shared.unlock();
            }
            String text = held.toString(StandardCharsets.UTF_8);
            synchronized (REAL_OUT) {
                for (String line : text.split("\n", -1)) {
                    if (!line.isEmpty()) {
                        REAL_OUT.println(line.startsWith(" ") ? line : String.format(Locale.ROOT, "[%s] %s",
                                t.owner.label, line));
                    }
                }
                REAL_OUT.flush();
            }
        }
    }
}
