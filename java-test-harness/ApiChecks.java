import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The in-process Java API (build/jsampler.jar) against the real agent:
 * <ul>
 * <li>{@code api-cycles}: the library loaded idle by -agentpath, JSampler.getInstance(): every command in every
 * state, 200 start/dump/stop cycles while 2 threads work, the hot method in every output, threads and file
 * descriptors back to baseline, RSS within 20 MiB of its value after the first cycle (measured growth: see the
 * check's output).</li>
 * <li>{@code api-system-load}: no -agentpath; JSampler.getInstance(libPath) loads the library (System.load), which
 * sets the agent up in the running VM: 20 cycles with the same assertions.</li>
 * <li>{@code api-exit-race}: stop() racing System.exit(0), 10 times: exit 0 within the timeout, no crash, the
 * output written.</li>
 * <li>{@code api-loader-unload}: no -agentpath; a class loader of its own loads JSampler, which loads the library
 * (System.load) and runs one session, then the loader is dropped and collected (the JDK unloads its native libraries
 * then): 200 threads started and 50 classes loaded afterwards (the agent's JVMTI callbacks stay registered) with no
 * crash, and the library still mapped.</li>
 * <li>{@code idle-method-ids}: the library loaded idle; MethodIds lets 750 class loaders come and go before, during
 * and after one session. A session leaves their jmethodIDs in the JVM's C heap (at least 750 more Native Memory
 * Tracking blocks than the fewer of the idle phases': this shows the figure sees them); before and after it none are
 * made, so both idle phases leave at least 375 fewer blocks than the session's (measured with 1,500 loaders: idle 320
 * and 9 blocks against 3,042 on JDK 17, 3,509 and 3,017 against 6,052 on JDK 25, whose own class unloading keeps 2 a
 * loader; with the events on from load, each idle phase left as many as the session).</li>
 * </ul>
 */
final class ApiChecks {
    static final long RSS_SLACK_KIB = 20480;

    private final IntegrationTest t;

    ApiChecks(IntegrationTest t) {
        this.t = t;
    }

    /** Run ApiCycles and report; agentOptions null = no -agentpath (the library is System.load-ed). */
    void runCycles(String name, String agentOptions, String cycles, String lib) {
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        if (t.jar == null) {
            t.report(name, List.of("no --jar given: the Java API is not built"), details, t0);
            return;
        }
        Path dir = t.runDir(name).resolve("out");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            problems.add("cannot create " + dir + ": " + e);
        }
        IntegrationTest.Run r = t.launch(name, List.of(), 120, agentOptions, "ApiCycles", dir.toString(), cycles, lib,
                Long.toString(RSS_SLACK_KIB));
        problems.addAll(r.crashSigns());
        String ok = r.stdout.lines().filter(l -> l.startsWith("API_OK")).findFirst().orElse(null);
        if (r.timedOut || r.exitCode != 0 || ok == null) {
            problems.add("exit " + r.exitCode + (r.timedOut ? " (timed out)" : "") + ": "
                    + r.stdout.lines().filter(l -> l.startsWith("API_FAIL")).findFirst().orElse("no API_OK line"));
            details.addAll(r.stderrTail(8));
        } else {
            details.add(ok);
        }
        t.report(name, problems, details, t0);
    }

    void cycles() {
        runCycles("api-cycles", "", "200", "-");
    }

    void systemLoad() {
        runCycles("api-system-load", null, "20", t.agent.toString());
    }

    void loaderUnload() {
        String name = "api-loader-unload";
        if (!t.selected(name) || t.jar == null) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        Path dir = t.runDir(name);
        IntegrationTest.Run r = t.launch(name, List.of(), 120, null, "ApiLoaderUnload", t.jar.toString(),
                t.agent.toString(), dir.toString(), t.classes.toString());
        problems.addAll(r.crashSigns());
        Matcher m = Pattern.compile("UNLOAD_OK loader_collected=(\\w+) mapped=(\\w+) threads=(\\d+) classes=(\\d+)")
                .matcher(r.stdout);
        if (r.timedOut || r.exitCode != 0 || !m.find()) {
            problems.add("exit " + r.exitCode + (r.timedOut ? " (timed out)" : "") + ", no UNLOAD_OK line");
            details.addAll(r.stderrTail(8));
        } else {
            details.add(m.group(0));
            if (!m.group(1).equals("true")) {
                problems.add("the loader was not collected within 20 s: the check proves nothing");
            }
            if (!m.group(2).equals("true")) {
                problems.add("the library was unmapped with its loader while its callbacks stay registered");
            }
        }
        if (!Files.isRegularFile(dir.resolve("p.collapsed"))) {
            problems.add("the session through the dropped loader wrote no profile");
        }
        t.report(name, problems, details, t0);
    }

    void idleMethodIds() {
        String name = "idle-method-ids";
        if (!t.selected(name) || t.jar == null) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        int loaders = 750;
        Path out = t.runDir(name).resolve("session.collapsed");
        // Native Memory Tracking through the launcher's environment: launch() takes no JVM options
        IntegrationTest.Run r = t.launch(name, List.of("env", "JDK_JAVA_OPTIONS=-XX:NativeMemoryTracking=summary"), 120,
                "", "MethodIds", Integer.toString(loaders), out.toString());
        problems.addAll(r.crashSigns());
        Matcher m = Pattern.compile("METHODIDS idle=(-?\\d+) running=(-?\\d+) after=(-?\\d+)").matcher(r.stdout);
        if (r.timedOut || r.exitCode != 0 || !m.find()) {
            problems.add("exit " + r.exitCode + (r.timedOut ? " (timed out)" : "") + ", no METHODIDS line");
            details.addAll(r.stderrTail(8));
        } else {
            long idle = Long.parseLong(m.group(1));
            long running = Long.parseLong(m.group(2));
            long after = Long.parseLong(m.group(3));
            details.add(String.format(Locale.ROOT, "C-heap blocks kept after %d loaders came and went: idle %d, "
                    + "during a session %d, idle again %d", loaders, idle, running, after));
            if (running - Math.min(idle, after) < loaders) {
                problems.add("the session's phase left " + running + " blocks, not " + loaders + " more than the "
                        + "fewest of an idle phase: the figure does not show jmethodIDs");
            }
            for (long phase : new long[] {idle, after}) {
                if (running - phase < loaders / 2) {
                    problems.add("an idle phase left " + phase + " blocks against the session's " + running
                            + ": jmethodIDs were made with no session running");
                }
            }
        }
        t.report(name, problems, details, t0);
    }

    void exitRace() {
        String name = "api-exit-race";
        if (!t.selected(name) || t.jar == null) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        int stopsWon = 0;
        for (int i = 0; i < 10; i++) {
            Path out = t.runDir(name + "-" + i).resolve("race.collapsed");
            IntegrationTest.Run r = t.launch(name + "-" + i, List.of(), 30,
                    "start,event=cpu,interval=1ms,file=" + out, "ExitRace");
            List<String> signs = r.crashSigns();
            if (r.timedOut || r.exitCode != 0 || !signs.isEmpty()) {
                problems.add("run " + i + ": exit " + r.exitCode + (r.timedOut ? " (hung, killed)" : "") + " "
                        + signs);
            }
            if (!Files.isRegularFile(out)) {
                problems.add("run " + i + ": no output written");
            }
            long wrote = r.agentLines("INFO").stream().filter(l -> l.contains("wrote collapsed profile")).count();
            if (wrote != 1) {
                problems.add("run " + i + ": the output was written " + wrote + " times");
            }
            if (!r.stdout.contains("STOP_REFUSED")) {
                stopsWon++;
            }
        }
        t.report(name, problems, List.of("stop() came first in " + stopsWon + " of 10 runs, VM death in the others"),
                t0);
    }
}
