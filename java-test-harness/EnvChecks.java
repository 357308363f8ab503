import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The agent in the conditions it meets in production: beside other agents, with a JVM's limits.
 *
 * <ul>
 * <li>{@code caps-two-copies}: two copies of the library in one JVM (one loaded with -agentpath, a copy of it at
 *     another path attached later: a newer jsampler, or async-profiler, in the same JVM). While an allocation
 *     session of the first runs, the second is refused allocation events (one JVMTI environment may have them at a
 *     time); once it stops, the second gets them and records allocation samples, and gives them back in turn.</li>
 * <li>{@code thread-rename}: threads renamed after they started ({@link Renames}: one by itself, one by another
 *     thread, one still running when the JVM exits) appear under their latest names, never their first ones,
 *     with -agentpath and {@code threads}; {@code attach-thread-names}: a thread that ran before the agent was
 *     attached ({@code allocsplit-worker}, 17 characters) has its full Java name in {@code jsampler start -t}'s
 *     profile, not the 15 characters the kernel keeps; {@code jvm-thread-names}: the JVM's own Java threads, which
 *     JVMTI does not list, have their full names too ({@code C1 CompilerThread0}, {@code C2 CompilerThread0}: their
 *     kernel names are {@code C1 CompilerThre}, {@code C2 CompilerThre}) in a {@code threads} profile of a
 *     workload that keeps the JIT compilers busy ({@link JitNames}, {@code event=cpu} at 1 ms).</li>
 * <li>{@code log-options}: each of {@code log=} and {@code loglevel=} given by a later command changes only itself:
 *     {@code loglevel=debug} sent with an attach keeps the {@code log=} file of -agentpath (the session's lines,
 *     DEBUG ones too, go there, none to stderr), and {@code log=FILE} keeps the {@code loglevel=warn} of
 *     -agentpath (no INFO line anywhere).</li>
 * <li>{@code fd-limit}: {@code event=cpu} in a JVM run under {@code ulimit -n 256} with 300 threads
 *     ({@link FdPressure}): the application can still open its 64 files after every thread was attached, one WARN
 *     line says the threads past the perf_events counters' share of the limit are sampled by ctimer, and at least
 *     90% of the workers have samples.</li>
 * </ul>
 */
final class EnvChecks {
    private final IntegrationTest t;
    private final Path cli;

    EnvChecks(IntegrationTest t) {
        this.t = t;
        this.cli = t.agent.getParent().resolve("jsampler");
    }

    /** A JVM running mainClass, with extra JVM options, left running until closed. */
    final class Target implements AutoCloseable {
        final Process proc;
        final Path dir;

        Target(Path dir, List<String> jvmArgs, String mainClass, String... args) throws IOException {
            this.dir = dir;
            Files.createDirectories(dir);
            List<String> cmd = new ArrayList<>();
            cmd.add(t.java.toString());
            cmd.add("-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"));
            cmd.addAll(jvmArgs);
            cmd.addAll(List.of("-cp", t.classes.toString(), mainClass));
            cmd.addAll(Arrays.asList(args));
            Files.writeString(dir.resolve("command.txt"), String.join(" ", cmd) + "\n");
            proc = new ProcessBuilder(cmd).directory(dir.toFile()).redirectOutput(dir.resolve("stdout.txt").toFile())
                    .redirectError(dir.resolve("stderr.txt").toFile()).start();
        }

        /** The JVM's pid once it runs Java; -1 if it never does within 10 s. */
        long awaitUp() throws InterruptedException {
            for (int i = 0; i < 100; i++) {
                long pid = AttachChecks.isJava(proc.pid()) ? proc.pid() : -1;
                if (pid > 0) {
                    Thread.sleep(700); // past start-up: its attach listener can be started
                    return pid;
                }
                Thread.sleep(100);
            }
            return -1;
        }

        String stderr() throws IOException {
            return Files.readString(dir.resolve("stderr.txt"), StandardCharsets.UTF_8);
        }

