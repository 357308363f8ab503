import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Attaching to a running JVM: the {@code jsampler} CLI, the JDK's {@code jcmd} and Debian's {@code jattach} against
 * CpuSplit targets started without any agent.
 *
 * <ul>
 * <li>{@code attach-cli}: start, status, dump, a second start (refused, exit 5), stop, a second stop (refused), then
 *     the target's own TRUTH line: burnA/B/C sampled within 3 points of their measured shares (the -agentpath
 *     standard: CpuSplit keeps its split fixed in every round, so a profile of part of the run has the same shares as
 *     the whole run's truth); and {@code collect -d 3} on a second target, whose profile has burnA &gt; burnB &gt;
 *     burnC.</li>
 * <li>{@code attach-jcmd}, {@code attach-jattach}: the same start and stop through those tools ("return code: 0"),
 *     with the same 3-point shares and a target that runs to its end.</li>
 * <li>{@code attach-cycles}: 50 start/stop cycles into one JVM, every one exit 0; its descriptor count back to what
 *     it was after the first cycle, and no new thread but those of HotSpot's own JIT compiler and GC worker pools,
 *     which it grows by itself with load.</li>
 * <li>{@code attach-errors}: each failure's exit code and the words of its message (no such process, not a JVM,
 *     -XX:+DisableAttachMechanism, a stopped JVM, a relative or missing library, a bad agent option, usage errors,
 *     another user attaching to root's JVM).</li>
 * <li>{@code attach-other-uid}: as root, into a JVM running as another user, past a dead root-owned socket planted
 *     at its attach path (what a killed JVM of the same pid leaves); {@code attach-namespace}: into a JVM
 *     in its own pid and mount namespaces ({@code unshare --pid --mount-proc}).</li>
 * </ul>
 */
final class AttachChecks {
    static final double MAX_SHARE_ERROR = 3.0;
    static final Pattern TRUTH = Pattern.compile("TRUTH burnA=([0-9.]+) burnB=([0-9.]+) burnC=([0-9.]+)");
    static final String[] BURNS = {"CpuSplit.burnA", "CpuSplit.burnB", "CpuSplit.burnC"};
    static final int NOBODY = 65534;

    private final IntegrationTest t;
    private final Path cli;
    private Path shared; /* copies another user can read: the CLI, the agent, CpuSplit.class */

    AttachChecks(IntegrationTest t) {
        this.t = t;
        this.cli = t.agent.getParent().resolve("jsampler");
    }

    /** A process's exit code and output. */
    static final class Out {
        int code;
        String out = "", err = "";

        @Override
        public String toString() {
            return "exit " + code + ": " + (out + err).trim().replace('\n', ' ');
        }
    }

