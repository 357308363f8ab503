import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * async-profiler's interfaces against the real agent:
 * <ul>
 * <li>{@code asprof-cli}: asprof's command lines given unchanged to the jsampler CLI against a running CpuSplit:
 * {@code -d 2 -e cpu -i 1ms -o collapsed PID} (collect by default, the profile on the CLI's stdout, Java names with
 * slashes), {@code stop -o flat PID} after the collect ended (the last profile written again, dotted names),
 * {@code stop -o traces=3 --total PID} (ns), {@code --dot}, {@code start --timeout 2} then {@code stop -o collapsed},
 * {@code status}, {@code list PID}, {@code --fdtransfer --record-cpu} (the profile's stacks under [CPU-N]), and
 * refusals naming the flag: {@code --target-cpu} with itimer (by the agent, exit 5), {@code --reverse} (by the CLI,
 * exit 2).</li>
 * <li>{@code asprof-proc}: {@code proc=1} beside a busy shell loop (see {@link #proc}).</li>
 * <li>{@code asprof-features}: {@code features=vtable+comptask} on Poly (see {@link #features}).</li>
 * <li>{@code asprof-ttsp}: time-to-safepoint windows, {@code ttsp} and {@code ttsp,nostop} (see {@link #ttsp}).</li>
 * <li>{@code capi-jvm-later}: a native host drives the C API and creates its JVM mid-way (see {@link #capiJvmLater}).</li>
 * <li>{@code asprof-dump-jfr}: {@code dump -o jfr} while a JFR session runs (see {@link #dumpJfr}).</li>
 * <li>{@code asprof-jfrsync}: a JDK Flight Recording joined with ours, at exit and by an attached collect (see
 * {@link #jfrsync}).</li>
 * <li>{@code asprof-lock}: {@code -e lock} attached at run time traces ReentrantLock waits (see {@link #lockAttached}).</li>
 * <li>{@code asprof-live}: LiveBlocks with {@code alloc=1k,live,total}: the collapsed profile written at exit holds
 * keep()'s 10 MB within 20% and nothing of drop()'s; without live both are there (the control).</li>
 * <li>{@code asprof-api}: AsprofApi drives the library through async-profiler's Java API natives
 * (one.profiler.AsyncProfiler): version, start/dump/stop/resume, traces, getSamples, execute1, its exceptions and the
 * thread filter.</li>
 * </ul>
 */
final class AsprofChecks {
    private final IntegrationTest t;
    private final AttachChecks a;

    AsprofChecks(IntegrationTest t, AttachChecks a) {
        this.t = t;
        this.a = a;
    }

    /** Lines of a collapsed profile that are not "stack count". */
    static long badLines(String text) {
        return text.lines().filter(l -> !l.isEmpty() && !l.matches(".+ \\d+")).count();
    }

    void cli() {
        String name = "asprof-cli";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        try (AttachChecks.Target g = a.new Target(name, List.of(), List.of(), "30", "1", AttachChecks.NO_MIN_CPU,
                AttachChecks.HALF_DUTY)) {
            g.awaitUp();
            String pid = Long.toString(g.pid);
            AttachChecks.Out c = a.jsampler("-d", "2", "-e", "cpu", "-i", "1ms", "-o", "collapsed", pid);
            AttachChecks.expect("collect", c, 0, "Profiling for 2 seconds", problems, details);
            if (!c.out.contains("CpuSplit.burnA") || badLines(c.out) > 0) {
                problems.add("collect: stdout is not the collapsed profile with CpuSplit.burnA: " + head(c.out));
            }
            if (!c.out.contains("java/lang/Thread.run") || c.out.contains("java.lang.Thread.run")) {
                problems.add("collect: Java frames not written java/lang/Thread.run as async-profiler does");
            }
            AttachChecks.Out f = a.jsampler("stop", "-o", "flat", pid);
            AttachChecks.expect("stop after collect", f, 0, "Total:", problems, details);
            if (!f.out.contains("CpuSplit.burnA") || !f.out.contains("java.lang.Thread.run")) {
                problems.add("stop after collect: the flat profile of the collect (dotted names) is not on stdout: "
                        + head(f.out));
            }
            AttachChecks.Out tr = a.jsampler("stop", "-o", "traces=3", "--total", pid);
            AttachChecks.expect("traces --total", tr, 0, " ns (", problems, details);
            AttachChecks.Out d = a.jsampler("-d", "1", "--dot", "-o", "collapsed", pid);
            AttachChecks.expect("--dot", d, 0, "java.lang.Thread.run", problems, details);
            AttachChecks.Out s = a.jsampler("start", "-e", "cpu", "-i", "1ms", "--timeout", "2", pid);
            AttachChecks.expect("start --timeout 2", s, 0, "profiling started", problems, details);
            Thread.sleep(3500);
            AttachChecks.Out st = a.jsampler("status", pid);
            AttachChecks.expect("status after the timeout", st, 0, "state=idle", problems, details);
            AttachChecks.Out e = a.jsampler("stop", "-o", "collapsed", pid);
            AttachChecks.expect("stop after the timeout", e, 0, "CpuSplit.burnA", problems, details);
            AttachChecks.expect("list", a.jsampler("list", pid), 0, "Basic events:", problems, details);
            AttachChecks.expect("--target-cpu with itimer refused", a.jsampler("-e", "itimer", "--target-cpu", "1",
                    pid), 5, "'target-cpu': needs a perf_events event", problems, details);
            AttachChecks.expect("--fdtransfer --record-cpu", a.jsampler("-d", "1", "--fdtransfer", "--record-cpu",
                    "-o", "collapsed", pid), 0, "[CPU-", problems, details);
            AttachChecks.expect("--reverse refused", a.jsampler("-d", "1", "--reverse", pid), 2,
                    "--reverse: not supported", problems, details);
        } catch (Exception ex) {
            problems.add("harness: " + ex);
        }
        t.report(name, problems, details, t0);
    }

    /**
     * {@code asprof-lock}: {@code -e lock -d 4 -o collapsed} attached to a running LockSplit (synchronized and
     * ReentrantLock sites contended): the ReentrantLock waits are there, parked in Unsafe.park (the agent binds
     * Unsafe.park to its hook when it is loaded after start-up), and their share of the wait time is within 5 points of
     * the share the workload measured (measured: 25.0% and 25.6% sampled on JDK 17 and 25, 24.9% true).
     */
    void lockAttached() {
        String name = "asprof-lock";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        try (AttachChecks.Target g = a.new Target(t.classes, "LockSplit", name, List.of(), List.of(), "9")) {
            g.awaitUp();
            Thread.sleep(1000);
            AttachChecks.Out c = a.jsampler("-e", "lock", "-d", "4", "-o", "collapsed", Long.toString(g.pid));
            AttachChecks.expect("collect", c, 0, "Profiling for 4 seconds", problems, details);
            long reentrant = 0, sync = 0, parked = 0;
            for (String line : c.out.lines().toList()) {
                int sp = line.lastIndexOf(' ');
                if (sp < 0 || !line.substring(sp + 1).matches("\\d+")) continue;
                long w = Long.parseLong(line.substring(sp + 1));
                if (line.contains("LockSplit.reentrantSite")) reentrant += w;
                else if (line.contains("LockSplit.syncSite")) sync += w;
                if (line.contains("LockSplit.reentrantSite") && line.contains("Unsafe.park")) parked += w;
            }
            int exit = g.finish();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("syncWaitNs=(\\d+) reentrantWaitNs=(\\d+)")
                    .matcher(g.stdoutText());
            if (exit != 0 || !m.find()) {
                problems.add("LockSplit did not end with its TRUTH line (exit " + exit + ")");
            } else {
                double truth = Double.parseDouble(m.group(2)) / (Double.parseDouble(m.group(1))
                        + Double.parseDouble(m.group(2)));
                double sampled = reentrant + sync > 0 ? reentrant / (double) (reentrant + sync) : 0;
                details.add(String.format(java.util.Locale.ROOT, "ReentrantLock waits %.1f%% of the sampled wait time "
                        + "(%d ns parked in Unsafe.park), %.1f%% measured by the workload", 100 * sampled, parked,
                        100 * truth));
                if (parked == 0) problems.add("no ReentrantLock wait parked in Unsafe.park: park is not traced");
                if (Math.abs(sampled - truth) > 0.05) problems.add(String.format(java.util.Locale.ROOT,
                        "ReentrantLock share %.1f%% vs %.1f%% measured (limit 5 points)", 100 * sampled, 100 * truth));
            }
        } catch (Exception ex) {
            problems.add("harness: " + ex);
        }
        t.report(name, problems, details, t0);
    }

    /** Bytes on collapsed lines through method m (the alloc profile's unit with total). */
    static long bytesThrough(String collapsed, String m) {
        return collapsed.lines().filter(l -> l.contains(m)).mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    void live() {
        String name = "asprof-live";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        for (String mode : List.of("live", "all")) {
            Path out = t.runDir(name + "-" + mode).resolve("alloc.collapsed");
            String opts = "start,alloc=1k,total,file=" + out + (mode.equals("live") ? ",live" : "");
            IntegrationTest.Run r = t.launch(name + "-" + mode, List.of(), opts, "LiveBlocks");
            problems.addAll(r.crashSigns());
            String text;
            try {
                text = Files.readString(out);
            } catch (Exception ex) {
                problems.add(mode + ": no profile: " + ex + " " + String.join(" ", r.stderrTail(3)));
                continue;
            }
            long keep = bytesThrough(text, "LiveBlocks.keep"), drop = bytesThrough(text, "LiveBlocks.drop");
            details.add(String.format("%s: keep %d bytes, drop %d bytes", mode, keep, drop));
            if (Math.abs(keep - 10_000_000L) > 2_000_000L) {
                problems.add(mode + ": keep() shows " + keep + " bytes, expected 10 MB within 20%");
            }
            if (mode.equals("live") && drop != 0) {
                problems.add("live: drop()'s garbage shows " + drop + " bytes");
            }
            if (mode.equals("all") && Math.abs(drop - 10_000_000L) > 2_000_000L) {
                problems.add("without live: drop() shows " + drop + " bytes, expected 10 MB within 20%");
            }
        }
        t.report(name, problems, details, t0);
    }

    void api() {
        String name = "asprof-api";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        IntegrationTest.Run r = t.launch(name, List.of(), null, "AsprofApi", t.agent.toString());
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

    static String head(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
    /**
     * {@code asprof-proc}: NativeLoad zip 3 s with {@code proc=1,file=p.jfr} beside a busy shell loop and an idle
     * {@code sleep}. Read by the JDK's own reader: the JVM itself and the loop are reported in at least 2 readings each
     * (a reading every second, the first a baseline only), the JVM with its command line; each reading of the loop after
     * its first gives as CPU fraction what its CPU seconds (cpuUser + cpuSystem) grew by over the time between the two
     * readings, within 0.1, and at least 0.05 (the bar for being reported; its share of 2 busy CPUs varies with the
     * machine's load); the idle process is never reported (under 5% of a CPU
     * and of RAM).
     */
    void proc() {
        String name = "asprof-proc";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path jfr = t.runDir(name).resolve("p.jfr");
        Process spin = null, idle = null;
        IntegrationTest.Run r;
        try {
            spin = new ProcessBuilder("sh", "-c", "while :; do :; done").start();
            idle = new ProcessBuilder("sleep", "60").start();
            r = t.launch(name, List.of(), "start,proc=1,file=" + jfr, "NativeLoad", "zip", "3");
        } catch (IOException e) {
            problems.add("cannot start the neighbours: " + e);
            t.report(name, problems, details, t0);
            return;
        } finally {
            if (spin != null) spin.destroyForcibly();
            if (idle != null) idle.destroyForcibly();
        }
        problems.addAll(r.crashSigns());
        Map<Long, List<jdk.jfr.consumer.RecordedEvent>> byPid = new HashMap<>();
        try {
            for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(jfr)) {
                if (e.getEventType().getName().equals("profiler.ProcessSample")) {
                    byPid.computeIfAbsent((long) e.getInt("pid"), k -> new ArrayList<>()).add(e);
                }
            }
        } catch (IOException e) {
            problems.add("the JDK cannot read " + jfr + ": " + e);
        }
        List<jdk.jfr.consumer.RecordedEvent> jvm = byPid.getOrDefault(r.pid, List.of()),
                loop = byPid.getOrDefault(spin.pid(), List.of());
        details.add(String.format(Locale.ROOT, "%d processes reported; the JVM %d times, the loop %d, the idle sleep %d",
                byPid.size(), jvm.size(), loop.size(), byPid.getOrDefault(idle.pid(), List.of()).size()));
        if (jvm.size() < 2 || !jvm.get(0).getString("cmdLine").contains("NativeLoad")) {
            problems.add("the JVM itself: " + jvm.size() + " readings" + (jvm.isEmpty() ? "" : ", command line '"
                    + jvm.get(0).getString("cmdLine") + "'"));
        }
        if (loop.size() < 2) problems.add("the busy loop: " + loop.size() + " readings, expected at least 2");
        if (byPid.containsKey(idle.pid())) problems.add("the idle sleep was reported");
        for (int i = 1; i < loop.size(); i++) {
            jdk.jfr.consumer.RecordedEvent a0 = loop.get(i - 1), a1 = loop.get(i);
            double cpu = a1.getFloat("cpuUser") + a1.getFloat("cpuSystem") - a0.getFloat("cpuUser") - a0.getFloat("cpuSystem");
            double dt = java.time.Duration.between(a0.getStartTime(), a1.getStartTime()).toNanos() / 1e9;
            double said = a1.getFloat("cpuPercent");
            details.add(String.format(Locale.ROOT, "loop reading %d: CPU fraction %.3f, its CPU seconds %.2f over %.3f s = %.3f",
                    i, said, cpu, dt, cpu / dt));
            if (Math.abs(said - cpu / dt) > 0.1 || said < 0.05) {
                problems.add(String.format(Locale.ROOT, "loop reading %d: CPU fraction %.3f, but %.3f from its CPU seconds "
                        + "(expected within 0.1, and at least 0.05)", i, said, cpu / dt));
            }
        }
        t.report(name, problems, details, t0);
    }
    /**
     * {@code asprof-jfrsync}: CpuSplit with {@code jfrsync} and {@code event=cpu,interval=1ms} into one file, once
     * started by -agentpath and written at exit (the JDK's shutdown hook has stopped its recording by then), once by
     * an attached {@code -d 2 --jfrsync default -f FILE} (stopped by us). Read by the JDK's RecordingFile: the JDK's
     * own events are there (jdk.OSInformation, jdk.JVMInformation), jsampler's execution samples are (at least 300,
     * at least 70% of them in CpuSplit's burn methods: the rest
     * are the JIT compilers' and GC's, 12-15% here), and the JDK's own execution samples are not (switched off in
     * its recording); {@code jfr print --events jdk.ExecutionSample} finds exactly as many (it caches event types by
     * id across the file's chunks); nothing made beside the file is left.
     */
    void jfrsync() {
        String name = "asprof-jfrsync";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path atExit = t.runDir(name + "-exit").resolve("p.jfr");
        IntegrationTest.Run r = t.launch(name + "-exit", List.of(), "start,event=cpu,interval=1ms,jfrsync,file=" + atExit,
                "CpuSplit", "3", "2");
        problems.addAll(r.crashSigns());
        if (r.exitCode != 0) problems.add("at exit: exit " + r.exitCode + " in " + r.dir);
        joined("at exit", atExit, problems, details);
        try (AttachChecks.Target g = a.new Target(name, List.of(), List.of(), "30", "2")) {
            g.awaitUp();
            Path attached = Files.createDirectories(t.runDir(name + "-attach")).resolve("p.jfr");
            AttachChecks.Out c = a.jsampler("-d", "2", "-e", "cpu", "-i", "1ms", "--jfrsync", "default", "-f",
                    attached.toString(), Long.toString(g.pid));
            AttachChecks.expect("attached collect", c, 0, "jfrsync: wrote", problems, details);
            joined("attached", attached, problems, details);
        } catch (Exception ex) {
            problems.add("harness: " + ex);
        }
        t.report(name, problems, details, t0);
    }

    /** The checks of {@link #jfrsync} on one joined file. */
    private void joined(String what, Path jfr, List<String> problems, List<String> details) {
        // The workers' samples must be in the burn methods (they do nothing else). All samples are not judged: the
        // other threads' share is the JVM's own work in the window (C2 compiling, on a slow machine 25% of the
        // samples of a 2 s collect just after start) and the profiler's (the first kernel frame's name reads
        // /proc/kallsyms, about 0.1 s of CPU), not a property of the recording.
        long os = 0, jvm = 0, samples = 0, workers = 0, burn = 0;
        try {
            for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(jfr)) {
                String type = e.getEventType().getName();
                if (type.equals("jdk.OSInformation")) os++;
                if (type.equals("jdk.JVMInformation")) jvm++;
                if (!type.equals("jdk.ExecutionSample")) continue;
                samples++;
                jdk.jfr.consumer.RecordedThread th = e.getThread("sampledThread");
                if (th == null || th.getJavaName() == null || !th.getJavaName().startsWith("cpusplit-")) continue;
                workers++;
                if (e.getStackTrace() != null && e.getStackTrace().getFrames().stream()
                        .anyMatch(f -> f.getMethod().getName().startsWith("burn"))) burn++;
            }
            Process p = new ProcessBuilder(t.java.getParent().resolve("jfr").toString(), "print", "--events",
                    "jdk.ExecutionSample", jfr.toString()).redirectErrorStream(true).start();
            long printed = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                    .lines().filter(l -> l.startsWith("jdk.ExecutionSample {")).count();
            p.waitFor();
            details.add(String.format(Locale.ROOT, "%s: jdk.OSInformation %d, jdk.JVMInformation %d, execution samples %d "
                    + "(%d of the workers, %d of those in burn methods), jfr print --events finds %d", what, os, jvm,
                    samples, workers, burn, printed));
            if (os == 0 || jvm == 0) problems.add(what + ": the JDK's own events are missing");
            if (workers < 300 || burn < 0.9 * workers) {
                problems.add(what + ": " + workers + " execution samples of the workers (of " + samples + "), " + burn
                        + " in the burn methods");
            }
            if (printed != samples) problems.add(what + ": jfr print --events finds " + printed + " of " + samples);
            try (java.util.stream.Stream<Path> left = Files.list(jfr.getParent())) {
                List<String> extra = left.map(x -> x.getFileName().toString())
                        .filter(n -> n.startsWith("p.jfr.")).collect(java.util.stream.Collectors.toList());
                if (!extra.isEmpty()) problems.add(what + ": left beside the file: " + extra);
            }
        } catch (IOException | InterruptedException e) {
            problems.add(what + ": cannot read " + jfr + ": " + e);
        }
    }
    /**
     * {@code asprof-dump-jfr}: {@code start -e cpu -i 1ms -f p.jfr} attached to CpuSplit, then after 1.5 s {@code dump
     * -o jfr}: the chunk in progress is ended, so the file's first chunk, cut from a copy taken right after the dump, is
     * a whole recording the JDK's reader reads (at least 500 samples, all of CpuSplit's process); after {@code stop}
     * the file has a second chunk and the JDK reads both (more samples than the first chunk alone).
     */
    void dumpJfr() {
        String name = "asprof-dump-jfr";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        try (AttachChecks.Target g = a.new Target(name, List.of(), List.of(), "30", "2")) {
            g.awaitUp();
            String pid = Long.toString(g.pid);
            Path dir = Files.createDirectories(t.runDir(name)), jfr = dir.resolve("p.jfr"), first = dir.resolve("first.jfr");
            AttachChecks.expect("start", a.jsampler("start", "-e", "cpu", "-i", "1ms", "-f", jfr.toString(), pid), 0,
                    "profiling started", problems, details);
            Thread.sleep(1500);
            AttachChecks.expect("dump -o jfr", a.jsampler("dump", "-o", "jfr", pid), 0, "complete up to now", problems,
                    details);
            byte[] b = Files.readAllBytes(jfr);
            long size = b.length >= 16 ? java.nio.ByteBuffer.wrap(b, 8, 8).getLong() : -1;
            if (size < 68 || size > b.length) {
                problems.add("the file after the dump has no complete first chunk (size field " + size + ", " + b.length
                        + " bytes)");
            } else {
                Files.write(first, java.util.Arrays.copyOf(b, (int) size));
                long n = jdk.jfr.consumer.RecordingFile.readAllEvents(first).stream()
                        .filter(e -> e.getEventType().getName().equals("jdk.ExecutionSample")).count();
                details.add("first chunk after the dump: " + size + " bytes, " + n + " execution samples");
                if (n < 500) problems.add("the dumped chunk holds " + n + " execution samples (expected at least 500)");
                AttachChecks.expect("stop", a.jsampler("stop", pid), 0, "wrote JFR recording", problems, details);
                long all = jdk.jfr.consumer.RecordingFile.readAllEvents(jfr).stream()
                        .filter(e -> e.getEventType().getName().equals("jdk.ExecutionSample")).count();
                details.add("whole file after stop: " + all + " execution samples");
                if (all <= n) problems.add("after stop the file holds " + all + " samples, no more than the dump's " + n);
            }
        } catch (Exception ex) {
            problems.add("harness: " + ex);
        }
        t.report(name, problems, details, t0);
    }
    /**
     * {@code capi-jvm-later}: capi_host (a native program, no JVM at first) starts a session through async-profiler's
     * C API with {@code cstack=vmx}, burns CPU in its own host_burn, creates a JVM and runs CpuSplit in it for 1 s, stops
     * into p1; starts again and does the same, stops into p2. p1: host_burn's samples, and none in Java methods (the
     * session began without a JVM); p2: host_burn's and CpuSplit's (the command that found no session running joined
     * the JVM created since), and the log says so once. Skipped when the host could not be built.
     */
    void capiJvmLater() {
        String name = "capi-jvm-later";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        if (t.capiHost == null || !Files.isExecutable(t.capiHost)) {
            t.skip(name, "the C API host capi_host was not built");
            return;
        }
        try {
            Path dir = Files.createDirectories(t.runDir(name)), p1 = dir.resolve("p1.collapsed"), p2 = dir.resolve("p2.collapsed");
            Path javaHome = t.java.getParent().getParent();
            Process p = new ProcessBuilder(t.capiHost.toString(), t.agent.toString(), javaHome.toString(),
                    t.classes.toString(), p1.toString(), p2.toString()).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
                problems.add("capi_host failed: " + log.lines().filter(l -> !l.startsWith("TRUTH"))
                        .reduce((a, b) -> b).orElse(""));
            }
            String s1 = Files.exists(p1) ? Files.readString(p1) : "", s2 = Files.exists(p2) ? Files.readString(p2) : "";
            long h1 = weight(s1, "host_burn"), j1 = weight(s1, "CpuSplit."), h2 = weight(s2, "host_burn"),
                    j2 = weight(s2, "CpuSplit.burn");
            details.add(String.format(Locale.ROOT, "session 1 (no JVM at start): host_burn %d, Java %d; session 2: "
                    + "host_burn %d, CpuSplit.burn* %d", h1, j1, h2, j2));
            if (h1 < 50 || j1 != 0) problems.add("session 1: host_burn " + h1 + " (expected >= 50), Java " + j1 + " (expected 0)");
            if (h2 < 50 || j2 < 200) problems.add("session 2: host_burn " + h2 + " (expected >= 50), CpuSplit " + j2
                    + " (expected >= 200)");
            if (!log.contains("set up on the JVM the process created")) problems.add("no log line says the JVM was joined");
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    /** Samples of a collapsed text on stacks holding frame. */
    private static long weight(String collapsed, String frame) {
        return collapsed.lines().filter(l -> l.contains(frame))
                .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }
    /**
     * {@code asprof-ttsp}: Safepoints 3 s (a safepoint asked for every 200 ms, reached only when the worker's current
     * Unsafe.setMemory call of 256 MiB ends) with {@code event=cpu,interval=1ms,ttsp} into JFR, read by the JDK's reader:
     * at least 5 profiler.Window events (from SafepointSynchronize::begin to the safepoint reached); every execution
     * sample within 1 ms of a window, and at least 3 of them in the worker's setMemory. With {@code nostop} the windows
     * are recorded and at least 100 samples fall outside them.
     */
    void ttsp() {
        String name = "asprof-ttsp";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        for (String mode : List.of("ttsp", "ttsp,nostop")) {
            String run = name + (mode.contains("nostop") ? "-nostop" : "");
            Path jfr = t.runDir(run).resolve("t.jfr");
            IntegrationTest.Run r = t.launch(run, List.of(), "start,event=cpu,interval=1ms," + mode + ",file=" + jfr,
                    "Safepoints", "3");
            problems.addAll(r.crashSigns());
            if (r.exitCode != 0) problems.add(mode + ": exit " + r.exitCode + " in " + r.dir);
            List<java.time.Instant[]> windows = new ArrayList<>();
            List<jdk.jfr.consumer.RecordedEvent> samples = new ArrayList<>();
            try {
                for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(jfr)) {
                    String type = e.getEventType().getName();
                    if (type.equals("profiler.Window")) windows.add(new java.time.Instant[] {e.getStartTime(), e.getEndTime()});
                    else if (type.equals("jdk.ExecutionSample")) samples.add(e);
                }
            } catch (IOException e) {
                problems.add(mode + ": the JDK cannot read " + jfr + ": " + e);
                continue;
            }
            long outside = 0, inWorker = 0;
            for (jdk.jfr.consumer.RecordedEvent s : samples) {
                java.time.Instant at = s.getStartTime();
                boolean in = windows.stream().anyMatch(w -> !at.isBefore(w[0].minusMillis(1)) && !at.isAfter(w[1].plusMillis(1)));
                if (!in) outside++;
                if (in && s.getStackTrace() != null && s.getStackTrace().getFrames().stream()
                        .anyMatch(f -> f.getMethod().getName().equals("clearMemory"))) inWorker++;
            }
            details.add(String.format(Locale.ROOT, "%s: %d windows, %d samples, %d outside the windows, %d in them in "
                    + "the worker's setMemory", mode, windows.size(), samples.size(), outside, inWorker));
            if (windows.size() < 5) problems.add(mode + ": " + windows.size() + " windows (expected at least 5)");
            if (mode.equals("ttsp") && (outside != 0 || inWorker < 3)) {
                problems.add("ttsp: " + outside + " samples outside the windows (expected 0), " + inWorker
                        + " in setMemory (expected at least 3)");
            }
            if (mode.contains("nostop") && outside < 100) {
                problems.add("ttsp,nostop: " + outside + " samples outside the windows (expected at least 100)");
            }
        }
        t.report(name, problems, details, t0);
    }
    /**
     * {@code asprof-features}: Poly 3 s (megamorphic virtual and interface calls) with {@code event=cpu,interval=1ms,
     * features=vtable+comptask,cstack=dwarf}: at least 80% of the samples in a vtable or itable stub name the call's
     * receiver class under the stub ({@code Poly$Var_[i]}, as async-profiler writes it), at least 5 distinct classes of
     * Poly among them; and the JIT compiler threads' stacks hold the Java method being compiled under
     * {@code C2Compiler::compile_method} (at least 10 samples). Then attached at run time to Dispatch (a megamorphic
     * call in a method inlined into its caller, compiled before the attach, so without the debug information
     * DebugNonSafepoints adds): of the samples under its vtable stub, at least 90% show the inlined caller
     * ({@code Dispatch.spin;Dispatch.average;vtable stub}), named from the call site.
     */
    void features() {
        String name = "asprof-features";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path out = t.runDir(name).resolve("p.collapsed");
        IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cpu,interval=1ms,features=vtable+comptask,"
                + "cstack=dwarf,file=" + out, "Poly", "3", "2");
        problems.addAll(r.crashSigns());
        if (r.exitCode != 0) problems.add("exit " + r.exitCode + " in " + r.dir);
        long stub = 0, named = 0, compiling = 0;
        java.util.Set<String> classes = new java.util.TreeSet<>();
        java.util.regex.Pattern receiver = java.util.regex.Pattern.compile("[vi]table stub;(Poly\\$\\w+)_\\[i\\]($| )");
        java.util.regex.Pattern task = java.util.regex.Pattern.compile("C2Compiler::compile_method;[\\w$/.]+\\.[\\w$<>]+;");
        try {
            for (String line : Files.readAllLines(out)) {
                long n = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
                if (line.contains("table stub")) {
                    stub += n;
                    java.util.regex.Matcher m = receiver.matcher(line);
                    if (m.find()) {
                        named += n;
                        classes.add(m.group(1));
                    }
                }
                if (task.matcher(line).find()) compiling += n;
            }
        } catch (IOException e) {
            problems.add("no profile: " + e);
        }
        details.add(String.format(Locale.ROOT, "%d samples in vtable/itable stubs, %d with the receiver's class (%s); %d "
                + "compiler samples with the method compiled", stub, named, classes, compiling));
        if (stub == 0 || named < 0.8 * stub || classes.size() < 5) {
            problems.add("vtable: " + named + " of " + stub + " stub samples name a receiver class of Poly (expected at "
                    + "least 80%), " + classes.size() + " classes (expected at least 5)");
        }
        if (compiling < 10) problems.add("comptask: " + compiling + " compiler samples with the method compiled (expected "
                + "at least 10)");
        try (AttachChecks.Target g = a.new Target(t.classes, "Dispatch", name + "-attach", List.of(), List.of(), "8")) {
            g.awaitUp();
            Thread.sleep(1500); /* compiled before the attach */
            AttachChecks.Out c = a.jsampler("-d", "2", "-e", "cpu", "-i", "1ms", "-F", "vtable", "-o", "collapsed",
                    Long.toString(g.pid));
            long inStub = 0, exact = 0;
            for (String line : c.out.lines().collect(java.util.stream.Collectors.toList())) {
                if (!line.contains(";vtable stub")) continue;
                long n = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
                inStub += n;
                if (line.contains("Dispatch.spin;Dispatch.average;vtable stub")) exact += n;
            }
            details.add(String.format(Locale.ROOT, "attached: %d samples in the vtable stub, %d under "
                    + "Dispatch.spin;Dispatch.average", inStub, exact));
            if (inStub < 20 || exact < 0.9 * inStub) {
                problems.add("attached: " + exact + " of " + inStub + " vtable stub samples under the inlined caller "
                        + "Dispatch.average (expected at least 90% of at least 20)");
            }
        } catch (Exception ex) {
            problems.add("harness: " + ex);
        }
        t.report(name, problems, details, t0);
    }
}
