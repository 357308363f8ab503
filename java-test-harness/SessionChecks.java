import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks of the session core that need a child JVM run differently from {@link IntegrationTest#launch}: without the
 * agent (the unprofiled baseline) or stopped by a signal.
 *
 * <ul>
 * <li>{@code deep-livelock}: a thread recursing to StackOverflowError and back, profiled at interval=100us, ends
 * within 2x the time of the same run profiled with jstackdepth=8 (the median of 5 interleaved pairs' ratios: the host's
 * slow spells, which stretch a run of either kind by up to 2.5x here, hit both runs of a pair, and a spell over one
 * run of a pair moves one ratio of five). That control
 * takes the same timer interrupts, whose cost depends on the host (tens of microseconds each under some
 * hypervisors: docs/BENCHMARKS.md), so the ratio isolates what deep walks cost, which is where a livelock would
 * come from; the unprofiled time (one run) is reported beside.</li>
 * <li>{@code sigterm-recording}: SIGTERM sent mid-run ends that JVM within 5 s and leaves a recording the JDK's
 * {@code jfr} tool reads, with samples in it.</li>
 * <li>{@code agentpath-no-command}: options without a command load the agent idle with one WARN line that says so,
 * and write nothing; no options at all: one INFO line.</li>
 * <li>{@code agentpath-twice}: a second -agentpath of the library stops JVM start-up with one line naming both.</li>
 * </ul>
 */
final class SessionChecks {
    static final double MAX_SLOWDOWN = 2.0;
    /* DeepRecursion's rounds: about 0.6-1.8 s profiled at 100us on a 2-vCPU VM (the ratio to the control 0.94-2.8 a
     * pair, 0.97-1.3 the median of three): five pairs of 100 rounds rather than three of 150, since the spread is
     * from run to run */
    static final String ROUNDS = "100";
    static final int PAIRS = 5;
    static final long TERM_DEADLINE_MS = 5000;
    static final Pattern DONE = Pattern.compile("DEEP_DONE rounds=\\d+ ms=(\\d+)");

    private final IntegrationTest t;

    SessionChecks(IntegrationTest t) {
        this.t = t;
    }

    /** A finished child: exit code, output, and how long it ran. */
    static final class Child {
        int exitCode;
        boolean timedOut;
        String stdout = "";
        String stderr = "";
        long wallMs;
    }

    /** Run java [agent] -cp classes DeepRecursion args in dir; if termAfterMs > 0, SIGTERM it then. */
    Child run(Path dir, String agentOptions, long termAfterMs, String... args) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        List<String> cmd = new ArrayList<>();
        cmd.add(t.java.toString());
        cmd.add("-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"));
        if (agentOptions != null) {
            cmd.add("-agentpath:" + t.agent + "=" + agentOptions);
        }
        cmd.add("-cp");
        cmd.add(t.classes.toString());
        cmd.add("DeepRecursion");
        cmd.addAll(Arrays.asList(args));
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        Files.writeString(dir.resolve("command.txt"), String.join(" ", cmd) + "\n");
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
        Child c = new Child();
        long termAt = 0;
        if (termAfterMs > 0 && !p.waitFor(termAfterMs, TimeUnit.MILLISECONDS)) {
            termAt = System.nanoTime();
            p.destroy(); // SIGTERM
        }
        boolean done = p.waitFor(IntegrationTest.TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        long end = System.nanoTime();
        c.timedOut = !done;
        c.exitCode = done ? p.exitValue() : -1;
        c.wallMs = ((termAt != 0 ? end - termAt : end - t0)) / 1_000_000;
        c.stdout = Files.readString(out, StandardCharsets.UTF_8);
        c.stderr = Files.readString(err, StandardCharsets.UTF_8);
        return c;
    }

    /** The workload's own time (DEEP_DONE ms=), or -1. */
    static long workMs(Child c) {
        Matcher m = DONE.matcher(c.stdout);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    static long median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }

    void deepLivelock() {
        String name = "deep-livelock";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        List<Long> plain = new ArrayList<>();
        List<Long> shallow = new ArrayList<>();
        List<Long> profiled = new ArrayList<>();
        try {
            for (int i = 0; i < PAIRS; i++) {
                Path base = t.runDir(name).resolve("run" + i);
                // the unprofiled time is reported, not judged: one run of it
                Child a = i == 0 ? run(base.resolve("plain"), null, 0, ROUNDS) : null;
                Child c8 = run(base.resolve("shallow"), "start,interval=100us,jstackdepth=8,file="
                        + base.resolve("shallow/p.jfr"), 0, ROUNDS);
                Child b = run(base.resolve("agent"), "start,interval=100us,file=" + base.resolve("agent/p.jfr"), 0,
                        ROUNDS);
                for (Child c : a != null ? List.of(a, c8, b) : List.of(c8, b)) {
                    if (c.timedOut || c.exitCode != 0 || workMs(c) < 0) {
                        problems.add("run " + i + (c == a ? " unprofiled" : c == c8 ? " jstackdepth=8" : " profiled")
                                + ": exit " + c.exitCode + (c.timedOut ? " (timed out, killed)" : "") + " in " + base);
                    }
                }
                if (a != null) {
                    plain.add(workMs(a));
                }
                shallow.add(workMs(c8));
                profiled.add(workMs(b));
            }
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        if (problems.isEmpty()) {
            long mp = median(plain);
            long ms = median(shallow);
            long mq = median(profiled);
            List<Double> ratios = new ArrayList<>();
            for (int i = 0; i < profiled.size(); i++) {
                ratios.add(profiled.get(i) / (double) Math.max(1, shallow.get(i)));
            }
            List<Double> sorted = new ArrayList<>(ratios);
            Collections.sort(sorted);
            double ratio = sorted.get(sorted.size() / 2);
            StringBuilder rs = new StringBuilder();
            for (double r : ratios) {
                rs.append(rs.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", r));
            }
            details.add("unprofiled ms " + plain + " median " + mp + "; at 100us with jstackdepth=8 " + shallow
                    + " median " + ms + "; at 100us " + profiled + " median " + mq
                    + String.format(Locale.ROOT, "; each pair's ratio [%s]: median x%.2f the jstackdepth=8 control"
                            + " (x%.2f unprofiled)", rs, ratio, mq / (double) Math.max(1, mp)));
            if (ratio > MAX_SLOWDOWN) {
                problems.add(String.format(Locale.ROOT,
                        "profiled runs took a median x%.2f the time of the jstackdepth=8 control run beside each"
                                + " (over %.1fx)", ratio, MAX_SLOWDOWN));
            }
        }
        t.report(name, problems, details, t0);
    }

    void sigtermRecording() {
        String name = "sigterm-recording";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path dir = t.runDir(name);
            Path jfr = dir.resolve("term.jfr");
            Child c = run(dir, "start,interval=100us,file=" + jfr, 3000, "100000");
            details.add("exit " + c.exitCode + " " + c.wallMs + " ms after SIGTERM");
            if (c.timedOut || c.wallMs > TERM_DEADLINE_MS) {
                problems.add("the JVM took " + c.wallMs + " ms to end after SIGTERM (limit " + TERM_DEADLINE_MS + ")");
            }
            if (c.stdout.contains("DEEP_DONE")) {
                problems.add("the workload finished before SIGTERM: the check did not test a mid-run signal");
            }
            details.add(t.jfrExecutionSamples(jfr, problems) + " jdk.ExecutionSample events in the recording");
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    void agentpathNoCommand() {
        String name = "agentpath-no-command";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        Path out = t.runDir(name).resolve("never.html");
        IntegrationTest.Run r = t.launch(name, List.of(), "event=cpu,file=" + out, "Hello");
        IntegrationTest.Run idle = t.launch(name + "-idle", List.of(), "", "Hello");
        for (IntegrationTest.Run run : List.of(r, idle)) {
            if (run.timedOut || run.exitCode != 0 || !run.stdout.contains(IntegrationTest.HELLO_MARKER)) {
                problems.add(run.name + ": exit " + run.exitCode + ", the application did not run to its end");
            }
        }
        List<String> warns = r.agentLines("WARN");
        if (warns.size() != 1 || !warns.get(0).contains("no command") || !warns.get(0).contains("start")) {
            problems.add("expected one WARN line saying there is no command and naming 'start', got " + warns);
        }
        if (Files.exists(out)) {
            problems.add(out + " was written although nothing was started");
        }
        List<String> infos = idle.agentLines();
        if (infos.size() != 1 || !infos.get(0).contains("loaded idle")) {
            problems.add("no options: expected one line 'loaded idle', got " + infos);
        }
        warns.forEach(l -> details.add("stderr: " + l));
        infos.forEach(l -> details.add("stderr (no options): " + l));
        t.report(name, problems, details, t0);
    }

    void agentpathTwice() {
        String name = "agentpath-twice";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        Path a = t.runDir(name).resolve("a.collapsed");
        Path b = t.runDir(name).resolve("b.collapsed");
        // The second -agentpath goes where launch() puts the main class: JVM options may follow -cp.
        IntegrationTest.Run r = t.launch(name, List.of(), "start,file=" + a, "-agentpath:" + t.agent + "=start,file=" + b,
                "Hello");
        if (r.timedOut || r.exitCode == 0 || r.stdout.contains(IntegrationTest.HELLO_MARKER)) {
            problems.add("exit " + r.exitCode + ": the JVM ran with the library loaded twice");
        }
        List<String> errors = r.agentLines("ERROR");
        if (errors.size() != 1 || !errors.get(0).contains("loaded twice") || !errors.get(0).contains(a.toString())
                || !errors.get(0).contains(b.toString())) {
            problems.add("expected one ERROR line naming both option strings, got " + errors);
        }
        t.report(name, problems, errors.stream().map(l -> "stderr: " + l).collect(java.util.stream.Collectors.toList()),
                t0);
    }

    /** include= with lines matches the bare method name; a filter that leaves nothing says so; loglevel=debug logs. */
    void filtersAndDebug() {
        String name = "include-lines-debug";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        Path kept = t.runDir(name).resolve("kept.collapsed");
        IntegrationTest.Run r = t.launch(name, List.of(), "start,interval=1ms,lines,include=Hello.spin,loglevel=debug,"
                + "file=" + kept, "Hello");
        try {
            List<String> lines = Files.exists(kept) ? Files.readAllLines(kept) : List.of();
            if (lines.isEmpty() || lines.stream().noneMatch(l -> l.contains("Hello.spin:"))) {
                problems.add("lines + include=Hello.spin gave no stack with Hello.spin:LINE (" + lines.size()
                        + " lines)");
            }
            details.add(lines.size() + " stacks kept with lines");
        } catch (IOException e) {
            problems.add("cannot read " + kept + ": " + e);
        }
        List<String> debug = r.agentLines("DEBUG");
        if (debug.stream().noneMatch(l -> l.contains("command '")) || debug.stream().noneMatch(l -> l.contains("output "))) {
            problems.add("loglevel=debug: expected DEBUG lines for the command and the output, got " + debug.size());
        }
        details.add(debug.size() + " DEBUG lines");
        Path empty = t.runDir(name + "-empty").resolve("empty.collapsed");
        IntegrationTest.Run e = t.launch(name + "-empty", List.of(), "start,interval=1ms,include=No.such*,file=" + empty,
                "Hello");
        List<String> warns = e.agentLines("WARN");
        if (warns.stream().noneMatch(l -> l.contains("left 0 of") && l.contains("No.such*"))) {
            problems.add("a filter that leaves nothing did not say so: WARN lines " + warns);
        }
        if (!e.agentLines("DEBUG").isEmpty()) {
            problems.add("DEBUG lines at the default level");
        }
        warns.forEach(l -> details.add("stderr: " + l));
        t.report(name, problems, details, t0);
    }

    /** loop=1s for 8 s: about 8 files of each output, each readable and holding the workload's hot methods. */
    void loopFiles() {
        String name = "loop-files";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        Path dir = t.runDir(name);
        IntegrationTest.Run r = t.launch(name, List.of(), 120, "start,interval=10ms,loop=1s,file=" + dir
                + "/p-%n.collapsed,jfrfile=" + dir + "/p-%n.jfr", "CpuSplit", "8", "2");
        if (r.timedOut || r.exitCode != 0) {
            problems.add("exit " + r.exitCode + (r.timedOut ? " (timed out)" : ""));
        }
        Path cli = t.agent.getParent().resolve("jsampler");
        int collapsed = 0;
        int jfrs = 0;
        int last = 0;
        while (Files.exists(dir.resolve("p-" + (last + 1) + ".collapsed"))) {
            last++;
        }
        for (int n = 0; n <= last; n++) {
            Path c = dir.resolve("p-" + n + ".collapsed");
            Path j = dir.resolve("p-" + n + ".jfr");
            // The last file covers the partial period in which the workload ended: it may hold no workload sample,
            // but it must still be a valid (possibly empty) output.
            boolean mustHold = n < last;
            try {
                if (Files.exists(c)) {
                    collapsed++;
                    String text = Files.readString(c);
                    if (mustHold && !text.contains("CpuSplit.burn")) {
                        problems.add(c.getFileName() + " holds no CpuSplit.burn stack (" + text.length() + " bytes)");
                    }
                }
                if (Files.exists(j)) {
                    jfrs++;
                    Path back = dir.resolve("back-" + n + ".collapsed");
                    Process p = new ProcessBuilder(cli.toString(), "convert", j.toString(), back.toString())
                            .redirectErrorStream(true).start();
                    String said = new String(p.getInputStream().readAllBytes());
                    if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0
                            || (mustHold && !Files.readString(back).contains("CpuSplit.burn"))) {
                        problems.add(j.getFileName() + " does not convert to stacks with CpuSplit.burn: " + said.trim());
                    }
                }
            } catch (IOException | InterruptedException e) {
                problems.add("cannot check file " + n + ": " + e);
            }
        }
        // 8 s of workload plus start-up and the last, partial period: 8 or 9 files, 7 if the JVM was slow.
        for (int[] kind : new int[][] {{collapsed}, {jfrs}}) {
            if (kind[0] < 7 || kind[0] > 10) {
                problems.add(kind[0] + " files of one kind, expected about 8");
            }
        }
        details.add(collapsed + " collapsed files, " + jfrs + " JFR recordings, each checked");
        t.report(name, problems, details, t0);
    }
}
