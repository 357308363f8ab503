import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Checks of the events beside cpu: wall-clock sampling ({@code wall-split}), allocation sampling
 * ({@code alloc-split}), lock contention ({@code lock-split}) and all of them in one JFR recording
 * ({@code multi-event-jfr}). Each runs a workload that measures its own truth (WallSplit, AllocSplit, LockSplit,
 * EventMix print a {@code TRUTH} line) and compares the profile with it; each method's javadoc says what it asserts
 * and why its tolerance holds. The JFR side (tools, chunks, {@code jfr print --json}) is in {@link JfrFiles}, the
 * truth lines and the sums over collapsed profiles in {@link Tallies}.
 */
final class EventChecks {
    static final String WORKER = "wallsplit-worker";
    static final double WALL_MAX_ERROR_POINTS = 5.0;
    static final long WALL_MIN_SAMPLES = 600;
    static final double CPU_MIN_COMPUTE_SHARE = 0.80;
    static final double CPU_MAX_ERROR_POINTS = 5;
    static final long CPU_MIN_SAMPLES = 100;
    static final double IDLE_MIN_RATIO = 0.5;

    static final long ALLOC_INTERVAL = 64 * 1024;
    static final long ALLOC_DEFAULT_INTERVAL = 512 * 1024;
    static final double ALLOC_MAX_ERROR_POINTS = 3.0;
    static final double ALLOC_MAX_VOLUME_ERROR = 0.10;
    static final double ALLOC_MIN_LEAF_SHARE = 0.99;
    static final long ALLOC_MIN_SAMPLES = 10_000;

    static final double LOCK_MAX_ERROR = 0.20;
    static final String OBJECT_LEAF = "java.lang.Object_[i]";

    static final List<String> JFR_TYPES = List.of("jdk.ExecutionSample", "profiler.WallClockSample",
            "jdk.ObjectAllocationInNewTLAB", "jdk.JavaMonitorEnter", "jdk.ThreadPark");
    static final List<String> TEXT_EVENTS = List.of("cpu", "wall", "alloc", "lock");
    /** A chunk counts as inside the workload when it overlaps the workload's run by this much. */
    static final long CHUNK_MIN_OVERLAP_MS = 300;
    static final long LOCK_THRESHOLD_NS = 10_000;

    private final IntegrationTest t;

    EventChecks(IntegrationTest t) {
        this.t = t;
    }

    // ---------------------------------------------------------------- wall-split

