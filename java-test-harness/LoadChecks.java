import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks on a loaded machine, where a profiler is needed most: processes spinning on every core beside the profiled
 * JVM. {@code wall-loaded}: wall-clock shares stay true to the workload's measured time; {@code cpu-no-throttle}:
 * the handler budget reacts to the profiler's own cost, never to the CPU time other processes take.
 */
final class LoadChecks {
    /** The spinning processes beside the JVM, in turn. */
    static final int[] SPINNERS = {0, 2, 4};
    static final double WALL_MAX_ERROR_POINTS = 3.0;
    static final int WALL_WORKERS = 3;
    static final long WALL_MIN_SAMPLES = 2000;
    /** The check's premise: the handlers of a CpuSplit run at 1 ms use less than this share of their threads' CPU. */
    static final double MAX_HANDLER_SHARE = 0.05;
    static final Pattern STOP = Pattern.compile("throttled=(\\d+).*handler_ns: min=\\d+ median=(\\d+) .*\\(n=(\\d+)\\)");

    private final IntegrationTest t;

    LoadChecks(IntegrationTest t) {
        this.t = t;
    }

    /** Starts n processes that spin on the CPU until stopped. */
    static List<Process> spin(int n) throws IOException {
        List<Process> ps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ps.add(new ProcessBuilder("sh", "-c", "while :; do :; done").start());
        }
        return ps;
    }

    static void stop(List<Process> ps) {
        for (Process p : ps) {
            p.destroyForcibly();
        }
        for (Process p : ps) {
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * {@code wall-loaded}: WallSplit with three workers (each sleeps about 90% of its wall time and computes the
     * rest, in rounds of random length; the workers time both parts themselves), {@code event=wall,interval=5ms}
     * for 5 s, beside 0, 2 and 4 processes spinning on the two cores. Of the workers' samples in sleepPart and
     * computePart, sleepPart's share must be within {@value #WALL_MAX_ERROR_POINTS} points of the measured share of
     * their wall time, in every run.
     *
     * <p>The load moves the truth (computing takes longer in wall time when it waits for a CPU: sleepPart falls from
     * about 90% to 80-87%), and it is what broke wall profiles: a thread signalled while it waited for a CPU had its
     * weight lost when the next signal came before it ran, its compute sample was credited again across the sleep
     * that followed (it had used little CPU since), and the timer thread's ticks, delayed while the workers computed,
     * landed after their computing. Why 3 points holds: about 3,000 samples (5 s at 5 ms, three workers; at least
     * {@value #WALL_MIN_SAMPLES} required; it ran 10 s at 10 ms for the same count), each a Bernoulli trial with p = 0.1-0.2 since the rounds' random lengths
     * decouple them from the ticks: a binomial sigma of 0.55-0.75 points, so 3 points is over 4 sigma.
     */
    void wallLoaded() {
        String name = "wall-loaded";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        for (int n : SPINNERS) {
            String run = name + "-" + n;
            List<Process> spinners = List.of();
            try {
                spinners = spin(n);
                Path out = t.runDir(run).resolve("wall.collapsed");
                IntegrationTest.Run r = t.launch(run, List.of(), "start,event=wall,interval=5ms,threads,file=" + out,
                        "WallSplit", "5", "0", "45", String.valueOf(WALL_WORKERS));
                stop(spinners);
                IntegrationTest.requireCleanExit(r);
                Map<String, String> truth = Tallies.truth(r, "TRUTH ");
                IntegrationTest.Profile p = IntegrationTest.Profile.read(out, r);
                long sleep = 0;
                long compute = 0;
                for (int w = 0; w < WALL_WORKERS; w++) {
                    List<IntegrationTest.Stack> worker = Tallies.ofThread(p, w == 0 ? EventChecks.WORKER
                            : EventChecks.WORKER + "-" + w);
                    sleep += Tallies.weight(worker, s -> s.contains("WallSplit.sleepPart"));
                    compute += Tallies.weight(worker, s -> s.contains("WallSplit.computePart"));
                }
                double sampled = sleep + compute == 0 ? 0 : 100.0 * sleep / (sleep + compute);
                double expected = 100 * Tallies.num(truth, "sleepPart");
                details.add(String.format(Locale.ROOT, "%d spinning: sleepPart %d, computePart %d: %.2f%% asleep,"
                        + " truth %.2f%% (%+.2f pt); %s", n, sleep, compute, sampled, expected, sampled - expected,
                        Tallies.truthLine(r)));
                if (sleep + compute < WALL_MIN_SAMPLES) {
                    problems.add(n + " spinning: only " + (sleep + compute) + " wall samples of the workers in"
                            + " sleepPart/computePart (need " + WALL_MIN_SAMPLES + ")");
                } else if (Math.abs(sampled - expected) > WALL_MAX_ERROR_POINTS) {
                    problems.add(String.format(Locale.ROOT, "%d spinning: sleepPart has %.2f%% of the workers'"
                            + " samples, measured %.2f%% of their time (limit %.1f points)", n, sampled, expected,
                            WALL_MAX_ERROR_POINTS));
                }
            } catch (IntegrationTest.Failure f) {
                problems.add(n + " spinning: " + f.getMessage());
                details.addAll(f.evidence);
            } catch (IOException e) {
                problems.add("cannot start the spinning processes: " + e);
            } finally {
                stop(spinners);
            }
        }
        t.report(name, problems, details, t0);
    }

    /**
     * {@code cpu-no-throttle}: CpuSplit on two threads, {@code event=cpu,interval=1ms} for 4 s, beside 0, 2 and 4
     * spinning processes. Its handlers use about 1-2% of the workers' CPU (checked: median handler time times the
     * samples, over the workers' CPU time, must stay under {@value #MAX_HANDLER_SHARE}), so the budget of a fifth
     * must never be reached: no "throttled" line, and the stop line counts throttled=0. A budget timed by the clock
     * on the wall counted the time a handler was preempted by the spinning processes as its own and throttled.
     */
    void cpuNoThrottle() {
        String name = "cpu-no-throttle";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        for (int n : SPINNERS) {
            String run = name + "-" + n;
            List<Process> spinners = List.of();
            try {
                spinners = spin(n);
                Path out = t.runDir(run).resolve("cpu.collapsed");
                IntegrationTest.Run r = t.launch(run, List.of(), "start,event=cpu,interval=1ms,threads,file=" + out,
                        "CpuSplit", "4", "2");
                stop(spinners);
                IntegrationTest.requireCleanExit(r);
                Map<String, String> truth = Tallies.truth(r, "TRUTH ");
                String stopLine = r.agentLines().stream().filter(l -> l.contains("profiling stopped")).findFirst()
                        .orElse("");
                Matcher m = STOP.matcher(stopLine);
                if (!m.find()) {
                    problems.add(n + " spinning: no stop line with throttled= and handler_ns: " + stopLine);
                    continue;
                }
                long throttled = Long.parseLong(m.group(1));
                double handlerMs = Long.parseLong(m.group(2)) * (double) Long.parseLong(m.group(3)) / 1e6;
                double cpuMs = Tallies.num(truth, "cpu_ms");
                double share = handlerMs / cpuMs;
                List<String> lines = r.agentLines().stream().filter(l -> l.contains("throttled:")
                        || l.contains("were throttled")).toList();
                details.add(String.format(Locale.ROOT, "%d spinning: throttled=%d, handlers %.1f ms of the"
                        + " workers' %.0f ms CPU (%.2f%%)", n, throttled, handlerMs, cpuMs, 100 * share));
                if (share >= MAX_HANDLER_SHARE) {
                    problems.add(String.format(Locale.ROOT, "%d spinning: the handlers used %.1f%% of the workers'"
                            + " CPU: the check's premise (under %.0f%%) does not hold", n, 100 * share,
                            100 * MAX_HANDLER_SHARE));
                }
                if (throttled != 0 || !lines.isEmpty()) {
                    List<String> where = Files.readAllLines(out).stream().filter(l -> l.contains("[throttled]"))
                            .toList();
                    problems.add(n + " spinning: samples were throttled (" + throttled + ") although the handlers"
                            + " used " + String.format(Locale.ROOT, "%.2f%%", 100 * share) + " of the CPU: "
                            + lines + "; throttled stacks: " + where);
                }
            } catch (IntegrationTest.Failure f) {
                problems.add(n + " spinning: " + f.getMessage());
                details.addAll(f.evidence);
            } catch (IOException e) {
                problems.add("cannot start the spinning processes: " + e);
            } finally {
                stop(spinners);
            }
        }
        t.report(name, problems, details, t0);
    }
}
