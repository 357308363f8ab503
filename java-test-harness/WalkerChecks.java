import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The stack walker on code AsyncGetCallTrace cannot start from.
 *
 * <p>{@code walker-poly}: the Poly workload (a recursive expression tree evaluated through megamorphic virtual and
 * interface calls, beside a plain loop; it measures its own split in thread CPU time) at 0.5 ms and at 10 ms, Java
 * frames only ({@code cstack=no}: the Java walker is what is judged). With the default walker, failed walks (every pseudo-frame except {@code [no_Java_frame]}, {@code [not_Java_thread]},
 * {@code [truncated]} and {@code [throttled]}, a sample the handler budget kept from being walked) must be at most 1% of the samples, and, at 0.5 ms, the evaluator's
 * sampled share ({@code Poly.evaluate} against {@code Poly.mix}) within 2 points of its measured share. Why 2 points
 * holds: the binomial error of a share near 0.5 is sqrt(0.25/n), 0.41 points at the 14,000 samples of the 0.5 ms run (7 s of CPU)
 * (2 points is 4.9 of it); a run with fewer than 4,000 evaluator-or-loop samples is refused rather than judged. The
 * 10 ms run (about 1,000 samples, 10 s of CPU) is judged on its failed walks only: the walker does not know the interval, and a
 * share judged on so few samples would need a limit too wide to mean anything. To show the workload does exercise the recovery, a 0.5 ms run (3 s of CPU, about 6,000 samples) with
 * {@code walker=agct} (AsyncGetCallTrace alone) must fail at least 5% of its walks (measured: 20 to 35% on JDK 17,
 * more on 25).
 *
 * <p>{@code walker-shapes}: RecoveryShapes in its two modes, each with two threads, profiled at 0.5 ms (twice the
 * samples per CPU second of the default 1 ms, so half the run gives the same statistics), Java frames
 * only (started through the Java API once the JIT has been quiet for half a second, at most after 5 s of warm-up:
 * class loading, first compilations and deoptimizations run in the VM's own thread state, which is not what this
 * check is about; measured 1.0 s for {@code time} and 3.75 s for {@code intrinsics}) until they used 7.5 s of
 * CPU: {@code time} (compiled
 * code calling the VM's clock functions, os::javaTimeMillis and os::javaTimeNanos, by leaf calls without a
 * thread-state change) and {@code intrinsics} (array copies, String and array comparisons, CRC32/CRC32C/Adler32,
 * AES, SHA-256, BigInteger, Base64, Math, StringBuilder: StubRoutines entered by calls, and C2's inline string
 * intrinsics, which push words under the compiled frame). Failed walks must be at most 0.1% of the walked samples
 * (those not throttled). Why that limit can be judged: at 15,000 samples it allows 15 failed walks; a walker failing
 * 0.3% of the time (45 expected) passes with a probability of 2e-7 (Poisson), and one failing 0.04% (6 expected)
 * fails with a probability of 0.05%. A run with fewer than 10,000 walked samples is refused rather than judged.
 *
 * <p>{@code walker-stress}: WalkStress (StackOverflowError loops, a deoptimisation storm, class unloading and thread
 * churn at once) at 1 kHz for 10 s with a JFR recording: a clean exit, a recording the JDK's {@code jfr} tool reads,
 * and the stop line reporting the failed walks per reason. The 10-minute form is {@code make soak-walker}.
 *
 * <p>{@code truncated-stacks}: DeepRecursion (stacks thousands of frames deep) with {@code jstackdepth=64}: every
 * collapsed stack of 64 frames starts with {@code [truncated]} and no shorter one does; the JFR recording marks the
 * same stacks truncated (the JDK's {@code jfr print} ends them with "..."), without the marker as a frame; the stop
 * line counts them.
 */
final class WalkerChecks {
    static final double MAX_FAILED_PERCENT = 1.0;
    static final double MAX_SHARE_ERROR = 2.0;
    static final double MIN_AGCT_FAILED_PERCENT = 5.0;
    static final long MIN_SPLIT_SAMPLES = 4_000;
    static final Set<String> NOT_FAILURES = Set.of("[no_Java_frame]", "[not_Java_thread]", "[truncated]",
            "[throttled]");
    static final Pattern TRUTH = Pattern.compile("TRUTH eval=([0-9.]+) mix=([0-9.]+)");
    static final double MAX_SHAPE_FAILED_PERCENT = 0.1;
    static final long MIN_SHAPE_SAMPLES = 10_000;

    private final IntegrationTest t;

    WalkerChecks(IntegrationTest t) {
        this.t = t;
    }

    /** One Poly run: samples, failed walks, and the evaluator's sampled and true share (points). */
    /** Least shares of samples taken in the megamorphic dispatch stubs of Poly at 1 ms (named frames). */
    static final double MIN_VTABLE_PERCENT = 2.0;
    static final double MIN_ITABLE_PERCENT = 0.4;

    static final class PolyRun {
        long samples, failed, split, vtable, itable, failedRecoveries;
        double sampled, truth;
        String label;

        double percent(long n) {
            return samples == 0 ? 0 : 100.0 * n / samples;
        }

        double failedPercent() {
            return samples == 0 ? 100 : 100.0 * failed / samples;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s: %d samples, %d failed walks (%.2f%%), %d failed recoveries counted;"
                    + " evaluator %.2f%% sampled, %.2f%% measured (error %.2f points over %d samples); in a vtable stub"
                    + " %.2f%%, an itable stub %.2f%%", label, samples, failed, failedPercent(), failedRecoveries,
                    sampled, truth, Math.abs(sampled - truth), split, percent(vtable), percent(itable));
        }
    }

    /** The agent's "profiling stopped" line of run r, or "". */
    static String stopLine(IntegrationTest.Run r) {
        return r.stderrLines().stream().filter(l -> l.contains("profiling stopped")).findFirst().orElse("");
    }

    /** The counts after "recovered_walks:" in a stop line, or null. */
    static String recoveryCounts(String stop) {
        Matcher rec = Pattern.compile("recovered_walks: (.*)").matcher(stop);
        return rec.find() ? rec.group(1) : null;
    }

    /** A pseudo-frame that names a failed walk (the leaf of a stack). */
    static boolean failedWalk(List<String> frames) {
        return failureName(frames) != null;
    }

    PolyRun poly(String name, String options, String seconds, String minCpu) throws IntegrationTest.Failure {
        Path out = t.runDir(name).resolve("poly.collapsed");
        IntegrationTest.Run r = t.launch(name, List.of(), 180, "start,event=cpu,cstack=no," + options + "file=" + out,
                "Poly", seconds, "2", minCpu);
        IntegrationTest.requireCleanExit(r);
        Matcher m = TRUTH.matcher(r.stdout);
        if (!m.find()) {
            throw new IntegrationTest.Failure("Poly printed no TRUTH line", r.stderrTail(10));
        }
        IntegrationTest.Profile p = IntegrationTest.Profile.read(out, r);
        PolyRun run = new PolyRun();
        run.label = name;
        String counts = recoveryCounts(stopLine(r));
        if (counts != null) {
            Matcher f = Pattern.compile("failed_\\w+=(\\d+)").matcher(counts);
            while (f.find()) {
                run.failedRecoveries += Long.parseLong(f.group(1));
            }
        }
        long eval = 0, mix = 0;
        for (IntegrationTest.Stack s : p.stacks) {
            run.samples += s.count;
            String leaf = s.frames.isEmpty() ? "" : s.frames.get(s.frames.size() - 1);
            if (leaf.startsWith("vtable stub")) {
                run.vtable += s.count;
            } else if (leaf.startsWith("itable stub")) {
                run.itable += s.count;
            }
            if (failedWalk(s.frames)) {
                run.failed += s.count;
            } else if (s.contains("Poly.evaluate")) {
                eval += s.count;
            } else if (s.contains("Poly.mix")) {
                mix += s.count;
            }
        }
        run.split = eval + mix;
        run.sampled = run.split == 0 ? 0 : 100.0 * eval / run.split;
        double e = Double.parseDouble(m.group(1)), x = Double.parseDouble(m.group(2));
        run.truth = 100 * e / (e + x);
        return run;
    }

    void polymorphic() {
        String name = "walker-poly";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            PolyRun[] runs = {poly(name + "-500us", "interval=500us,", "3.5", "7"), poly(name + "-10ms", "", "6", "10")};
            for (PolyRun run : runs) {
                boolean judgeShare = run == runs[0];
                details.add(run.toString());
                if (run.failedPercent() > MAX_FAILED_PERCENT) {
                    problems.add(String.format(Locale.ROOT, "%s: %.2f%% of the walks failed (limit %.1f%%)",
                            run.label, run.failedPercent(), MAX_FAILED_PERCENT));
                }
                // A recovery counted as failed is a sample whose walk failed: the stop line's failed_* counts are
                // at most the failed walks of the profile (a recovery tried from a dispatch stub, whose sample keeps
                // AsyncGetCallTrace's frames when it fails, is not counted as a failure).
                if (run.failedRecoveries > run.failed) {
                    problems.add(String.format(Locale.ROOT, "%s: the stop line counts %d failed recoveries, the "
                            + "profile %d failed walks", run.label, run.failedRecoveries, run.failed));
                }
                if (!judgeShare) {
                    continue;
                }
                // Megamorphic calls dispatch through vtable and itable stubs: samples there name the stub as their
                // leaf, as async-profiler does (measured 10-13% and 1.7-2.8% here).
                if (run.percent(run.vtable) < MIN_VTABLE_PERCENT || run.percent(run.itable) < MIN_ITABLE_PERCENT) {
                    problems.add(String.format(Locale.ROOT, "%s: %.2f%% of the samples in a 'vtable stub' frame, "
                            + "%.2f%% in an 'itable stub' one (at least %.1f%% and %.1f%%)", run.label,
                            run.percent(run.vtable), run.percent(run.itable), MIN_VTABLE_PERCENT, MIN_ITABLE_PERCENT));
                }
                if (run.split < MIN_SPLIT_SAMPLES) {
                    problems.add(run.label + ": only " + run.split + " samples in the evaluator and the loop (need "
                            + MIN_SPLIT_SAMPLES + "; the machine was busy)");
                } else if (Math.abs(run.sampled - run.truth) > MAX_SHARE_ERROR) {
                    problems.add(String.format(Locale.ROOT, "%s: the evaluator's share is off by %.2f points "
                            + "(limit %.1f)", run.label, Math.abs(run.sampled - run.truth), MAX_SHARE_ERROR));
                }
            }
            PolyRun agct = poly(name + "-agct", "interval=500us,walker=agct,", "1.5", "3");
            details.add(agct.toString());
            if (agct.failedPercent() < MIN_AGCT_FAILED_PERCENT) {
                problems.add(String.format(Locale.ROOT, "with walker=agct only %.2f%% of the walks failed: the "
                        + "workload does not reach the code the recovery is for", agct.failedPercent()));
            }
        } catch (IntegrationTest.Failure f) {
            problems.add(f.getMessage());
            details.addAll(f.evidence);
        }
        t.report(name, problems, details, t0);
    }

    /** The pseudo-frame naming a failed walk, or null (a native frame named by its library, "[libc.so.6]", is none). */
    static String failureName(List<String> frames) {
        for (String f : frames) {
            if (f.startsWith("[") && f.endsWith("]") && !f.contains("tid=") && !f.contains(".so")
                    && !NOT_FAILURES.contains(f)) {
                return f;
            }
        }
        return null;
    }

    void shapes() {
        String name = "walker-shapes";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        for (String mode : List.of("time", "intrinsics")) {
            String run = name + "-" + mode;
            try {
                Path out = t.runDir(run).resolve(mode + ".collapsed");
                IntegrationTest.Run r = t.launch(run, List.of(), 180, "", "RecoveryShapes", mode, "3.75", "2", "7.5",
                        "5", "event=cpu,interval=500us,cstack=no,file=" + out);
                IntegrationTest.requireCleanExit(r);
                if (!r.stdout.contains("RecoveryShapes done mode=" + mode)) {
                    throw new IntegrationTest.Failure(run + ": the workload did not finish", r.stderrTail(10));
                }
                IntegrationTest.Profile p = IntegrationTest.Profile.read(out, r);
                long samples = 0, failed = 0, throttled = 0;
                Map<String, Long> reasons = new TreeMap<>();
                for (IntegrationTest.Stack st : p.stacks) {
                    samples += st.count;
                    if (st.frames.contains("[throttled]")) {
                        throttled += st.count;
                    }
                    String why = failureName(st.frames);
                    if (why != null) {
                        failed += st.count;
                        reasons.merge(why, st.count, Long::sum);
                    }
                }
                long walked = samples - throttled;
                double percent = walked == 0 ? 100 : 100.0 * failed / walked;
                String counts = recoveryCounts(stopLine(r));
                Matcher warm = Pattern.compile("warm-up [^\n]*").matcher(r.stdout);
                details.add(String.format(Locale.ROOT, "%s: %d samples, %d throttled, %d failed walks (%.3f%% of "
                        + "the walked) %s; %s; %s", mode, samples, throttled, failed, percent, reasons,
                        counts != null ? counts : "no recovery counts", warm.find() ? warm.group() : "no warm-up line"));
                if (walked < MIN_SHAPE_SAMPLES) {
                    problems.add(run + ": only " + walked + " walked samples (need " + MIN_SHAPE_SAMPLES
                            + "; the machine was busy)");
                } else if (percent > MAX_SHAPE_FAILED_PERCENT) {
                    problems.add(String.format(Locale.ROOT, "%s: %.3f%% of the walks failed (limit %.1f%%)", run,
                            percent, MAX_SHAPE_FAILED_PERCENT));
                }
            } catch (IntegrationTest.Failure f) {
                problems.add(f.getMessage());
                details.addAll(f.evidence);
            }
        }
        t.report(name, problems, details, t0);
    }

    void truncation() {
        String name = "truncated-stacks";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path dir = t.runDir(name);
            Path jfr = dir.resolve("deep.jfr");
            Path out = dir.resolve("deep.collapsed");
            IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cpu,interval=1ms,jstackdepth=64,jfrfile="
                    + jfr + ",file=" + out, "DeepRecursion", "100");
            IntegrationTest.requireCleanExit(r);
            IntegrationTest.Profile p = IntegrationTest.Profile.read(out, r);
            long cut = 0, wrong = 0;
            for (IntegrationTest.Stack st : p.stacks) {
                boolean marked = st.frames.get(0).equals("[truncated]");
                if (marked) {
                    cut += st.count;
                }
                if (marked != (st.frames.size() == 64)) {
                    wrong++;
                    if (wrong <= 3) {
                        details.add("stack of " + st.frames.size() + " frames, root " + st.frames.get(0));
                    }
                }
            }
            details.add(cut + " of " + p.total() + " samples cut at 64 frames");
            if (cut == 0) {
                problems.add("no stack starts with [truncated]");
            }
            if (wrong > 0) {
                problems.add(wrong + " stacks where [truncated] and a depth of 64 frames do not go together");
            }
            String stop = stopLine(r);
            Matcher m = Pattern.compile("truncated_stacks=(\\d+)").matcher(stop);
            if (!m.find() || Long.parseLong(m.group(1)) != cut) {
                problems.add("the stop line does not count the " + cut + " truncated stacks: " + stop);
            }
            Process pr = new ProcessBuilder(t.java.getParent().resolve("jfr").toString(), "print", "--events",
                    "jdk.ExecutionSample", "--stack-depth", "100", jfr.toString()).redirectErrorStream(true).start();
            List<String> lines = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
                    .collect(java.util.stream.Collectors.toList());
            if (!pr.waitFor(60, TimeUnit.SECONDS) || pr.exitValue() != 0) {
                problems.add("jfr print failed on " + jfr);
            } else {
                long dots = lines.stream().filter(l -> l.trim().equals("...")).count();
                long markers = lines.stream().filter(l -> l.contains("[truncated]")).count();
                details.add("jfr print: " + dots + " stack traces marked truncated");
                if (dots != cut) {
                    problems.add("jfr print shows " + dots + " truncated stack traces, the collapsed output " + cut);
                }
                if (markers > 0) {
                    problems.add("the recording holds [truncated] as a frame");
                }
            }
        } catch (IntegrationTest.Failure f) {
            problems.add(f.getMessage());
            details.addAll(f.evidence);
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    void stress() {
        String name = "walker-stress";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path dir = t.runDir(name);
            Path jfr = dir.resolve("stress.jfr");
            IntegrationTest.Run r = t.launch(name, List.of(), 180, "start,event=cpu,interval=1ms,jfrfile=" + jfr
                    + ",file=" + dir.resolve("stress.collapsed"), "WalkStress", "10");
            IntegrationTest.requireCleanExit(r);
            Matcher done = Pattern.compile("WalkStress done soe=(\\d+) deopt_rounds=(\\d+) loaders=\\d+ unloaded=(\\d+)"
                    + " threads=(\\d+)").matcher(r.stdout);
            if (!done.find()) {
                throw new IntegrationTest.Failure("the workload did not finish", r.stderrTail(10));
            }
            details.add(done.group(0));
            for (int g = 1; g <= 4; g++) {
                if (Long.parseLong(done.group(g)) == 0) {
                    problems.add("the workload did nothing of one kind: " + done.group(0));
                }
            }
            String stop = stopLine(r);
            details.add(stop.replaceAll("handler_ns: .*?\\) ", ""));
            if (!Pattern.compile("walk_errors: (none|\\[\\w+\\]=\\d+ \\(\\d+\\.\\d\\d%\\))").matcher(stop).find()) {
                problems.add("the stop line does not report failed walks with their shares");
            }
            details.add(t.jfrExecutionSamples(jfr, problems) + " jdk.ExecutionSample events in the recording");
        } catch (IntegrationTest.Failure f) {
            problems.add(f.getMessage());
            details.addAll(f.evidence);
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }
}