    /**
     * {@code wall-split}: WallSplit's worker sleeps about 90% of its wall time in sleepPart and computes 10% in
     * computePart, in rounds of random length (25..75 ms). (1) {@code event=wall,interval=10ms,threads} for 10 s: of
     * the worker's samples in the two methods, sleepPart's share is within {@value #WALL_MAX_ERROR_POINTS} points of
     * the measured wall-time share; sleepPart's samples are (at least 95% of them) inside Thread.sleep; each of three
     * idle threads blocked on a latch all along has at least half as many samples as the worker (wall sampling takes
     * every thread, whatever its state). The same run writes {@code jfrfile=wall.jfr}: wall being the only execution
     * event, the JDK's {@code jfr summary} finds its samples as jdk.ExecutionSample (and no profiler.WallClockSample),
     * and {@code jsampler convert} reads them back to the text output's total exactly. (2)
     * {@code event=cpu,interval=1ms} for 4 s: computePart's share of the worker's samples is within
     * {@value #CPU_MAX_ERROR_POINTS} points of its share of the worker's CPU time, measured by the worker (a sleeping
     * thread uses no CPU, so that share is high: the run is void below {@value #CPU_MIN_COMPUTE_SHARE}).
     *
     * <p>Why 5 points holds: a wall sample of the worker every 10 ms gives about 1,000 samples in 10 s (at least
     * {@value #WALL_MIN_SAMPLES} are required), and since the rounds vary randomly in length the sampler's phase is
     * independent of the round's phase, so each sample is a Bernoulli trial with p = 0.1: a binomial sigma of
     * sqrt(0.09/1000) = 0.95 points (1.2 at 600), so 5 points is over 4 sigma. Systematic errors should be far smaller:
     * the signal reaches a sleeping thread and a running one within tens of microseconds of the tick, against a 10 ms
     * interval, and Thread.sleep's overshoot is inside the measured truth. (Measured over 15 runs, 13 on JDK 17 and 2
     * on JDK 25: sleepPart came out 1.3 points above the truth on average, from -0.8 to +2.6, as if about 0.65 ms of
     * each round's computing were sampled as sleeping; not explained yet, and the limit is still about 4 sigma away.)
     * For the CPU run: the worker's CPU outside computePart (entering and leaving Thread.sleep, the clock reads of the
     * loop) is tens of microseconds per round once compiled, but in a 4 s run on JDK 25 the sleep path runs
     * interpreted and took up to 10% of the worker's CPU, so the truth is measured (ThreadMXBean CPU time around each
     * computePart) rather than assumed; about 400 samples at 1 ms with p = 0.9 give a binomial sigma of 1.5 points,
     * so 5 points is over 3 sigma.
     */
    void wallSplit(boolean wallPart, boolean cpuPart) {
        String name = cpuPart && !wallPart ? "wall-split-cpu" : "wall-split";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            if (wallPart) {
                // 1. Wall clock.
                Path out = t.runDir(name).resolve("wall.collapsed");
                Path jfr = t.runDir(name).resolve("wall.jfr");
                IntegrationTest.Run r = t.launch(name, List.of(), "start,event=wall,interval=10ms,threads,file=" + out
                        + ",jfrfile=" + jfr, "WallSplit", "10", "3");
                IntegrationTest.requireCleanExit(r);
                Map<String, String> truth = Tallies.truth(r, "TRUTH ");
                IntegrationTest.Profile p = IntegrationTest.Profile.read(out, r);
                Map<String, Long> perThread = Tallies.weightPerThread(p);
                List<IntegrationTest.Stack> worker = Tallies.ofThread(p, WORKER);
                long sleep = Tallies.weight(worker, s -> s.contains("WallSplit.sleepPart"));
                long compute = Tallies.weight(worker, s -> s.contains("WallSplit.computePart"));
                long inSleepCall = Tallies.weight(worker, s -> s.contains("WallSplit.sleepPart")
                        && s.frames.stream().anyMatch(f -> f.startsWith("java/lang/Thread.sleep")));
                long workerTotal = Tallies.weight(worker, s -> true);
                double sampled = sleep + compute == 0 ? 0 : 100.0 * sleep / (sleep + compute);
                double expected = 100 * Tallies.num(truth, "sleepPart");
                details.add(String.format(Locale.ROOT, "event=wall: worker %d samples: sleepPart %d (%d in"
                        + " Thread.sleep), computePart %d, elsewhere %d; sleepPart %.2f%% of the two, truth %.2f%% (%+.2f"
                        + " pt); %s", workerTotal, sleep, inSleepCall, compute, workerTotal - sleep - compute, sampled,
                        expected, sampled - expected, Tallies.truthLine(r)));
                if (worker.isEmpty()) {
                    problems.add("no stack under a [" + WORKER + " tid=N] root");
                } else if (sleep + compute < WALL_MIN_SAMPLES) {
                    problems.add("only " + (sleep + compute) + " wall samples of the worker in sleepPart/computePart"
                            + " (need " + WALL_MIN_SAMPLES + "; about " + Math.round(Tallies.num(truth, "wall_ms") / 10)
                            + " expected at 10ms)");
                } else if (Math.abs(sampled - expected) > WALL_MAX_ERROR_POINTS) {
                    problems.add(String.format(Locale.ROOT, "event=wall: sleepPart has %.2f%% of the worker's samples,"
                            + " measured %.2f%% of its time (limit %.1f points)", sampled, expected,
                            WALL_MAX_ERROR_POINTS));
                }
                if (sleep > 0 && inSleepCall < 0.95 * sleep) {
                    problems.add("only " + inSleepCall + " of sleepPart's " + sleep + " wall samples are inside"
                            + " java/lang/Thread.sleep*");
                }
                for (int i = 0; i < 3; i++) {
                    String idle = "wallsplit-idle-" + i;
                    long n = perThread.getOrDefault(idle, 0L);
                    details.add("event=wall: idle thread " + idle + ": " + n + " samples");
                    if (n < IDLE_MIN_RATIO * workerTotal) {
                        problems.add("idle thread " + idle + " has " + n + " wall samples, the worker " + workerTotal
                                + " (an idle thread must be sampled as often: expected at least half)");
                    }
                }
                if (!problems.isEmpty()) {
                    details.addAll(p.top(8));
                }
                // Wall alone: jdk.ExecutionSample in the recording, which converts back to the same total.
                JfrFiles.Tool summary = JfrFiles.tool(List.of(t.java.getParent().resolve("jfr").toString(), "summary",
                        jfr.toString()));
                long exec = JfrFiles.count(summary.out, "jdk.ExecutionSample");
                long wallEvents = JfrFiles.count(summary.out, "profiler.WallClockSample");
                Path back = t.runDir(name).resolve("wall-from-jfr.collapsed");
                JfrFiles.Tool conv = JfrFiles.tool(List.of(t.agent.getParent().resolve("jsampler").toString(), "convert",
                        jfr.toString(), back.toString()));
                long backTotal = conv.exit == 0 && Files.isRegularFile(back) ? Tallies.readAllowEmpty(back, r).total() : -1;
                details.add("jfrfile: " + exec + " jdk.ExecutionSample, " + wallEvents + " profiler.WallClockSample; "
                        + "jsampler convert: total " + backTotal + ", text output " + p.total());
                // async-profiler's converter counts an execution sample as CPU by the state STATE_DEFAULT: none here
                Map<String, Long> states = JfrFiles.states(t.java.getParent().resolve("jfr"), jfr, "jdk.ExecutionSample");
                details.add("jfrfile: jdk.ExecutionSample states " + states);
                if (states.containsKey("STATE_DEFAULT") || states.isEmpty()) {
                    problems.add("wall samples in jdk.ExecutionSample must carry their thread states, none the CPU "
                            + "sample's STATE_DEFAULT: " + states);
                }
                if (summary.exit != 0) {
                    problems.add("jfr summary fails on " + jfr + ": " + summary.out.lines().findFirst().orElse(""));
                } else if (exec == 0 || wallEvents > 0) {
                    problems.add("with wall the only execution event the recording should hold jdk.ExecutionSample and"
                            + " no profiler.WallClockSample: " + exec + " and " + wallEvents);
                }
                if (backTotal != p.total()) {
                    problems.add("jsampler convert of the recording gives a total of " + backTotal + ", the text output "
                            + p.total() + (conv.exit != 0 ? " (" + conv.out.lines().findFirst().orElse("") + ")" : ""));
                }
                JfrFiles.Tool asWall = JfrFiles.tool(List.of(t.agent.getParent().resolve("jsampler").toString(), "convert",
                        "--event", "wall", jfr.toString(), t.runDir(name).resolve("as-wall.collapsed").toString()));
                if (asWall.exit == 0 || !asWall.out.contains("use --event cpu")) {
                    problems.add("jsampler convert --event wall on a wall-only recording should fail pointing to --event "
                            + "cpu: exit " + asWall.exit + ": " + asWall.out.lines().findFirst().orElse(""));
                }

            }
            if (cpuPart) {
                // 2. CPU: the same workload, 4 s at 1 ms.
                String cpuName = "wall-split-cpu";
                Path cpuOut = t.runDir(cpuName).resolve("cpu.collapsed");
                IntegrationTest.Run rc = t.launch(cpuName, List.of(), "start,event=cpu,interval=1ms,threads,file=" + cpuOut,
                        "WallSplit", "4");
                IntegrationTest.requireCleanExit(rc);
                IntegrationTest.Profile pc = IntegrationTest.Profile.read(cpuOut, rc);
                List<IntegrationTest.Stack> cw = Tallies.ofThread(pc, WORKER);
                long cTotal = Tallies.weight(cw, s -> true);
                long cCompute = Tallies.weight(cw, s -> s.contains("WallSplit.computePart"));
                long cSleep = Tallies.weight(cw, s -> s.contains("WallSplit.sleepPart"));
                double share = cTotal == 0 ? 0 : (double) cCompute / cTotal;
                Map<String, String> ct = Tallies.truth(rc, "TRUTH ");
                double cpuTruth = Tallies.num(ct, "cpu_compute_ms") / Math.max(1e-9, Tallies.num(ct, "cpu_ms"));
                details.add(String.format(Locale.ROOT, "event=cpu: worker %d samples: computePart %d (%.1f%%; measured "
                        + "%.1f%% of the worker's CPU), sleepPart %d; %s", cTotal, cCompute, 100 * share, 100 * cpuTruth,
                        cSleep, Tallies.truthLine(rc)));
                if (cTotal < CPU_MIN_SAMPLES) {
                    problems.add("event=cpu: only " + cTotal + " samples of the worker (need " + CPU_MIN_SAMPLES + ")");
                    details.addAll(pc.top(6));
                } else if (cpuTruth < CPU_MIN_COMPUTE_SHARE) {
                    problems.add(String.format(Locale.ROOT, "event=cpu: the worker spent only %.1f%% of its CPU in "
                            + "computePart (the workload needs at least %.0f%%)", 100 * cpuTruth, 100 * CPU_MIN_COMPUTE_SHARE));
                } else if (Math.abs(share - cpuTruth) * 100 > CPU_MAX_ERROR_POINTS) {
                    problems.add(String.format(Locale.ROOT, "event=cpu: computePart has %.1f%% of the worker's samples, "
                            + "%.1f%% of its CPU (limit %.0f points)", 100 * share, 100 * cpuTruth, CPU_MAX_ERROR_POINTS));
                    details.addAll(pc.top(6));
                }
            }
        } catch (IntegrationTest.Failure f) {
            t.fail(name, f.getMessage(), f.evidence);
            return;
        } catch (IOException | InterruptedException e) {
            t.fail(name, "harness: " + e, List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }

    // ---------------------------------------------------------------- alloc-split

    /**
     * {@code alloc-split}: (1) {@code event=alloc,alloc=64k} on AllocSplit's split mode for 8 s at 256 MB/s, two
     * sites in a measured 3:1 byte ratio with objects of 4112 and 32 bytes: the byte shares of the stacks through
     * allocBig and through allocSmall are each within {@value #ALLOC_MAX_ERROR_POINTS} points of the measured
     * shares; their total weight (bytes) is within 10% of the bytes the two sites really allocated; at least 99% of
     * allocBig's weight ends in the leaf {@code long[]_[i]} and of allocSmall's in {@code AllocSplit$Small_[i]}.
     * (2) bare {@code event=alloc} (default 512k) on the none mode for 6 s: no stack goes through computeOnly (the
     * hot method, which allocates nothing), while allocElsewhere's stacks, ending in {@code byte[]_[i]}, weigh within
     * 10% of what it allocated (the profiler was working).
     *
     * <p>Why the tolerances hold: the run allocates about 2 GB in the two sites, so at 64 KiB about 32,000 samples; the
     * number of samples in a site is close to Poisson with mean bytes / interval, so allocBig's share (p = 0.75) has a
     * sigma of sqrt(0.75 * 0.25 / 32,000) = 0.24 points and 3 points is 12 sigma (at least {@value #ALLOC_MIN_SAMPLES}
     * samples, estimated as weight / interval, are required: 0.43 points, 7 sigma). What is left is for systematic
     * error, and the workload makes the likely ones large: a profiler counting objects would give allocSmall 97%, one
     * weighing a sample by the sampled object's size alone would give allocBig 99%. The volume's relative sigma is 1 /
     * sqrt(samples): 0.6% at 32,000, 1.9% for the none run (1.5 GB at 512 KiB, about 2,900 samples), so 10% is 5 sigma
     * or more. The leaf share is 99% rather than 100% because the JVM itself allocates a few objects on the thread with
     * a site on top (a JVMTI agent sampling every allocation saw 7 Strings of 24 bytes per run on JDK 17, around the C2
     * compilation of the sites; on JDK 25 a byte[] sample showed up under allocSmall), which a sampler may legitimately
     * catch: one such sample is 0.01% of a site's weight. For the same reason computeOnly may hold one sample (at most
     * 2 intervals of weight) when the workload measured a few hundred bytes allocated inside it
     * ({@code computeOnly_bytes}), and none when it measured 0.
     */
    void allocSplit(boolean splitPart, boolean nonePart) {
        String name = nonePart && !splitPart ? "alloc-split-none" : "alloc-split";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            if (splitPart) {
                // 1. The split.
                Path out = t.runDir(name).resolve("alloc.collapsed");
                IntegrationTest.Run r = t.launch(name, List.of(), "start,event=alloc,alloc=64k,file=" + out,
                        "AllocSplit", "8", "split", "256");
                IntegrationTest.requireCleanExit(r);
                // A session of VM events takes no signal, and its text output counts bytes, not samples.
                String start = r.startLine();
                if (start == null || !start.contains(" signal=none")) {
                    problems.add("the start line of an alloc-only session should say signal=none: " + start);
                }
                if (r.agentLines().stream().noneMatch(l -> l.contains("wrote collapsed profile (") && l.contains(" bytes, "))) {
                    problems.add("the alloc profile's 'wrote' line should count bytes: " + r.agentLines());
                }
                Map<String, String> truth = Tallies.truth(r, "TRUTH ");
                IntegrationTest.Profile p = IntegrationTest.Profile.read(out, r);
                long big = p.samplesContaining("AllocSplit.allocBig");
                long small = p.samplesContaining("AllocSplit.allocSmall");
                long bigLeaf = Tallies.weight(p.stacks, s -> s.contains("AllocSplit.allocBig")
                        && Tallies.leaf(s).equals("long[]_[i]"));
                long smallLeaf = Tallies.weight(p.stacks, s -> s.contains("AllocSplit.allocSmall")
                        && Tallies.leaf(s).equals("AllocSplit$Small_[i]"));
                double trueBytes = Tallies.num(truth, "big_bytes") + Tallies.num(truth, "small_bytes");
                long both = big + small;
                double bigShare = both == 0 ? 0 : 100.0 * big / both;
                double smallShare = both == 0 ? 0 : 100.0 * small / both;
                double bigTruth = 100 * Tallies.num(truth, "allocBig");
                double smallTruth = 100 * Tallies.num(truth, "allocSmall");
                long estSamples = both / ALLOC_INTERVAL;
                details.add(String.format(Locale.ROOT, "alloc=64k: allocBig %.2f%% (truth %.2f%%, %+.2f pt), allocSmall"
                                + " %.2f%% (truth %.2f%%, %+.2f pt); %d bytes sampled in the two sites for %.0f allocated"
                                + " (%.3f), about %d samples", bigShare, bigTruth, bigShare - bigTruth, smallShare,
                        smallTruth, smallShare - smallTruth, both, trueBytes, both / trueBytes, estSamples));
                details.add("leaves: allocBig " + Tallies.leafShares(p, "AllocSplit.allocBig") + "; allocSmall "
                        + Tallies.leafShares(p, "AllocSplit.allocSmall"));
                details.add(Tallies.truthLine(r));
                if (big == 0 || small == 0) {
                    problems.add("no stack through " + (big == 0 ? "AllocSplit.allocBig" : "AllocSplit.allocSmall"));
                } else {
                    if (estSamples < ALLOC_MIN_SAMPLES) {
                        problems.add("only about " + estSamples + " samples in the two sites (need " + ALLOC_MIN_SAMPLES
                                + ")");
                    }
                    double worst = Math.max(Math.abs(bigShare - bigTruth), Math.abs(smallShare - smallTruth));
                    if (worst > ALLOC_MAX_ERROR_POINTS) {
                        problems.add(String.format(Locale.ROOT, "byte shares off by %.2f points (limit %.1f)", worst,
                                ALLOC_MAX_ERROR_POINTS));
                    }
                    if (Math.abs(both / trueBytes - 1) > ALLOC_MAX_VOLUME_ERROR) {
                        problems.add(String.format(Locale.ROOT, "the two sites weigh %d bytes, they allocated %.0f"
                                + " (ratio %.3f, limit 1 +- %.2f)", both, trueBytes, both / trueBytes,
                                ALLOC_MAX_VOLUME_ERROR));
                    }
                    if (bigLeaf < ALLOC_MIN_LEAF_SHARE * big) {
                        problems.add("only " + bigLeaf + " of allocBig's " + big + " bytes end in long[]_[i]");
                    }
                    if (smallLeaf < ALLOC_MIN_LEAF_SHARE * small) {
                        problems.add("only " + smallLeaf + " of allocSmall's " + small
                                + " bytes end in AllocSplit$Small_[i]");
                    }
                }
                if (!problems.isEmpty()) {
                    details.addAll(p.top(8));
                }

            }
            if (nonePart) {
                // 2. No allocation in the hot method, default interval.
                String noneName = "alloc-split-none";
                Path noneOut = t.runDir(noneName).resolve("alloc.collapsed");
                IntegrationTest.Run rn = t.launch(noneName, List.of(), "start,event=alloc,file=" + noneOut,
                        "AllocSplit", "6", "none", "256");
                IntegrationTest.requireCleanExit(rn);
                Map<String, String> nt = Tallies.truth(rn, "TRUTH ");
                IntegrationTest.Profile pn = IntegrationTest.Profile.read(noneOut, rn);
                long hot = pn.samplesContaining("AllocSplit.computeOnly");
                long elsewhere = pn.samplesContaining("AllocSplit.allocElsewhere");
                long elsewhereLeaf = Tallies.weight(pn.stacks, s -> s.contains("AllocSplit.allocElsewhere")
                        && Tallies.leaf(s).equals("byte[]_[i]"));
                double elsewhereTruth = Tallies.num(nt, "elsewhere_bytes");
                long computeBytes = (long) Tallies.num(nt, "computeOnly_bytes");
                details.add(String.format(Locale.ROOT, "event=alloc (512k), none mode: computeOnly %d bytes sampled"
                                + " (%d measured inside it); allocElsewhere %d sampled for %.0f allocated (%.3f), %d of"
                                + " them ending in byte[]_[i]", hot, computeBytes, elsewhere, elsewhereTruth,
                        elsewhere / elsewhereTruth, elsewhereLeaf));
                long allowed = computeBytes > 0 ? 2 * ALLOC_DEFAULT_INTERVAL : 0;
                if (hot > allowed) {
                    problems.add("none mode: " + hot + " bytes sampled in computeOnly, which allocates "
                            + computeBytes + " bytes (allowed: " + allowed + ")");
                    pn.stacks.stream().filter(s -> s.contains("AllocSplit.computeOnly")).limit(4)
                            .forEach(s -> details.add("computeOnly| " + s));
                }
                if (elsewhere == 0) {
                    problems.add("none mode: no stack through AllocSplit.allocElsewhere (the control)");
                    details.addAll(pn.top(6));
                } else {
                    if (Math.abs(elsewhere / elsewhereTruth - 1) > ALLOC_MAX_VOLUME_ERROR) {
                        problems.add(String.format(Locale.ROOT, "none mode: allocElsewhere weighs %d bytes, it"
                                + " allocated %.0f (ratio %.3f, limit 1 +- %.2f)", elsewhere, elsewhereTruth,
                                elsewhere / elsewhereTruth, ALLOC_MAX_VOLUME_ERROR));
                    }
                    if (elsewhereLeaf < ALLOC_MIN_LEAF_SHARE * elsewhere) {
                        problems.add("none mode: only " + elsewhereLeaf + " of allocElsewhere's " + elsewhere
                                + " bytes end in byte[]_[i]");
                    }
                }
            }
        } catch (IntegrationTest.Failure f) {
            t.fail(name, f.getMessage(), f.evidence);
            return;
        }
        t.report(name, problems, details, t0);
    }