    /** Runs a command to its end (60 s at most). */
    static Out run(List<String> cmd) {
        Out o = new Out();
        try {
            Process p = new ProcessBuilder(cmd).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            byte[] err = p.getErrorStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                o.code = -1;
            } else {
                o.code = p.exitValue();
            }
            o.out = new String(out, StandardCharsets.UTF_8);
            o.err = new String(err, StandardCharsets.UTF_8);
        } catch (IOException | InterruptedException e) {
            o.code = -2;
            o.err = e.toString();
        }
        return o;
    }

    /** A world-readable directory under /tmp with copies of the CLI, the agent and CpuSplit.class: the checks that
     * run a JVM or the CLI as another user must not depend on where the build tree lives (its parents may be
     * private). Removed at JVM exit. */
    Path shared() throws IOException {
        if (shared != null) {
            return shared;
        }
        Path d = Files.createTempDirectory("jsampler-attach-");
        d.toFile().deleteOnExit();
        for (Path p : List.of(cli, t.agent, t.classes.resolve("CpuSplit.class"))) {
            Path c = d.resolve(p.getFileName());
            Files.copy(p, c, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            c.toFile().deleteOnExit();
            Files.setPosixFilePermissions(c, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Files.setPosixFilePermissions(d, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        return shared = d;
    }

    Out jsampler(String... args) {
        List<String> cmd = new ArrayList<>(List.of(cli.toString()));
        cmd.addAll(Arrays.asList(args));
        return run(cmd);
    }

    /** A target JVM started without an agent (prefix: a wrapper such as setpriv or unshare). */
    final class Target implements AutoCloseable {
        final Process proc;
        final Path stdout;
        long pid;

        Target(String name, List<String> prefix, List<String> jvmArgs, String... args) throws IOException {
            this(name, prefix, jvmArgs, t.classes, args);
        }

        Target(String name, List<String> prefix, List<String> jvmArgs, Path classes, String... args) throws IOException {
            this(classes, "CpuSplit", name, prefix, jvmArgs, args);
        }

        Target(Path classes, String main, String name, List<String> prefix, List<String> jvmArgs, String... args)
                throws IOException {
            Path dir = t.runDir(name);
            Files.createDirectories(dir);
            List<String> cmd = new ArrayList<>(prefix);
            cmd.add(t.java.toString());
            cmd.addAll(jvmArgs);
            cmd.addAll(List.of("-cp", classes.toString(), main));
            cmd.addAll(Arrays.asList(args));
            stdout = dir.resolve("target-stdout.txt");
            proc = new ProcessBuilder(cmd).directory(dir.toFile()).redirectOutput(stdout.toFile())
                    .redirectError(dir.resolve("target-stderr.txt").toFile()).start();
            pid = proc.pid();
        }

        /** Waits until the JVM has started (its main thread runs), at most 10 s. */
        void awaitUp() throws InterruptedException {
            for (int i = 0; i < 100; i++) {
                if (javaPid() > 0) {
                    Thread.sleep(700); // past start-up: its attach listener can be started
                    return;
                }
                Thread.sleep(100);
            }
        }

        /** The JVM's pid: this process, or (behind a wrapper) its java descendant. */
        long javaPid() {
            if (isJava(proc.pid())) {
                pid = proc.pid();
                return pid;
            }
            return proc.descendants().filter(h -> isJava(h.pid())).findFirst().map(h -> pid = h.pid()).orElse(-1L);
        }

        int finish() throws InterruptedException {
            if (!proc.waitFor(60, TimeUnit.SECONDS)) {
                return -1;
            }
            return proc.exitValue();
        }

        String stdoutText() throws IOException {
            return Files.readString(stdout);
        }

        @Override
        public void close() {
            proc.descendants().forEach(ProcessHandle::destroyForcibly);
            proc.destroyForcibly();
        }
    }

    /**
     * CpuSplit's minCpuSeconds and duty for a target busy half its time, for checks that judge only which method
     * dominates a few seconds of samples (which holds at any duty) or that a session has samples at all: the targets
     * live through a whole check, and at full duty the attach targets burned 80 CPU-s of a clean-clone run. Checks
     * that compare shares with the truth on at least 1,000 samples keep full duty.
     */
    static final String NO_MIN_CPU = "0", HALF_DUTY = "0.5";

    static boolean isJava(long pid) {
        try {
            return Files.readString(Path.of("/proc/" + pid + "/maps")).contains("/libjvm.so");
        } catch (IOException e) {
            return false;
        }
    }

    /** Sampled shares (points) of burnA/B/C among the samples in any of them. */
    static double[] shares(Path collapsed) throws IOException {
        long[] n = new long[3];
        for (String line : Files.readAllLines(collapsed)) {
            int sp = line.lastIndexOf(' ');
            if (sp < 0) {
                continue;
            }
            long w = Long.parseLong(line.substring(sp + 1));
            for (int i = 0; i < 3; i++) {
                if (line.contains(BURNS[i])) {
                    n[i] += w;
                }
            }
        }
        long all = n[0] + n[1] + n[2];
        double[] s = new double[4];
        for (int i = 0; i < 3; i++) {
            s[i] = all == 0 ? 0 : 100.0 * n[i] / all;
        }
        s[3] = all;
        return s;
    }

    /** Compares a profile with the target's TRUTH line; problems added, a detail line returned. */
    static String compare(String label, Path collapsed, String targetOut, List<String> problems) throws IOException {
        Matcher m = TRUTH.matcher(targetOut);
        if (!m.find()) {
            problems.add(label + ": the target printed no TRUTH line (did it survive?)");
            return label + ": no truth";
        }
        if (!Files.isRegularFile(collapsed)) {
            problems.add(label + ": no profile at " + collapsed);
            return label + ": no profile";
        }
        double[] s = shares(collapsed);
        StringBuilder d = new StringBuilder(label + ": " + (long) s[3] + " samples;");
        for (int i = 0; i < 3; i++) {
            double truth = 100 * Double.parseDouble(m.group(i + 1));
            d.append(String.format(Locale.ROOT, " %s %.2f%% (truth %.2f%%)", BURNS[i], s[i], truth));
            if (Math.abs(s[i] - truth) > MAX_SHARE_ERROR) {
                problems.add(String.format(Locale.ROOT, "%s: %s off by %.2f points", label, BURNS[i],
                        Math.abs(s[i] - truth)));
            }
        }
        if (s[3] < 1000) {
            problems.add(label + ": only " + (long) s[3] + " samples in the burn methods");
        }
        return d.toString();
    }

    static void expect(String label, Out o, int code, String words, List<String> problems, List<String> details) {
        details.add(label + ": " + o);
        if (o.code != code) {
            problems.add(label + ": exit " + o.code + ", expected " + code);
        }
        if (words != null && !(o.out + o.err).contains(words)) {
            problems.add(label + ": the message does not say '" + words + "'");
        }
    }

    void cliVerbs() {
        String name = "attach-cli";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path dir = t.runDir(name);
        try (Target a = new Target(name, List.of(), List.of(), "8", "2")) {
            a.awaitUp();
            String pid = Long.toString(a.pid);
            expect("start", jsampler("start", "-e", "cpu", "-i", "1ms", pid), 0, "profiling started", problems, details);
            Thread.sleep(1000);
            expect("status", jsampler("status", pid), 0, "state=running", problems, details);
            Path html = dir.resolve("now.html");
            expect("dump", jsampler("dump", "-f", html.toString(), pid), 0, "wrote html", problems, details);
            if (!Files.isRegularFile(html) || !Files.readString(html).contains("CpuSplit.burnA")) {
                problems.add("the dumped page does not show CpuSplit.burnA");
            }
            expect("start again", jsampler("start", pid), 5, "already running", problems, details);
            Thread.sleep(3000);
            Path out = dir.resolve("attach.collapsed");
            expect("stop", jsampler("stop", "-f", out.toString(), pid), 0, "wrote collapsed", problems, details);
            /* as asprof: a stop after the session ended writes its profile again (on stdout without -f) */
            Out again = jsampler("stop", pid);
            expect("stop again", again, 0, "wrote collapsed", problems, details);
            if (!again.out.contains("CpuSplit.burnA")) problems.add("stop again: the last profile is not on stdout");
            int code = a.finish();
            if (code != 0) {
                problems.add("the target exited " + code + " after the attach");
            }
            details.add(compare("shares", out, a.stdoutText(), problems));
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        try (Target b = new Target(name + "-collect", List.of(), List.of(), "8", "1", NO_MIN_CPU, HALF_DUTY)) {
            b.awaitUp();
            Path out = dir.resolve("collect.collapsed");
            expect("collect", jsampler("collect", "-d", "3", "-i", "1ms", "-f", out.toString(), Long.toString(b.pid)),
                    0, "wrote collapsed", problems, details);
            if (Files.isRegularFile(out)) {
                double[] s = shares(out);
                details.add(String.format(Locale.ROOT, "collect: burnA %.1f%%, burnB %.1f%%, burnC %.1f%%", s[0], s[1],
                        s[2]));
                if (!(s[0] > s[1] && s[1] > s[2])) {
                    problems.add("collect: burnA > burnB > burnC does not hold");
                }
            }
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    /** Start and stop through jcmd or jattach. */
    void tool(String which) {
        String name = "attach-" + which;
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path exe = which.equals("jcmd") ? t.java.getParent().resolve("jcmd") : Path.of("/usr/bin/jattach");
        if (!Files.isExecutable(exe)) {
            details.add("SKIP: " + exe + " is not installed (make deps installs jattach)");
            t.report(name, problems, details, t0);
            return;
        }
        Path out = t.runDir(name).resolve("tool.collapsed");
        // jcmd is a JVM of its own: its three runs took the 8 s target past its end on a loaded machine (the third,
        // the bad option, found the target gone), so its target runs 12 s; jattach's runs take milliseconds.
        String seconds = which.equals("jcmd") ? "12" : "8";
        try (Target a = new Target(name, List.of(), List.of(), seconds, "2")) {
            a.awaitUp();
            String pid = Long.toString(a.pid);
            String lib = t.agent.toString();
            List<String> start = which.equals("jcmd")
                    ? List.of(exe.toString(), pid, "JVMTI.agent_load", lib, "\"start,event=cpu,interval=1ms\"")
                    : List.of(exe.toString(), pid, "load", lib, "true", "start,event=cpu,interval=1ms");
            expect("start", run(start), 0, "return code: 0", problems, details);
            Thread.sleep(4000);
            List<String> stop = which.equals("jcmd")
                    ? List.of(exe.toString(), pid, "JVMTI.agent_load", lib, "\"stop,file=" + out + "\"")
                    : List.of(exe.toString(), pid, "load", lib, "true", "stop,file=" + out);
            expect("stop", run(stop), 0, "return code: 0", problems, details);
            List<String> bad = which.equals("jcmd")
                    ? List.of(exe.toString(), pid, "JVMTI.agent_load", lib, "\"bogus=1\"")
                    : List.of(exe.toString(), pid, "load", lib, "true", "bogus=1");
            Out b = run(bad);
            details.add("bad option: " + b);
            if (!(b.out + b.err).contains("return code: 1")) {
                problems.add("a bad option did not come back as return code 1 (JS_ERR_ARGS)");
            }
            int code = a.finish();
            if (code != 0) {
                problems.add("the target exited " + code);
            }
            details.add(compare("shares", out, a.stdoutText(), problems));
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    /** The names (comm) of a process's threads. */
    static List<String> threadNames(String pid) {
        List<String> names = new ArrayList<>();
        try (Stream<Path> s = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) s::iterator) {
                try {
                    names.add(Files.readString(task.resolve("comm")).trim());
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            // the process ended
        }
        return names;
    }

    static long count(String dir) {
        try (Stream<Path> s = Files.list(Path.of(dir))) {
            return s.count();
        } catch (IOException e) {
            return -1;
        }
    }

    void cycles() {
        String name = "attach-cycles";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path out = t.runDir(name).resolve("cycle.collapsed");
        try (Target a = new Target(name, List.of(), List.of(), "120", "1", NO_MIN_CPU, HALF_DUTY)) {
            a.awaitUp();
            String pid = Long.toString(a.pid);
            long tasks = 0, fds = 0, c0 = System.nanoTime();
            List<String> firstNames = new ArrayList<>();
            int bad = 0;
            for (int i = 0; i < 50; i++) {
                Out s = jsampler("start", "-i", "1ms", pid);
                Out e = jsampler("stop", "-f", out.toString(), pid);
                if (s.code != 0 || e.code != 0) {
                    bad++;
                    if (bad <= 2) {
                        details.add("cycle " + i + ": " + s + " / " + e);
                    }
                }
                if (i == 0) {
                    Thread.sleep(500);
                    tasks = count("/proc/" + pid + "/task");
                    fds = count("/proc/" + pid + "/fd");
                    firstNames = threadNames(pid);
                }
            }
            double secs = (System.nanoTime() - c0) / 1e9;
            Thread.sleep(500); // the profiler's own threads end after stop returns
            long tasksEnd = count("/proc/" + pid + "/task"), fdsEnd = count("/proc/" + pid + "/fd");
            List<String> names = threadNames(pid);
            names.removeAll(firstNames);
            details.add(String.format(Locale.ROOT, "50 cycles in %.1f s; threads %d -> %d, fds %d -> %d%s", secs,
                    tasks, tasksEnd, fds, fdsEnd, names.isEmpty() ? "" : "; new threads " + names));
            if (bad > 0) {
                problems.add(bad + " of 50 cycles failed");
            }
            // HotSpot grows its JIT compiler and GC worker pools by itself as load varies: not ours to count.
            names.removeIf(n -> n.matches("(C1 CompilerThre|C2 CompilerThre|GC Thread#|G1 Conc#|G1 Refine#).*"));
            if (fdsEnd != fds || (tasksEnd != tasks && !names.isEmpty())) {
                problems.add("threads or descriptors not back to their count after the first cycle");
            }
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    void errors() {
        String name = "attach-errors";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        try {
            Process dead = new ProcessBuilder("true").start();
            dead.waitFor();
            expect("no such process", jsampler("start", Long.toString(dead.pid())), 4, "no such process", problems,
                    details);
            Process sleeper = new ProcessBuilder("sleep", "30").start();
            try {
                expect("not a JVM", jsampler("start", Long.toString(sleeper.pid())), 4, "not a HotSpot JVM", problems,
                        details);
            } finally {
                sleeper.destroyForcibly();
            }
            expect("usage: no pid", jsampler("start"), 2, "give its pid", problems, details);
            expect("usage: unknown flag", jsampler("-q", "1"), 2, "unknown option '-q'", problems, details);
            expect("usage: -d not a number", jsampler("collect", "-d", "x", "1"), 2, "-d expects seconds", problems,
                    details);
            try (Target off = new Target(name + "-disabled", List.of(), List.of("-XX:+DisableAttachMechanism"), "30",
                    "1", NO_MIN_CPU, HALF_DUTY)) {
                off.awaitUp();
                expect("attach disabled", jsampler("start", Long.toString(off.pid)), 4, "DisableAttachMechanism",
                        problems, details);
            }
            try (Target a = new Target(name, List.of(), List.of(), "30", "1", NO_MIN_CPU, HALF_DUTY)) {
                a.awaitUp();
                String pid = Long.toString(a.pid);
                expect("relative library", jsampler("start", "--libpath", "build/libjsampler.so", pid), 4, "not absolute",
                        problems, details);
                expect("missing library", jsampler("start", "--libpath", "/nonexistent/libjsampler.so", pid), 4,
                        "not readable", problems, details);
                expect("bad agent option", jsampler("start", pid, "--", "bogus=1"), 5, "unknown option", problems,
                        details);
                Path setpriv = Path.of("/usr/bin/setpriv");
                if (Files.isExecutable(setpriv)) {
                    expect("another user", run(List.of(setpriv.toString(), "--reuid=" + NOBODY, "--regid=" + NOBODY,
                            "--clear-groups", shared().resolve("jsampler").toString(), "start", pid)), 4,
                            "accepts only its own user", problems, details);
                } else {
                    details.add("SKIP another user: no setpriv");
                }
                Runtime.getRuntime().exec(new String[] {"kill", "-STOP", pid}).waitFor();
                for (int i = 0; i < 40 && !statusLine(a.pid, "State").contains("T"); i++) {
                    Thread.sleep(50); // the stop takes effect once every thread has taken the signal
                }
                try {
                    expect("stopped JVM", jsampler("start", "--attach-timeout", "1500", pid), 4, "is stopped", problems,
                            details);
                } finally {
                    Runtime.getRuntime().exec(new String[] {"kill", "-CONT", pid}).waitFor();
                }
            }
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    /** Into a JVM behind a wrapper (another user, another namespace): start, 3 s, stop; burnA dominates. */
    void wrapped(String name, List<String> prefix, String why, boolean plantStale) {
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        if (!Files.isExecutable(Path.of(prefix.get(0)))) {
            details.add("SKIP: " + prefix.get(0) + " is not installed");
            t.report(name, problems, details, t0);
            return;
        }
        // one file per JDK: the two JDKs' checks run side by side in one harness, and each deletes its file at the end
        Path out = Path.of("/tmp", "jsampler-" + name + "-" + t.label + "-" + ProcessHandle.current().pid()
                + ".collapsed");
        // one worker busy half its time: about 1,500 samples in the 3 s
        try (Target a = new Target(name, prefix, List.of(), shared(), "8", "1", NO_MIN_CPU, HALF_DUTY)) {
            a.awaitUp();
            long pid = a.javaPid();
            String lib = shared().resolve("libjsampler.so").toString();
            String err = Files.readString(t.runDir(name).resolve("target-stderr.txt")).trim();
            if (pid <= 0 && (err.contains("Operation not permitted") || err.contains("unshare failed"))) {
                details.add("SKIP: this machine does not allow it (" + why + "): " + err);
            } else if (pid <= 0) {
                problems.add("the target JVM did not start (" + why + "): " + err);
            } else {
                details.add("target pid " + pid + ": " + statusLine(pid, "Uid") + "; " + statusLine(pid, "NStgid"));
                if (plantStale) {
                    details.add(plantStaleSocket(pid));
                }
                expect("start", jsampler("start", "--libpath", lib, "-i", "1ms", "-f", out.toString(), Long.toString(pid)),
                        0, "profiling started", problems, details);
                Thread.sleep(3000);
                expect("stop", jsampler("stop", "--libpath", lib, "-f", out.toString(), Long.toString(pid)), 0,
                        "wrote collapsed", problems, details); /* a stop without -f writes to stdout, as asprof's */
                Path seen = Files.isRegularFile(out) ? out : Path.of("/proc/" + pid + "/root" + out);
                if (!Files.isRegularFile(seen)) {
                    problems.add("no profile written at " + out);
                } else {
                    double[] s = shares(seen);
                    details.add(String.format(Locale.ROOT, "burnA %.1f%%, burnB %.1f%%, burnC %.1f%% of %d samples",
                            s[0], s[1], s[2], (long) s[3]));
                    if (!(s[0] > s[1] && s[0] > s[2]) || s[3] < 500) {
                        problems.add("burnA does not dominate the profile");
                    }
                }
            }
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        } finally {
            try {
                Files.deleteIfExists(out);
            } catch (IOException e) {
                // best effort
            }
        }
        t.report(name, problems, details, t0);
    }

    static String statusLine(long pid, String key) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (l.startsWith(key + ":")) {
                    return l.replaceAll("\\s+", " ");
                }
            }
        } catch (IOException e) {
            return key + ": ?";
        }
        return key + ": ?";
    }

    /**
     * Leaves what a root JVM killed with SIGKILL leaves when its pid comes round again: a dead root-owned socket at
     * the attach path. The target (another user) cannot replace it in the sticky /tmp, so the attach must clear it.
     */
    static String plantStaleSocket(long pid) throws IOException {
        Path p = Path.of("/tmp/.java_pid" + pid);
        Files.deleteIfExists(p);
        // bound, never listening: a server channel would listen, and a process this harness spawns meanwhile (from
        // another check's thread) can inherit its descriptor and keep it listening after the close here
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.bind(UnixDomainSocketAddress.of(p));
        }
        return "planted a dead socket owned by uid " + Files.getAttribute(p, "unix:uid") + " at " + p;
    }

    void otherUid() {
        wrapped("attach-other-uid", List.of("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
                "--clear-groups"), "as uid " + NOBODY, true);
    }

    void namespace() {
        wrapped("attach-namespace", List.of("/usr/bin/unshare", "--fork", "--pid", "--mount-proc"),
                "in new pid and mount namespaces", false);
    }
}