        @Override
        public void close() {
            proc.destroyForcibly();
        }
    }

    AttachChecks.Out jsampler(String... args) {
        List<String> cmd = new ArrayList<>(List.of(cli.toString()));
        cmd.addAll(Arrays.asList(args));
        return AttachChecks.run(cmd);
    }

    /** Samples (the weights) in a collapsed file on stacks holding frame; 0 if the file is missing. */
    static long weightWith(Path collapsed, String frame) throws IOException {
        if (!Files.isRegularFile(collapsed)) {
            return 0;
        }
        long n = 0;
        for (String line : Files.readAllLines(collapsed, StandardCharsets.UTF_8)) {
            int sp = line.lastIndexOf(' ');
            if (sp > 0 && line.substring(0, sp).contains(frame)) {
                n += Long.parseLong(line.substring(sp + 1));
            }
        }
        return n;
    }

    /** name's run directory, emptied (files of an earlier run must not pass for this run's). */
    Path freshDir(String name) throws IOException {
        Path dir = t.runDir(name);
        if (Files.exists(dir)) {
            try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toArray(Path[]::new)) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(dir);
        return dir;
    }

    /** Adds a problem when o did not exit with code. */
    static void expect(List<String> problems, String what, AttachChecks.Out o, int code) {
        if (o.code != code) {
            problems.add(what + ": expected exit " + code + ", got " + o);
        }
    }

    // ---------------------------------------------------------------- capabilities given back

    void capsTwoCopies() {
        String name = "caps-two-copies";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path dir = freshDir(name);
            Files.createDirectories(dir.resolve("copy"));
            Path copy = dir.resolve("copy").resolve("libjsampler.so");
            Files.copy(t.agent, copy, StandardCopyOption.REPLACE_EXISTING);
            String first = t.agent.toString();
            String second = copy.toString();
            try (Target jvm = new Target(dir, List.of("-agentpath:" + first), "AllocSplit", "60", "split", "64")) {
                long pid = jvm.awaitUp();
                if (pid < 0) {
                    t.fail(name, "the JVM did not start", List.of());
                    return;
                }
                String p = Long.toString(pid);
                expect(problems, "first copy: start -e alloc", jsampler("start", "--libpath", first, "-e", "alloc", p), 0);
                AttachChecks.Out refused = jsampler("start", "--libpath", second, "-e", "alloc", p);
                expect(problems, "second copy while the first records allocations", refused, 5);
                if (!refused.err.contains("alloc")) {
                    problems.add("the second copy's refusal does not name alloc: " + refused);
                }
                Thread.sleep(1000);
                Path a1 = dir.resolve("first-1.collapsed");
                expect(problems, "first copy: stop", jsampler("stop", "--libpath", first, "-f", a1.toString(), p), 0);
                AttachChecks.Out b = jsampler("start", "--libpath", second, "-e", "alloc", p);
                expect(problems, "second copy: start -e alloc after the first stopped", b, 0);
                Thread.sleep(2000);
                Path b1 = dir.resolve("second.collapsed");
                expect(problems, "second copy: stop", jsampler("stop", "--libpath", second, "-f", b1.toString(), p),
                        b.code == 0 ? 0 : 5);
                expect(problems, "first copy: start -e alloc again",
                        jsampler("start", "--libpath", first, "-e", "alloc", p), 0);
                Thread.sleep(1000);
                Path a2 = dir.resolve("first-2.collapsed");
                expect(problems, "first copy: stop again", jsampler("stop", "--libpath", first, "-f", a2.toString(), p), 0);
                long n1 = weightWith(a1, "AllocSplit.allocBig");
                long nb = weightWith(b1, "AllocSplit.allocBig");
                long n2 = weightWith(a2, "AllocSplit.allocBig");
                details.add("bytes in allocBig: first copy " + n1 + ", second copy " + nb + ", first again " + n2);
                if (n1 == 0) {
                    problems.add("the first copy recorded no allocation in allocBig");
                }
                if (nb == 0) {
                    problems.add("the second copy recorded no allocation in allocBig after the first stopped");
                }
                if (n2 == 0) {
                    problems.add("the first copy recorded no allocation after the second stopped");
                }
                if (!jvm.proc.isAlive()) {
                    problems.add("the JVM died (exit " + jvm.proc.exitValue() + ")");
                }
                if (!problems.isEmpty()) {
                    jvm.stderr().lines().filter(l -> l.contains("[jsampler]")).limit(12)
                            .forEach(l -> details.add("stderr| " + l));
                }
            }
        } catch (IOException e) {
            t.fail(name, e.toString(), List.of());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.fail(name, "interrupted", List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }

    // ---------------------------------------------------------------- thread names

    void threadRename() {
        String name = "thread-rename";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path out = freshDir(name).resolve("profile.collapsed");
            IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cpu,interval=1ms,threads,file=" + out,
                    "Renames");
            IntegrationTest.requireCleanExit(r);
            List<String> roots = new ArrayList<>();
            for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
                String root = line.split(";", 2)[0];
                if (!roots.contains(root)) {
                    roots.add(root);
                }
            }
            for (String want : List.of("renamed-itself-after-start", "renamed-by-main-thread-after-start",
                    "renamed-and-running-when-the-jvm-exits")) {
                if (roots.stream().noneMatch(x -> x.startsWith("[" + want + " tid="))) {
                    problems.add("no samples under the latest name " + want);
                }
            }
            roots.stream().filter(x -> x.startsWith("[first-name-"))
                    .forEach(x -> problems.add("samples under a first name: " + x));
            if (!problems.isEmpty()) {
                roots.stream().limit(20).forEach(x -> details.add("root| " + x));
            }
        } catch (IntegrationTest.Failure f) {
            t.fail(name, f.getMessage(), f.evidence);
            return;
        } catch (IOException e) {
            t.fail(name, e.toString(), List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }

    // ---------------------------------------------------------------- log options

    void logOptions() {
        String name = "log-options";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path dir = freshDir(name);
            Path aLog = dir.resolve("a.log");
            Path bLog = dir.resolve("b.log");
            try (Target a = new Target(dir.resolve("a"), List.of("-agentpath:" + t.agent + "=log=" + aLog),
                    "CpuSplit", "30", "1")) {
                String p = Long.toString(a.awaitUp());
                expect(problems, "start with loglevel=debug", jsampler("start", "-e", "cpu", p, "--", "loglevel=debug"),
                        0);
                Thread.sleep(300);
                expect(problems, "stop", jsampler("stop", "-f", dir.resolve("a.collapsed").toString(), p), 0);
                String log = Files.exists(aLog) ? Files.readString(aLog) : "";
                if (!log.contains("INFO: profiling started") || !log.contains("DEBUG: ")) {
                    problems.add("loglevel=debug: the log= file lacks the session's INFO and DEBUG lines");
                }
                if (a.stderr().contains("profiling started") || a.stderr().contains("DEBUG: ")) {
                    problems.add("loglevel=debug sent the log back to stderr (log= was " + aLog + ")");
                }
                if (!problems.isEmpty()) {
                    a.stderr().lines().limit(6).forEach(l -> details.add("a stderr| " + l));
                }
            }
            try (Target b = new Target(dir.resolve("b"), List.of("-agentpath:" + t.agent + "=loglevel=warn"),
                    "CpuSplit", "30", "1")) {
                String p = Long.toString(b.awaitUp());
                expect(problems, "start with log=", jsampler("start", "-e", "cpu", p, "--", "log=" + bLog), 0);
                Thread.sleep(300);
                expect(problems, "stop", jsampler("stop", "-f", dir.resolve("b.collapsed").toString(), p), 0);
                String log = Files.exists(bLog) ? Files.readString(bLog) : "";
                if (!Files.exists(bLog)) {
                    problems.add("log=" + bLog + " was not created");
                }
                if (log.contains("INFO: ") || b.stderr().contains("INFO: ")) {
                    problems.add("log= reset loglevel=warn: INFO lines were written");
                    log.lines().limit(4).forEach(l -> details.add("b log| " + l));
                }
                if (log.contains("no samples in this session")) {
                    problems.add("a session with samples said it had none: " + log.strip());
                }
                // a session that records nothing says so, and why: here its 60-s period never ends in 0.3 s
                expect(problems, "start at 60 s", jsampler("start", "-e", "cpu", "-i", "60s", p), 0);
                Thread.sleep(300);
                expect(problems, "stop", jsampler("stop", "-f", dir.resolve("b2.collapsed").toString(), p), 0);
                String said = (Files.exists(bLog) ? Files.readString(bLog) : "").lines()
                        .filter(l -> l.contains("WARN: no samples in this session")).findFirst().orElse("");
                Matcher m = Pattern.compile("attached to (\\d+) threads").matcher(said);
                if (!m.find() || Integer.parseInt(m.group(1)) < 2 || !said.contains("saw 0 signals while sampling")) {
                    problems.add("a session without samples did not say so with its counts: '" + said + "'");
                } else {
                    details.add("no samples, said so: " + said.substring(said.indexOf("WARN")));
                }
            }
        } catch (IOException e) {
            t.fail(name, e.toString(), List.of());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.fail(name, "interrupted", List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }

    // ---------------------------------------------------------------- the open-file limit

    void fdLimit() {
        String name = "fd-limit";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        int workers = 300;
        try {
            Path out = freshDir(name).resolve("profile.collapsed");
            IntegrationTest.Run r = t.launch(name, List.of("sh", "-c", "ulimit -n 256 && exec \"$@\"", "sh"),
                    "start,event=cpu,interval=1ms,threads,file=" + out, "FdPressure", Integer.toString(workers), "64",
                    "4");
            IntegrationTest.requireCleanExit(r);
            if (!r.stdout.contains("FILES_OK 64")) {
                problems.add("the application could not open its files: "
                        + r.stdout.lines().filter(l -> l.startsWith("FILES_")).findFirst().orElse("(no FILES_ line)"));
            }
            List<String> warns = r.agentLines("WARN").stream().filter(l -> l.contains("ctimer"))
                    .collect(java.util.stream.Collectors.toList());
            if (warns.size() != 1 || !warns.get(0).contains("RLIMIT_NOFILE")) {
                problems.add("expected one WARN line naming RLIMIT_NOFILE and ctimer, got " + warns);
            } else {
                details.add(warns.get(0));
            }
            java.util.Set<String> sampled = new java.util.HashSet<>();
            if (Files.isRegularFile(out)) {
                for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("^\\[(fdp-worker-\\d+) tid=")
                            .matcher(line);
                    if (m.find()) {
                        sampled.add(m.group(1));
                    }
                }
            }
            details.add(sampled.size() + " of " + workers + " workers have samples");
            if (sampled.size() < workers * 9 / 10) {
                problems.add("only " + sampled.size() + " of " + workers + " workers have samples");
            }
            List<String> errors = r.agentLines("ERROR");
            if (!errors.isEmpty()) {
                problems.add("ERROR logged: " + errors.get(0));
            }
            if (!problems.isEmpty()) {
                details.addAll(r.stderrTail(8));
            }
        } catch (IntegrationTest.Failure f) {
            t.fail(name, f.getMessage(), f.evidence);
            return;
        } catch (IOException e) {
            t.fail(name, e.toString(), List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }

    void attachThreadNames() {
        String name = "attach-thread-names";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path dir = freshDir(name);
            Path out = dir.resolve("attach.collapsed");
            try (Target jvm = new Target(dir, List.of(), "AllocSplit", "30", "split", "64")) {
                String p = Long.toString(jvm.awaitUp());
                expect(problems, "start -t", jsampler("start", "-e", "cpu", "-i", "1ms", "-t", p), 0);
                Thread.sleep(2500);
                expect(problems, "stop", jsampler("stop", "-f", out.toString(), p), 0);
            }
            List<String> roots = new ArrayList<>();
            if (Files.isRegularFile(out)) {
                for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
                    String root = line.split(";", 2)[0];
                    if (!roots.contains(root)) {
                        roots.add(root);
                    }
                }
            }
            if (roots.stream().noneMatch(x -> x.startsWith("[allocsplit-worker tid="))) {
                problems.add("the worker is not under its full name [allocsplit-worker tid=...]");
                roots.stream().limit(20).forEach(x -> details.add("root| " + x));
            }
        } catch (IOException e) {
            t.fail(name, e.toString(), List.of());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.fail(name, "interrupted", List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }

    void jvmThreadNames() {
        String name = "jvm-thread-names";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path out = freshDir(name).resolve("profile.collapsed");
            IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cpu,interval=1ms,threads,file=" + out,
                    "JitNames", "4");
            IntegrationTest.requireCleanExit(r);
            if (!r.stdout.contains("JitNames done")) {
                problems.add("the workload did not finish (no 'JitNames done')");
            }
            java.util.Map<String, Long> roots = new java.util.TreeMap<>();
            for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
                String root = line.split(";", 2)[0];
                long n = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
                roots.merge(root.replaceAll(" tid=\\d+]$", "]"), n, Long::sum);
            }
            for (String jit : List.of("C1 CompilerThread", "C2 CompilerThread")) {
                String cut = "[" + jit.substring(0, 15) + "]";
                long full = roots.entrySet().stream().filter(e -> e.getKey().matches("\\[" + jit + "\\d+]"))
                        .mapToLong(java.util.Map.Entry::getValue).sum();
                details.add(String.format(java.util.Locale.ROOT, "%-22s %6d samples under full names, %d under %s",
                        jit + "N", full, roots.getOrDefault(cut, 0L), cut));
                if (full == 0) {
                    problems.add("no samples under [" + jit + "N tid=...]");
                }
                if (roots.containsKey(cut)) {
                    problems.add(roots.get(cut) + " samples under the kernel's cut name " + cut);
                }
            }
            if (!problems.isEmpty()) {
                roots.entrySet().stream().limit(30).forEach(e -> details.add("root| " + e.getKey() + " " + e.getValue()));
            }
        } catch (IntegrationTest.Failure f) {
            t.fail(name, f.getMessage(), f.evidence);
            return;
        } catch (IOException e) {
            t.fail(name, e.toString(), List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }
}