    // ---------------------------------------------------------------- lock-split

    /**
     * {@code lock-split}: (1) {@code event=lock} (threshold 10 us) on LockSplit's contended mode for 8 s: stacks
     * through syncSite exist and all end in {@code java.lang.Object_[i]} (the monitor's class), stacks through
     * reentrantSite exist and all end in a class containing {@code ReentrantLock} (the park blocker,
     * ReentrantLock$NonfairSync), syncSite weighs more than reentrantSite (about 3:1), and each site's weight (ns) is
     * within 20% of the waiting the workload measured at or above 10 us. (2) The none mode for 4 s: no stack through
     * syncSite or reentrantSite (uncontended, millions of times), while the control, controlSite (10 waits of about 20
     * ms on a monitor held by another thread), is there, ending in {@code java.lang.Object_[i]}, within 20% of its
     * measured waiting.
     *
     * <p>Why 20% holds: lock events are not sampled, every wait over the threshold is recorded with its duration, so
     * there is no statistical error, only what the two clocks see differently. The workload's clock runs from right
     * before the acquire to right after it; the profiler's from the JVM's contended-enter (after HotSpot's spinning)
     * or the park call, to the entered event or the park's return: the difference is the uncontended attempt, the
     * spinning and the callbacks, microseconds per wait against waits of milliseconds (on average about 12 ms at
     * syncSite, 4 ms at reentrantSite; measured: the profile had 99.0 to 99.9% of the truth). A
     * ReentrantLock waiter that is woken and loses the lock to a barging thread parks again; each park is its own
     * event and together they cover its wait. The threshold cuts waits under 10 us: the workload measures them apart
     * (about half of the acquisitions, uncontended or nearly, together under 0.01% of the waiting), and the
     * truth compared is the waiting of waits of 10 us and more. 20% is thus a wide margin that still catches a wrong
     * unit (us for ns), events lost or counted twice, or re-parks not recorded.
     */
    void lockSplit() {
        String name = "lock-split";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        try {
            Path out = t.runDir(name).resolve("lock.collapsed");
            IntegrationTest.Run r = t.launch(name, List.of(), "start,event=lock,file=" + out, "LockSplit", "8",
                    "contended");
            IntegrationTest.requireCleanExit(r);
            Map<String, String> truth = Tallies.truth(r, "TRUTH ");
            IntegrationTest.Profile p = IntegrationTest.Profile.read(out, r);
            long sync = p.samplesContaining("LockSplit.syncSite");
            long reentrant = p.samplesContaining("LockSplit.reentrantSite");
            long syncLeaf = Tallies.weight(p.stacks, s -> s.contains("LockSplit.syncSite")
                    && Tallies.leaf(s).equals(OBJECT_LEAF));
            long reentrantLeaf = Tallies.weight(p.stacks, s -> s.contains("LockSplit.reentrantSite")
                    && Tallies.leaf(s).contains("ReentrantLock") && Tallies.leaf(s).endsWith("_[i]"));
            double syncTruth = Tallies.num(truth, "syncWaitNsOver");
            double reentrantTruth = Tallies.num(truth, "reentrantWaitNsOver");
            details.add(String.format(Locale.ROOT, "syncSite %d ns recorded, %.0f measured in waits >= 10us (%.3f);"
                    + " reentrantSite %d ns, %.0f measured (%.3f)", sync, syncTruth, sync / syncTruth, reentrant,
                    reentrantTruth, reentrant / reentrantTruth));
            details.add(String.format(Locale.ROOT, "waits under 10us (not recorded): syncSite %s of %s waits, %s ns;"
                            + " reentrantSite %s of %s, %s ns", Tallies.sub(truth, "syncWaits", "syncWaitsOver"),
                    truth.get("syncWaits"), truth.get("syncShortNs"), Tallies.sub(truth, "reentrantWaits",
                            "reentrantWaitsOver"), truth.get("reentrantWaits"), truth.get("reentrantShortNs")));
            details.add("leaves: syncSite " + Tallies.leafShares(p, "LockSplit.syncSite") + "; reentrantSite "
                    + Tallies.leafShares(p, "LockSplit.reentrantSite"));
            if (sync == 0) {
                problems.add("no stack through LockSplit.syncSite");
            }
            if (reentrant == 0) {
                problems.add("no stack through LockSplit.reentrantSite");
            }
            if (sync > 0 && syncLeaf != sync) {
                problems.add((sync - syncLeaf) + " of syncSite's " + sync + " ns end in another leaf than "
                        + OBJECT_LEAF);
            }
            if (reentrant > 0 && reentrantLeaf != reentrant) {
                problems.add((reentrant - reentrantLeaf) + " of reentrantSite's " + reentrant
                        + " ns end in a leaf without ReentrantLock..._[i]");
            }
            if (sync > 0 && reentrant > 0 && sync <= reentrant) {
                problems.add("syncSite (" + sync + " ns) is not ranked above reentrantSite (" + reentrant + " ns)");
            }
            if (sync > 0 && Math.abs(sync / syncTruth - 1) > LOCK_MAX_ERROR) {
                problems.add(String.format(Locale.ROOT, "syncSite: %d ns recorded for %.0f ns measured (ratio %.3f,"
                        + " limit 1 +- %.2f)", sync, syncTruth, sync / syncTruth, LOCK_MAX_ERROR));
            }
            if (reentrant > 0 && Math.abs(reentrant / reentrantTruth - 1) > LOCK_MAX_ERROR) {
                problems.add(String.format(Locale.ROOT, "reentrantSite: %d ns recorded for %.0f ns measured (ratio"
                        + " %.3f, limit 1 +- %.2f)", reentrant, reentrantTruth, reentrant / reentrantTruth,
                        LOCK_MAX_ERROR));
            }
            if (!problems.isEmpty()) {
                details.addAll(p.top(8));
            }

            // 2. No contention at the two sites; the control contends elsewhere.
            String noneName = name + "-none";
            Path noneOut = t.runDir(noneName).resolve("lock.collapsed");
            IntegrationTest.Run rn = t.launch(noneName, List.of(), "start,event=lock,file=" + noneOut, "LockSplit",
                    "4", "none");
            IntegrationTest.requireCleanExit(rn);
            Map<String, String> nt = Tallies.truth(rn, "TRUTH ");
            IntegrationTest.Profile pn = Tallies.readAllowEmpty(noneOut, rn);
            long at = Tallies.weight(pn.stacks, s -> s.contains("LockSplit.syncSite")
                    || s.contains("LockSplit.reentrantSite"));
            long control = pn.samplesContaining("LockSplit.controlSite");
            long controlLeaf = Tallies.weight(pn.stacks, s -> s.contains("LockSplit.controlSite")
                    && Tallies.leaf(s).equals(OBJECT_LEAF));
            double controlTruth = Tallies.num(nt, "controlWaitNsOver");
            details.add(String.format(Locale.ROOT, "none mode: %s uncontended acquisitions at each site, %d ns"
                    + " recorded at them; control %d ns recorded, %.0f measured (%.3f)", nt.get("syncWaits"), at,
                    control, controlTruth, controlTruth == 0 ? 0 : control / controlTruth));
            if (at > 0) {
                problems.add("none mode: " + at + " ns recorded at the uncontended syncSite/reentrantSite");
                pn.stacks.stream().filter(s -> s.contains("LockSplit.syncSite")
                        || s.contains("LockSplit.reentrantSite")).limit(4).forEach(s -> details.add("none| " + s));
            }
            if (control == 0) {
                problems.add("none mode: no stack through LockSplit.controlSite (the control's real contention)");
                details.addAll(pn.stacks.isEmpty() ? List.of("(empty profile)") : pn.top(6));
            } else {
                if (controlLeaf != control) {
                    problems.add("none mode: " + (control - controlLeaf) + " of controlSite's ns end in another leaf"
                            + " than " + OBJECT_LEAF);
                }
                if (Math.abs(control / controlTruth - 1) > LOCK_MAX_ERROR) {
                    problems.add(String.format(Locale.ROOT, "none mode: controlSite %d ns recorded for %.0f"
                            + " measured (limit 1 +- %.2f)", control, controlTruth, LOCK_MAX_ERROR));
                }
            }
        } catch (IntegrationTest.Failure f) {
            t.fail(name, f.getMessage(), f.evidence);
            return;
        }
        t.report(name, problems, details, t0);
    }

