import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import jsampler.JSampler;
import jsampler.JSamplerException;

/**
 * Drives the profiler through the Java API (jsampler.JSampler) while 2 threads run a known hot method:
 * {@code cycles} start/dump/stop cycles (cpu and ctimer in turn, 1 ms), each dump and each stop output read back
 * and required to hold {@code ApiCycles.hot}; every command in every state (refusals throw with the agent's
 * message); and, after the cycles, thread and file-descriptor counts back to what they were after the first cycle,
 * and RSS growth within {@code rssSlackKiB}.
 *
 * <p>Usage: {@code java -cp jsampler.jar:. ApiCycles DIR [cycles=200] [libPath|-] [rssSlackKiB]} (libPath: load the
 * library with System.load instead of finding the one -agentpath loaded). Prints {@code API_OK ...} and exits 0, or
 * {@code API_FAIL why} and exits 1.
 */
public final class ApiCycles {
    /* busy threads: two keep both kinds of session sampling all along; each more only took CPU from other checks */
    static final int WORKERS = 2;
    static volatile boolean stop;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        Files.createDirectories(dir);
        int cycles = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        String lib = args.length > 2 && !args[2].equals("-") ? args[2] : null;
        long rssSlack = args.length > 3 ? Long.parseLong(args[3]) : 20480;
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            Thread t = new Thread(ApiCycles::work, "api-worker-" + i);
            t.start();
            workers.add(t);
        }
        JSampler p = lib == null ? JSampler.getInstance() : JSampler.getInstance(lib);
        try {
            states(p, dir);
            cycle(p, dir, 0, "cpu");
            Thread.sleep(200); // as at the end: the first session's housekeeping thread may still hold its files
            int tasks0 = count("/proc/self/task");
            int fds0 = count("/proc/self/fd");
            long rss0 = rssKiB();
            for (int i = 1; i < cycles; i++) {
                cycle(p, dir, i, i % 2 == 0 ? "cpu" : "ctimer");
            }
            Thread.sleep(200); // the housekeeping thread of the last session ends after stop returns
            int tasks1 = count("/proc/self/task");
            int fds1 = count("/proc/self/fd");
            long rss1 = rssKiB();
            String counts = "tasks " + tasks0 + "->" + tasks1 + " fds " + fds0 + "->" + fds1 + " rss_kib " + rss0 + "->"
                    + rss1;
            // Threads: the JVM may start or end a compiler thread meanwhile (dynamic compiler threads): 2 of slack.
            if (Math.abs(tasks1 - tasks0) > 2 || fds1 != fds0 || rss1 - rss0 > rssSlack) {
                fail("resources not back to baseline after " + cycles + " cycles: " + counts + " (rss slack "
                        + rssSlack + " KiB)");
            }
            System.out.println("API_OK cycles=" + cycles + " " + counts + " version=" + p.getVersion());
        } finally {
            stop = true;
            for (Thread t : workers) {
                t.join();
            }
        }
    }

    /** Every command in the idle and running states. */
    static void states(JSampler p, Path dir) throws IOException {
        expectRefused(p, "stop", "not running");
        expectRefused(p, "dump,file=" + dir.resolve("x.collapsed"), "not running");
        require(p.status().startsWith("state=idle"), "status while idle: " + p.status());
        p.start("event=cpu,interval=1ms,file=" + dir.resolve("s.collapsed"));
        require(p.status().startsWith("state=running"), "status while running: " + p.status());
        expectRefused(p, "start,event=cpu", "already running");
        expectRefused(p, "start,evnt=cpu", "evnt");
        p.stop();
        expectRefused(p, "stop", "not running");
    }

    static void expectRefused(JSampler p, String cmd, String words) {
        try {
            String reply = p.execute(cmd);
            fail("'" + cmd + "' was accepted: " + reply);
        } catch (JSamplerException e) {
            require(e.getMessage().contains(words), "'" + cmd + "' refused with '" + e.getMessage() + "', expected '"
                    + words + "'");
        }
    }

    /** One start/dump/stop cycle; both outputs must hold the hot method. */
    static void cycle(JSampler p, Path dir, int i, String event) throws Exception {
        Path dump = dir.resolve("dump.collapsed");
        Path out = dir.resolve("stop.collapsed");
        p.start("event=" + event + ",interval=1ms,file=" + out);
        awaitSamples(p);
        p.dump(dump.toString());
        Thread.sleep(10);
        p.stop();
        requireHot(dump, "dump of cycle " + i + " (" + event + ")");
        requireHot(out, "output of cycle " + i + " (" + event + ")");
    }

    /**
     * At least 40 ms of the session, then until it holds a sample (polled, at most 2 s more): ctimer samples on the
     * 4 ms tick, and on a loaded machine 2 busy threads may get no tick for longer than 40 ms.
     */
    static void awaitSamples(JSampler p) throws InterruptedException {
        Thread.sleep(40);
        java.util.regex.Pattern samples = java.util.regex.Pattern.compile("\\bsamples=(\\d+)");
        for (int i = 0; i < 200; i++) {
            java.util.regex.Matcher m = samples.matcher(p.status());
            if (m.find() && Long.parseLong(m.group(1)) > 0) {
                return;
            }
            Thread.sleep(10);
        }
    }

    static void requireHot(Path file, String what) throws IOException {
        String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        require(text.contains("ApiCycles.hot"), what + " lacks ApiCycles.hot (" + text.length() + " bytes)");
    }

    static void work() {
        while (!stop) {
            sink += hot(sink);
        }
    }

    static long hot(long x) {
        for (int i = 0; i < 100_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static int count(String dir) {
        String[] names = new File(dir).list();
        return names == null ? -1 : names.length;
    }

    static long rssKiB() throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    static void require(boolean ok, String why) {
        if (!ok) {
            fail(why);
        }
    }

    static void fail(String why) {
        System.out.println("API_FAIL " + why);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }
}
