import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import one.profiler.AsyncProfiler;

/**
 * Drives libjsampler.so through async-profiler's Java API natives (one.profiler.AsyncProfiler) as its users do,
 * and prints {@code API_OK ...} when every step did what async-profiler's API contract says, else
 * {@code API_FAIL <step>: <why>} (exit 1).
 *
 * <p>Usage: {@code java AsprofApi LIBJSAMPLER}.
 */
public final class AsprofApi {
    static volatile double sink;

    static void burnA(long ms) {
        burn(ms);
    }

    static void burnB(long ms) {
        burn(ms);
    }

    static void burn(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        double x = 1;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 1.0000001 + 1e-9;
            }
        }
        sink = x;
    }

    static void check(boolean ok, String step, String why) {
        if (!ok) {
            System.out.println("API_FAIL " + step + ": " + why);
            System.exit(1);
        }
    }

    /** Runs r and checks that it throws exactly type. */
    static void expectThrow(String step, Class<?> type, ThrowingRunnable r) {
        try {
            r.run();
        } catch (Throwable e) {
            check(type.isInstance(e), step, "threw " + e + ", expected " + type.getSimpleName());
            return;
        }
        check(false, step, "did not throw " + type.getSimpleName());
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        AsyncProfiler p = AsyncProfiler.load(args[0]);
        String version = p.execute("version");
        check(version.matches("\\d+\\.\\d+\\.\\d+"), "version", "'" + version + "'");

        p.start("cpu", 1_000_000);
        burnA(800);
        String collapsed = p.execute("collapsed,samples");
        check(collapsed.contains("AsprofApi.burnA"), "dump", "no burnA in " + head(collapsed));
        for (String line : collapsed.split("\n")) {
            check(line.matches(".+ \\d+"), "dump", "not a collapsed line: " + line);
        }
        p.stop();
        long first = p.getSamples();
        check(first > 0, "getSamples", "0 after a second of cpu");
        String traces = p.execute("traces=5");
        check(traces.contains("AsprofApi.burnA") && traces.contains("--- "), "traces after stop", head(traces));

        p.resume("cpu", 1_000_000);
        burnB(500);
        p.stop();
        String both = p.execute("collapsed");
        check(both.contains("AsprofApi.burnA") && both.contains("AsprofApi.burnB"), "resume", head(both));
        check(p.getSamples() > first, "getSamples after resume", p.getSamples() + " <= " + first);

        p.start("cpu", 1_000_000);
        burnB(500);
        p.stop();
        String fresh = p.execute("collapsed");
        check(fresh.contains("AsprofApi.burnB") && !fresh.contains("AsprofApi.burnA"), "start resets", head(fresh));
        byte[] bytes = p.executeBytes("collapsed");
        check(new String(bytes, "UTF-8").equals(fresh), "execute1", bytes.length + " bytes");

        expectThrow("bad option", IllegalArgumentException.class, () -> p.execute("start,bogus=1"));
        expectThrow("stop while idle", IllegalStateException.class, p::stop);
        expectThrow("execute1 with a file", IllegalArgumentException.class, () -> p.executeBytes("collapsed,file=/tmp/x"));
        expectThrow("unwritable output", IOException.class, () -> p.execute("collapsed,file=/nonexistent/dir/x.collapsed"));

        /* thread filter: only the thread added is sampled */
        AtomicBoolean go = new AtomicBoolean(true);
        Thread a = new Thread(() -> { while (go.get()) burnA(50); }, "filter-a");
        Thread b = new Thread(() -> { while (go.get()) burnB(50); }, "filter-b");
        p.execute("start,event=cpu,interval=1ms,filter");
        a.start();
        b.start();
        Thread.sleep(200);
        p.addThread(a);
        Thread.sleep(1000);
        p.stop();
        go.set(false);
        a.join();
        b.join();
        String filtered = p.execute("collapsed");
        check(filtered.contains("AsprofApi.burnA") && !filtered.contains("AsprofApi.burnB"), "filter", head(filtered));

        System.out.println("API_OK version=" + version + " samples=" + first);
    }

    static String head(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