    // ---------------------------------------------------------------- multi-event-jfr

    /**
     * {@code multi-event-jfr}: (1) {@code event=cpu,interval=1ms,wall=20ms,alloc,lock,chunktime=1s,file=all.jfr} on
     * EventMix (allocation, synchronized waits and ReentrantLock parks at once) for 5 s: the recording has at least 3
     * chunks; every chunk that overlaps the workload's run by {@value #CHUNK_MIN_OVERLAP_MS} ms or more, cut out of the
     * file as a recording of its own, is read by the JDK's {@code jfr summary} and holds jdk.ExecutionSample,
     * profiler.WallClockSample (wall beside cpu), jdk.ObjectAllocationInNewTLAB, jdk.JavaMonitorEnter and
     * jdk.ThreadPark events (so also the last of them, after several chunk boundaries, with its own metadata and
     * constant pools); {@code jfr print --json} of the whole file shows allocation events through allocBig with
     * objectClass long[] and the allocationSize the workload measured (4112; through allocSmall: AllocSplit$Small, 32),
     * at least 99% of them (see alloc-split), monitor-enter events through syncSite with monitorClass java.lang.Object,
     * park events through reentrantSite with a parkedClass containing ReentrantLock, and no lock event shorter than the
     * 10 us threshold. (2) {@code event=cpu,wall=20ms,alloc,lock,file=out-%e.collapsed,jfrfile=all.jfr} for 3 s:
     * exactly the files out-cpu, out-wall, out-alloc and out-lock are written, each non-empty, and
     * {@code jsampler convert --event E} of the recording gives, for each E, exactly the total weight of
     * out-E.collapsed (one run, one set of events: no tolerance; the number of stacks that differ is shown).
     *
     * <p>Why 300 ms of overlap is enough for every type to be there: in EventMix 300 ms hold about 75 allocation
     * samples (128 MB/s at 512 KiB), 70 monitor waits and 140 parks over 10 us, 30 or more CPU samples at 1 ms (the
     * allocator and the lock threads' spinning use 10 to 30% of a CPU) and over 100 wall samples (about 20 threads
     * every 20 ms, up to 16 a tick); the chance that a type misses such a chunk by chance is below 1e-12.
     */
    void multiEventJfr() {
        String name = "multi-event-jfr";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        List<String> details = new ArrayList<>();
        Path jfrTool = t.java.getParent().resolve("jfr");
        Path cli = t.agent.getParent().resolve("jsampler");
        try {
            // 1. One recording with every event, 1 s chunks.
            Path dir = t.runDir(name);
            Path jfr = dir.resolve("all.jfr");
            IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cpu,interval=1ms,wall=20ms,alloc,lock,"
                    + "chunktime=1s,file=" + jfr, "EventMix", "5");
            IntegrationTest.requireCleanExit(r);
            Map<String, String> window = Tallies.truth(r, "TRUTH ");
            if (!Files.isRegularFile(jfr)) {
                throw new IntegrationTest.Failure("no recording written at " + jfr, r.stderrTail(10));
            }
            List<JfrFiles.Chunk> chunks = JfrFiles.chunks(jfr);
            long startMs = (long) Tallies.num(window, "start_ms");
            long endMs = (long) Tallies.num(window, "end_ms");
            List<JfrFiles.Chunk> inside = chunks.stream()
                    .filter(c -> c.overlapMs(startMs, endMs) >= CHUNK_MIN_OVERLAP_MS).collect(Collectors.toList());
            details.add(chunks.size() + " chunks, " + inside.size() + " of them overlapping the workload's "
                    + (endMs - startMs) + " ms by " + CHUNK_MIN_OVERLAP_MS + " ms or more");
            if (chunks.size() < 3) {
                problems.add("only " + chunks.size() + " chunks with chunktime=1s over a 5 s run");
            }
            if (inside.size() < 2 || inside.get(inside.size() - 1).index == 0) {
                problems.add("fewer than 2 chunks inside the workload's run, or none after the first: chunk times "
                        + chunks.stream().map(JfrFiles.Chunk::toString).collect(Collectors.joining(", ")));
            }
            for (JfrFiles.Chunk c : inside) {
                Path one = dir.resolve("chunk-" + c.index + ".jfr");
                c.writeTo(jfr, one);
                JfrFiles.Tool summary = JfrFiles.tool(List.of(jfrTool.toString(), "summary", one.toString()));
                Map<String, Long> counts = new LinkedHashMap<>();
                for (String type : JFR_TYPES) {
                    counts.put(type, JfrFiles.count(summary.out, type));
                }
                boolean last = c == inside.get(inside.size() - 1);
                details.add("chunk " + c.index + (last ? " (the last inside the run)" : "") + ": " + counts);
                if (summary.exit != 0) {
                    problems.add("jfr summary fails on chunk " + c.index + " cut out alone: "
                            + summary.out.lines().findFirst().orElse(""));
                    continue;
                }
                List<String> missing = counts.entrySet().stream().filter(e -> e.getValue() == 0).map(Map.Entry::getKey)
                        .collect(Collectors.toList());
                if (!missing.isEmpty()) {
                    problems.add("chunk " + c.index + (last ? " (the last inside the run)" : "") + " has no "
                            + String.join(", ", missing));
                }
            }
            // CPU samples are STATE_DEFAULT (how async-profiler's converter tells them from wall samples), wall ones not
            Map<String, Long> cpuStates = JfrFiles.states(jfrTool, jfr, "jdk.ExecutionSample");
            Map<String, Long> wallStates = JfrFiles.states(jfrTool, jfr, "profiler.WallClockSample");
            details.add("thread states: jdk.ExecutionSample " + cpuStates + ", profiler.WallClockSample " + wallStates);
            if (cpuStates.isEmpty() || !cpuStates.keySet().equals(Set.of("STATE_DEFAULT"))) {
                problems.add("every jdk.ExecutionSample of event=cpu must be STATE_DEFAULT: " + cpuStates);
            }
            if (wallStates.isEmpty() || wallStates.containsKey("STATE_DEFAULT")) {
                problems.add("profiler.WallClockSample must carry thread states, never STATE_DEFAULT: " + wallStates);
            }
            JfrFiles.Tool print = JfrFiles.tool(List.of(jfrTool.toString(), "print", "--json", "--stack-depth", "16",
                    "--events", "jdk.ObjectAllocationInNewTLAB,jdk.JavaMonitorEnter,jdk.ThreadPark", jfr.toString()));
            if (print.exit != 0) {
                problems.add("jfr print --json fails on " + jfr + ": " + print.out.lines().findFirst().orElse(""));
            } else {
                // Object sizes as the workload measured them (4112 and 32 with 16- and 12-byte headers).
                Map<String, String> alloc = Tallies.truth(r, "ALLOC ");
                long bigSize = Math.round(Tallies.num(alloc, "big_bytes_per_call") / AllocSplit.BIG_PER_CALL);
                long smallSize = Math.round(Tallies.num(alloc, "small_bytes_per_call") / AllocSplit.SMALL_PER_CALL);
                JfrFiles.checkJfrFields(print.out, bigSize, smallSize, problems, details);
            }

            // 2. Text per event (%e) and the recording beside it: the converter gives each total back exactly.
            String textName = name + "-text";
            Path tdir = t.runDir(textName);
            Path tjfr = tdir.resolve("all.jfr");
            IntegrationTest.Run rt = t.launch(textName, List.of(), "start,event=cpu,wall=20ms,alloc,lock,file=" + tdir
                    + "/out-%e.collapsed,jfrfile=" + tjfr, "EventMix", "3");
            IntegrationTest.requireCleanExit(rt);
            List<String> written;
            try (Stream<Path> files = Files.list(tdir)) {
                written = files.map(f -> f.getFileName().toString()).filter(f -> f.startsWith("out-")).sorted()
                        .collect(Collectors.toList());
            }
            details.add("files=out-%e.collapsed wrote " + written);
            List<String> expectedFiles = TEXT_EVENTS.stream().map(e -> "out-" + e + ".collapsed").sorted()
                    .collect(Collectors.toList());
            if (!written.equals(expectedFiles)) {
                problems.add("expected exactly " + expectedFiles + ", got " + written);
            }
            for (String event : TEXT_EVENTS) {
                Path text = tdir.resolve("out-" + event + ".collapsed");
                if (!Files.isRegularFile(text)) {
                    continue;
                }
                IntegrationTest.Profile tp = Tallies.readAllowEmpty(text, rt);
                Path conv = tdir.resolve("convert-" + event + ".collapsed");
                JfrFiles.Tool c = JfrFiles.tool(List.of(cli.toString(), "convert", "--event", event, tjfr.toString(),
                        conv.toString()));
                if (c.exit != 0 || !Files.isRegularFile(conv)) {
                    problems.add("jsampler convert --event " + event + " failed: "
                            + c.out.lines().findFirst().orElse("(no output)"));
                    continue;
                }
                IntegrationTest.Profile cp = Tallies.readAllowEmpty(conv, rt);
                long differing = Tallies.differingStacks(tp, cp);
                details.add(String.format(Locale.ROOT, "%s: text %d in %d stacks, converted from JFR %d in %d stacks"
                        + " (%d stacks differ)", event, tp.total(), tp.stacks.size(), cp.total(), cp.stacks.size(),
                        differing));
                if (tp.total() == 0) {
                    problems.add("out-" + event + ".collapsed is empty");
                } else if (tp.total() != cp.total()) {
                    problems.add(event + ": the recording converts to a total of " + cp.total() + ", the text output"
                            + " has " + tp.total());
                }
            }
        } catch (IntegrationTest.Failure f) {
            t.fail(name, f.getMessage(), f.evidence);
            return;
        } catch (IOException | InterruptedException e) {
            t.fail(name, "harness: " + e, List.of());
            return;
        }
        t.report(name, problems, details, t0);
    }
}
