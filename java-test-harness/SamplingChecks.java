import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code alias-cpu}: the Alias workload (a, b, c at 10% of the CPU each and d at 70%, in a rotation that repeats
 * every interval of CPU) profiled with event=cpu. With randomised periods (the default) each of a, b, c must be within
 * 1 point of its measured share; with {@code nojitter} (exact multiples of the period) a share (of a, b, c or d) must
 * be off by more than 3 points in one of up to three runs, which shows the workload really aliases.
 *
 * <p>The check runs at 1 ms with a 1 ms rotation, not at the default 10 ms with a 10 ms one: aliasing depends on the
 * ratio of the sampling period to the workload's cycle, and a random period is drawn relative to the interval
 * (uniform in [interval/2, 3 interval/2), a new one every JS_JITTER_RUN samples), so both scale together and the
 * check is the same at a tenth of the CPU. Measured (docs/BENCHMARKS.md, "alias-cpu at 1 ms"): at 1 ms with 12,500
 * samples the largest a, b, c error was a little wider than the 10 ms check's with 12,500 (mean 0.52 over 9 runs
 * against 0.40 over 20 CI runs; largest 1.01 against 0.88), so the run is sized for 25,000 samples (mean 0.22,
 * largest 0.36 over 11 runs): 25 s of CPU instead of 125.
 *
 * <p>Why 1 point holds: the jittered phases are close to independent and uniform, so a method's sampled share has
 * about the binomial error sqrt(p(1-p)/n); at n = 25,000 samples and p = 0.1 that is 0.19 points (runs of 8 samples
 * at one period widen it somewhat: measured above). The run fails if it got fewer than 20,000 samples, rather than
 * judge a noisier estimate. The check shares the machine with others: a thread's CPU-time clock, which drives its
 * samples and its measured truth, does not advance while another process runs; a busy machine makes the run
 * longer, not different.
 */
final class SamplingChecks {
    static final double MAX_JITTER_ERROR = 1.0;
    static final double MIN_FIXED_ERROR = 3.0;
    static final long MIN_SAMPLES = 20_000;
    /** The sampling interval and the workload's rotation, in microseconds. */
    static final int ROTATION_US = 1000;
    static final Pattern TRUTH = Pattern.compile("TRUTH a=([0-9.]+) b=([0-9.]+) c=([0-9.]+) d=([0-9.]+)");
    static final String[] METHODS = {"a", "b", "c", "d"};

    private final IntegrationTest t;

    SamplingChecks(IntegrationTest t) {
        this.t = t;
    }

    /** Sampled and true shares (in points) of a, b, c, d for one run; problems if the run itself failed. */
    static final class Shares {
        double[] sampled = new double[4];
        double[] truth = new double[4];
        long samples;
        double maxAbcError;
        double maxError;
    }

    Shares measure(String name, String options, String seconds, String minCpu, List<String> problems) {
        Path out = t.runDir(name).resolve("alias.collapsed");
        IntegrationTest.Run r = t.launch(name, List.of(), 300, options + "interval=" + ROTATION_US + "us,file=" + out,
                "Alias", seconds, "2", minCpu, Integer.toString(ROTATION_US));
        Shares s = new Shares();
        if (r.timedOut || r.exitCode != 0) {
            problems.add(name + ": exit " + r.exitCode + (r.timedOut ? " (timed out)" : "") + " in " + r.dir);
            return s;
        }
        Matcher m = TRUTH.matcher(r.stdout);
        if (!m.find()) {
            problems.add(name + ": no TRUTH line in the workload's output");
            return s;
        }
        long[] counts = new long[4];
        try {
            for (String line : Files.readAllLines(out)) {
                int sp = line.lastIndexOf(' ');
                long w = Long.parseLong(line.substring(sp + 1));
                for (int i = 0; i < 4; i++) {
                    if (line.contains("Alias." + METHODS[i] + ";") || line.endsWith("Alias." + METHODS[i] + " " + w)) {
                        counts[i] += w;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            problems.add(name + ": cannot read " + out + ": " + e);
            return s;
        }
        for (long c : counts) {
            s.samples += c;
        }
        for (int i = 0; i < 4; i++) {
            s.truth[i] = 100 * Double.parseDouble(m.group(i + 1));
            s.sampled[i] = s.samples == 0 ? 0 : 100.0 * counts[i] / s.samples;
            double e = Math.abs(s.sampled[i] - s.truth[i]);
            s.maxError = Math.max(s.maxError, e);
            if (i < 3) {
                s.maxAbcError = Math.max(s.maxAbcError, e);
            }
        }
        return s;
    }

    static String describe(String label, Shares s) {
        StringBuilder b = new StringBuilder(label + ": " + s.samples + " samples;");
        for (int i = 0; i < 4; i++) {
            b.append(String.format(Locale.ROOT, " %s %.2f%% (truth %.2f%%)", METHODS[i], s.sampled[i], s.truth[i]));
        }
        return b.append(String.format(Locale.ROOT, "; max error of a, b, c %.2f points, of all four %.2f",
                s.maxAbcError, s.maxError)).toString();
    }

    void aliasCpu() {
        String name = "alias-cpu";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        // The control: with fixed periods the workload aliases, by how much depends on how the phase drifts in the
        // run, so it gets up to three 4 s runs to show more than 3 points once.
        List<String> details = new ArrayList<>();
        Shares fixed = null;
        for (int attempt = 1; attempt <= 3 && (fixed == null || fixed.maxError <= MIN_FIXED_ERROR); attempt++) {
            fixed = measure(name + "-nojitter-" + attempt, "start,event=cpu,nojitter,", "4", "0", problems);
            details.add(describe("nojitter, run " + attempt, fixed));
        }
        // 25 s of CPU on two threads; at most 60 s of wall time (six times the 10 s asked) on a busy machine
        Shares jitter = measure(name, "start,event=cpu,", "10", "25", problems);
        details.add(0, describe("jittered (default)", jitter));
        if (problems.isEmpty()) {
            if (jitter.samples < MIN_SAMPLES) {
                problems.add("only " + jitter.samples + " samples in the jittered run (need " + MIN_SAMPLES
                        + "; the machine was busy)");
            } else if (jitter.maxAbcError > MAX_JITTER_ERROR) {
                problems.add(String.format(Locale.ROOT, "with jitter a share is off by %.2f points (limit %.1f)",
                        jitter.maxAbcError, MAX_JITTER_ERROR));
            }
            if (fixed.maxError <= MIN_FIXED_ERROR) {
                problems.add(String.format(Locale.ROOT, "without jitter the shares are off by only %.2f points: the "
                        + "workload did not alias, so the check shows nothing", fixed.maxError));
            }
        }
        t.report(name, problems, details, t0);
    }
}
