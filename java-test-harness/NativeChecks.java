import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Native and kernel frames ({@code cstack=fp|dwarf}), JVM threads with native stacks, and the events that need a PMU.
 *
 * <ul>
 * <li>{@code native-frames}: NativeLoad zip, mostly in zlib. With {@code cstack=fp}, at least half of the samples
 *     through {@code Deflater.deflateBytesBytes} go on into a native frame of libz (a zlib symbol or
 *     {@code [libz.so.1]}); with {@code cstack=dwarf} at least 90% have the whole chain from the Java method through
 *     its JNI function into zlib's {@code deflate}, frame pointers or not; with {@code cstack=no} none goes into libz
 *     (the Java walk stops at the native method); without cstack= (the default, fp) half of them do, as with fp.</li>
 * <li>{@code kernel-frames}: NativeLoad syscalls, mostly in read/lseek. Where kernel events are allowed (root,
 *     or kernel.perf_event_paranoid at most 1), at least a fifth of the samples through {@code readZero} reach
 *     the kernel's system-call entry ({@code do_syscall_64}); elsewhere the check is skipped with that reason.</li>
 * <li>{@code cstack-vmx}: the VM's frames between and below Java frames with {@code cstack=vmx} (see {@link #cstackVmx}).</li>
 * <li>{@code function-event}: {@code event=read} counts calls of a native function (see {@link #functionEvent}).</li>
 * <li>{@code cpu-scope}: record-cpu, target-cpu and alluser on a JVM pinned to one CPU (see {@link #cpuScope}).</li>
 * <li>{@code jvm-threads}: NativeLoad gc in a 32 MiB heap with {@code cstack=fp,threads} and with
 *     {@code cstack=dwarf,threads}: GC threads appear, with C++ frames of the VM named without their parameter lists
 *     (as async-profiler names them), not only error frames; with dwarf
 *     at least 90% of their samples reach the VM's thread start ({@code thread_native_entry}).</li>
 * <li>{@code hw-events}: {@code event=cycles} on a machine without a hardware PMU fails with one line naming the
 *     software events to use, and the JVM runs the workload to its end; {@code event=page-faults} on NativeLoad gc
 *     gives samples in {@code churn}, where new arrays touch fresh pages.</li>
 * <li>{@code tracepoint}: as root (tracefs mounted for the check if it is not, and unmounted after),
 *     {@code event=syscalls:sys_enter_read,interval=1000,cstack=dwarf} on NativeLoad syscalls puts at least 90% of the
 *     samples under {@code readZero}, through the JNI read into libc; an unknown tracepoint fails with one line
 *     naming it and the JVM runs on. Elsewhere skipped with the reason.</li>
 * </ul>
 */
final class NativeChecks {
    private final IntegrationTest t;

    NativeChecks(IntegrationTest t) {
        this.t = t;
    }

    /** Collapsed lines of path as [stack, weight] pairs. */
    static List<String[]> read(Path path, List<String> problems) {
        List<String[]> rows = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(path)) {
                int sp = line.lastIndexOf(' ');
                if (sp > 0) rows.add(new String[] {line.substring(0, sp), line.substring(sp + 1)});
            }
        } catch (IOException e) {
            problems.add("cannot read " + path + ": " + e);
        }
        return rows;
    }

    /** Weight of the rows whose stack contains through, and of those of them that also contain one of any. */
    static long[] weigh(List<String[]> rows, String through, String... any) {
        long[] w = new long[2];
        for (String[] r : rows) {
            if (!r[0].contains(through)) continue;
            long x = Long.parseLong(r[1]);
            w[0] += x;
            for (String a : any) {
                if (r[0].contains(a)) {
                    w[1] += x;
                    break;
                }
            }
        }
        return w;
    }

    IntegrationTest.Run run(String name, String opts, List<String> problems, String... args) {
        Path out = t.runDir(name).resolve("p.collapsed");
        IntegrationTest.Run r = t.launch(name, List.of(), opts + ",file=" + out, "NativeLoad", args);
        if (r.timedOut || r.exitCode != 0 || !r.stdout.contains("DONE")) {
            problems.add(name + ": exit " + r.exitCode + (r.timedOut ? " (timed out)" : "") + " in " + r.dir);
        }
        return r;
    }

    void nativeFrames() {
        String name = "native-frames";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        /* 2 s at 1 ms: about 2,000 samples a run (5 s at the default 10 ms gave 159 to 500) */
        run(name, "start,event=cpu,interval=1ms,cstack=fp", problems, "zip", "2");
        run(name + "-dwarf", "start,event=cpu,interval=1ms,cstack=dwarf", problems, "zip", "2");
        run(name + "-off", "start,event=cpu,interval=1ms,cstack=no", problems, "zip", "2");
        run(name + "-default", "start,event=cpu,interval=1ms", problems, "zip", "2"); /* native frames by default: fp */
        String via = "java/util/zip/Deflater.deflateBytesBytes";
        String whole = via + ";Java_java_util_zip_Deflater_deflateBytesBytes;deflate"; /* Java, JNI, zlib: no gap */
        List<String[]> fp = read(t.runDir(name).resolve("p.collapsed"), problems);
        List<String[]> dwarf = read(t.runDir(name + "-dwarf").resolve("p.collapsed"), problems);
        long[] on = weigh(fp, via, "[libz.so", ";deflate");
        long[] dw = weigh(dwarf, via, "[libz.so", ";deflate");
        long[] off = weigh(read(t.runDir(name + "-off").resolve("p.collapsed"), problems), via, "[libz.so", ";deflate");
        long[] def = weigh(read(t.runDir(name + "-default").resolve("p.collapsed"), problems), via, "[libz.so",
                ";deflate");
        long[] fpWhole = weigh(fp, via, whole), dwWhole = weigh(dwarf, via, whole);
        details.add(String.format(Locale.ROOT, "cstack=fp: %d of %d samples through deflateBytesBytes go into libz, "
                + "%d with the whole chain; cstack=dwarf: %d into libz, %d of %d whole; cstack=no: %d of %d", on[1], on[0],
                fpWhole[1], dw[1], dwWhole[1], dw[0], off[1], off[0]) + String.format(Locale.ROOT,
                "; default: %d of %d", def[1], def[0]));
        if (on[0] < 50) problems.add("too few samples through deflateBytesBytes with cstack=fp: " + on[0]);
        else if (on[1] * 2 < on[0]) problems.add("under half of the zlib samples show a libz frame with cstack=fp");
        if (dw[0] < 50) problems.add("too few samples through deflateBytesBytes with cstack=dwarf: " + dw[0]);
        else if (dwWhole[1] * 10 < dw[0] * 9) problems.add("under 90% of the zlib samples have the whole chain "
                + "(deflateBytesBytes, its JNI function, deflate) with cstack=dwarf");
        if (off[0] < 50) problems.add("too few samples through deflateBytesBytes without cstack: " + off[0]);
        else if (off[1] != 0) problems.add("libz frames with cstack=no: " + off[1]);
        if (def[0] < 50) problems.add("too few samples through deflateBytesBytes by default: " + def[0]);
        else if (def[1] * 2 < def[0]) problems.add("under half of the zlib samples show a libz frame by default (fp)");
        t.report(name, problems, details, t0);
    }

    /** Why kernel frames cannot be expected here, or null. */
    static String noKernelEvents() {
        try {
            int paranoid = Integer.parseInt(Files.readString(Path.of("/proc/sys/kernel/perf_event_paranoid")).trim());
            boolean root = "root".equals(System.getProperty("user.name"));
            return root || paranoid <= 1 ? null : "kernel.perf_event_paranoid=" + paranoid + " and not root";
        } catch (IOException | NumberFormatException e) {
            return "perf_event_paranoid unreadable: " + e;
        }
    }

    void kernelFrames() {
        String name = "kernel-frames";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        String why = noKernelEvents();
        if (why != null) {
            details.add("skipped: " + why);
            t.report(name, problems, details, t0);
            return;
        }
        run(name, "start,event=cpu,cstack=fp", problems, "syscalls", "5");
        long[] w = weigh(read(t.runDir(name).resolve("p.collapsed"), problems), "NativeLoad.readZero;",
                "do_syscall_64");
        details.add(String.format(Locale.ROOT, "%d of %d samples through readZero reach do_syscall_64", w[1], w[0]));
        if (w[0] < 50) problems.add("too few samples through readZero: " + w[0]);
        else if (w[1] * 5 < w[0]) problems.add("under a fifth of the samples in system calls show kernel frames");
        t.report(name, problems, details, t0);
    }

    /** GC threads' samples in one run with cstack=MODE: [all, with VM C++ frames, reaching thread_native_entry]. */
    long[] gcThreads(String name, String mode, List<String> problems) {
        Path out = t.runDir(name).resolve("p.collapsed");
        // A small heap, so the GC threads work: given through the environment (launch takes no JVM options).
        IntegrationTest.Run r = t.launch(name, List.of("env", "JAVA_TOOL_OPTIONS=-Xmx32m"),
                "start,event=cpu,interval=1ms,cstack=" + mode + ",threads,file=" + out, "NativeLoad", "gc", "5");
        if (r.exitCode != 0) problems.add("exit " + r.exitCode + " in " + r.dir);
        long[] w = new long[3];
        for (String[] row : read(out, problems)) {
            if (!row[0].startsWith("[GC Thread") && !row[0].startsWith("[G1 ")) continue;
            long x = Long.parseLong(row[1]);
            w[0] += x;
            if (row[0].contains("::")) w[1] += x; /* a C++ frame of the VM */
            for (String f : row[0].split(";")) /* C++ names without parameter lists, as async-profiler writes them */
                if (f.contains("::") && f.endsWith(")") && !f.endsWith("operator()")) {
                    problems.add(name + ": a C++ frame with its parameter list (only sig keeps them): " + f);
                    return w;
                }
            if (row[0].contains(";thread_native_entry")) w[2] += x; /* the VM's thread start: the stack is whole */
        }
        return w;
    }

    void jvmThreads() {
        String name = "jvm-threads";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        long[] fp = gcThreads(name, "fp", problems), dw = gcThreads(name + "-dwarf", "dwarf", problems);
        details.add(String.format(Locale.ROOT, "GC threads: cstack=fp %d samples, %d with VM C++ frames, %d down to "
                + "thread_native_entry; cstack=dwarf %d, %d, %d", fp[0], fp[1], fp[2], dw[0], dw[1], dw[2]));
        if (fp[0] == 0 || dw[0] == 0) problems.add("no samples of GC threads");
        else if (fp[1] * 2 < fp[0] || dw[1] * 2 < dw[0]) problems.add("under half of the GC threads' samples have VM C++ frames");
        else if (dw[2] * 10 < dw[0] * 9) problems.add("under 90% of the GC threads' samples reach thread_native_entry "
                + "with cstack=dwarf");
        t.report(name, problems, details, t0);
    }

    /** Total weight of rows, and the rows whose stack does not start with root. */
    static long[] rooted(List<String[]> rows, String root) {
        long[] w = new long[2];
        for (String[] r : rows) {
            long x = Long.parseLong(r[1]);
            w[0] += x;
            if (!r[0].startsWith(root)) w[1] += x;
        }
        return w;
    }

    /** The n of NativeLoad's "DONE n" line (its work done), or -1. */
    static long done(IntegrationTest.Run r) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("DONE (\\d+)").matcher(r.stdout);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /**
     * {@code cstack-vmx}: ClassInit 3 s (Class.forName runs a static initializer that computes in Java) at 1 ms with
     * {@code cstack=vmx}: at least 80% of the samples in the initializer show, root to leaf, JavaMain, the call stub,
     * ClassInit.main, Class.forName0, InstanceKlass::initialize, the call stub again and the initializer (the VM's
     * frames where it calls Java); with {@code cstack=vm} none of those VM frames appears (the control).
     */
    void cstackVmx() {
        String name = "cstack-vmx";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        java.util.regex.Pattern mixed = java.util.regex.Pattern.compile("JavaMain;.*call_stub;ClassInit\\.main;.*"
                + "java/lang/Class\\.forName0;.*InstanceKlass::initialize[^;]*;.*call_stub;ClassInit\\$Slow\\.<clinit>");
        for (String mode : List.of("vmx", "vm")) {
            Path out = t.runDir(name + "-" + mode).resolve("p.collapsed");
            IntegrationTest.Run r = t.launch(name + "-" + mode, List.of(), "start,event=cpu,interval=1ms,cstack=" + mode
                    + ",file=" + out, "ClassInit", "3");
            if (r.exitCode != 0) problems.add(mode + ": exit " + r.exitCode + " in " + r.dir);
            long init = 0, full = 0, vmFrames = 0;
            for (String[] row : read(out, problems)) {
                long n = Long.parseLong(row[1]);
                if (!row[0].contains("ClassInit$Slow.<clinit>")) continue;
                init += n;
                if (mixed.matcher(row[0]).find()) full += n;
                if (row[0].contains("InstanceKlass::initialize") || row[0].contains("call_stub")
                        || row[0].contains("JavaMain")) vmFrames += n;
            }
            details.add(String.format(Locale.ROOT, "cstack=%s: %d samples in the initializer, %d with the VM's frames "
                    + "between and below (%d with any of them)", mode, init, full, vmFrames));
            if (mode.equals("vmx") && (init < 500 || full < 0.8 * init)) {
                problems.add("vmx: " + full + " of " + init + " initializer samples show the VM's frames between and "
                        + "below the Java frames (expected at least 80% of at least 500)");
            }
            if (mode.equals("vm") && (init < 500 || vmFrames != 0)) {
                problems.add("vm: " + vmFrames + " of " + init + " initializer samples show VM frames between or below "
                        + "Java frames (expected none)");
            }
        }
        t.report(name, problems, details, t0);
    }

    /**
     * {@code function-event}: {@code event=read,interval=1000,nojitter} (a hardware breakpoint on libc's read, as
     * async-profiler samples a native function) on NativeLoad syscalls 2 s, which calls read() on /dev/zero in a loop
     * and counts its calls: one sample per 1000 calls, within 2 (the JVM's own reads), every stack ending in the
     * function (named by the library: read or an alias of it) under NativeLoad.readZero.
     */
    void functionEvent() {
        String name = "function-event";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path out = t.runDir(name).resolve("p.collapsed");
        IntegrationTest.Run r = t.launch(name, List.of(), "start,event=read,interval=1000,nojitter,file=" + out,
                "NativeLoad", "syscalls", "2");
        if (r.exitCode != 0) problems.add("exit " + r.exitCode + " in " + r.dir);
        long samples = 0, inLoop = 0, otherLeaf = 0;
        for (String[] row : read(out, problems)) {
            long n = Long.parseLong(row[1]);
            samples += n;
            if (row[0].contains("NativeLoad.readZero")) inLoop += n;
            String leaf = row[0].substring(row[0].lastIndexOf(';') + 1);
            if (!leaf.contains("read")) otherLeaf += n;
        }
        long calls = done(r) / 64;
        details.add(String.format(Locale.ROOT, "%d read() calls by the loop: %d samples (%d under readZero), %d not "
                + "ending in read", calls, samples, inLoop, otherLeaf));
        if (calls <= 0 || Math.abs(inLoop - calls / 1000) > 2 || samples - inLoop > 2) {
            problems.add("expected " + (calls / 1000) + " samples within 2 (one per 1000 calls), got " + inLoop
                    + " under readZero and " + (samples - inLoop) + " elsewhere");
        }
        if (otherLeaf != 0) problems.add(otherLeaf + " samples do not end in the function");
        /* A debug trap the kernel passed on is absorbed by design (trap.h), and said: shown here as evidence. */
        r.stderr.lines().filter(l -> l.contains("hardware breakpoint reached the process")).forEach(details::add);
        t.report(name, problems, details, t0);
    }

    /**
     * {@code cpu-scope}: async-profiler's record-cpu, target-cpu and alluser, on NativeLoad pinned to CPU 1 by taskset
     * (skipped on one CPU). record-cpu (zip, 2 s, 1 ms): every collapsed stack starts with {@code [CPU-1]}
     * (a {@code [throttled]} count is no stack), and every
     * jdk.ExecutionSample of the JFR recording written beside it ends in a frame {@code CPU-1} (async-profiler's
     * name). target-cpu=0: no sample (the thread never runs there); target-cpu=1: samples. alluser (syscalls, mostly
     * in the kernel): no stack reaches the kernel's system-call entry, and the samples per unit of work fall to under
     * 0.8 of a run without it (measured 0.54-0.56: the kernel's part of the time is not sampled).
     */
    void cpuScope() {
        String name = "cpu-scope";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        if (Runtime.getRuntime().availableProcessors() < 2) {
            details.add("skipped: one CPU, so no CPU to leave out");
            t.report(name, problems, details, t0);
            return;
        }
        List<String> pin = List.of("taskset", "-c", "1");
        String rec = name + "-record";
        Path out = t.runDir(rec).resolve("p.collapsed"), jfr = t.runDir(rec).resolve("p.jfr");
        IntegrationTest.Run r = t.launch(rec, pin, "start,event=cpu,interval=1ms,record-cpu,file=" + out + ",jfrfile="
                + jfr, "NativeLoad", "zip", "2");
        if (r.exitCode != 0) problems.add(rec + ": exit " + r.exitCode + " in " + r.dir);
        /* Samples the budget throttled (a loaded machine: 24 of 1,674 once in CI) have no stack, so no CPU frame: they
         * are one "[throttled]" row, counted apart; every stack must have the CPU. */
        List<String[]> recRows = new ArrayList<>(read(out, problems));
        long throttled = 0;
        for (java.util.Iterator<String[]> it = recRows.iterator(); it.hasNext(); ) {
            String[] row = it.next();
            if (row[0].equals("[throttled]")) {
                throttled += Long.parseLong(row[1]);
                it.remove();
            }
        }
        long[] w = rooted(recRows, "[CPU-1];");
        long events = 0, cpu1 = 0;
        try {
            for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(jfr)) {
                if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) continue;
                List<jdk.jfr.consumer.RecordedFrame> f = e.getStackTrace().getFrames();
                events++;
                if (!f.isEmpty() && f.get(f.size() - 1).getMethod().getName().equals("CPU-1")) cpu1++;
            }
        } catch (IOException e) {
            problems.add("cannot read " + jfr + ": " + e);
        }
        details.add(String.format(Locale.ROOT, "record-cpu: %d samples, %d not under [CPU-1] (%d throttled, without a "
                + "stack); JFR: %d of %d samples end in CPU-1", w[0], w[1], throttled, cpu1, events));
        if (w[0] < 100 || w[1] != 0) problems.add("record-cpu: every stack should start with [CPU-1]: " + w[1] + " of "
                + w[0] + " do not");
        if (events < 100 || cpu1 != events) problems.add("record-cpu: JFR samples ending in CPU-1: " + cpu1 + " of " + events);

        long[] on = new long[2];
        for (int cpu = 0; cpu < 2; cpu++) {
            String run = name + "-target" + cpu;
            Path o = t.runDir(run).resolve("p.collapsed");
            IntegrationTest.Run rt = t.launch(run, pin, "start,event=cpu,interval=1ms,target-cpu=" + cpu + ",file=" + o,
                    "NativeLoad", "zip", "1");
            if (rt.exitCode != 0) problems.add(run + ": exit " + rt.exitCode + " in " + rt.dir);
            on[cpu] = rooted(read(o, problems), "")[0];
        }
        details.add(String.format(Locale.ROOT, "pinned to CPU 1: target-cpu=0 %d samples, target-cpu=1 %d", on[0], on[1]));
        if (on[0] != 0) problems.add("target-cpu=0 sampled a thread pinned to CPU 1: " + on[0] + " samples");
        if (on[1] < 100) problems.add("target-cpu=1: too few samples of a thread pinned there: " + on[1]);

        double[] per = new double[2];
        long kernel = 0;
        for (int u = 0; u < 2; u++) {
            String run = name + (u == 1 ? "-alluser" : "-all");
            Path o = t.runDir(run).resolve("p.collapsed");
            IntegrationTest.Run ra = t.launch(run, pin, "start,event=cpu,interval=1ms,cstack=fp" + (u == 1 ? ",alluser" : "")
                    + ",file=" + o, "NativeLoad", "syscalls", "2");
            if (ra.exitCode != 0) problems.add(run + ": exit " + ra.exitCode + " in " + ra.dir);
            List<String[]> rows = read(o, problems);
            if (u == 1) kernel = weigh(rows, "", "do_syscall_64")[1];
            long n = done(ra);
            per[u] = n > 0 ? rooted(rows, "")[0] / (double) n : 0;
        }
        double ratio = per[0] > 0 ? per[1] / per[0] : 1;
        details.add(String.format(Locale.ROOT, "alluser: samples per unit of work %.2f of a run without it; %d samples "
                + "in the kernel's system-call entry", ratio, kernel));
        if (kernel != 0) problems.add("alluser: samples reached the kernel: " + kernel);
        if (per[1] == 0 || ratio >= 0.8) problems.add(String.format(Locale.ROOT, "alluser: samples per unit of work "
                + "%.2f of a run without it (expected under 0.8: the kernel's time is not sampled)", ratio));
        t.report(name, problems, details, t0);
    }

    /** {@code wall-filter}: WallSplit with 3 idle threads under {@code event=wall,filter=wallsplit-worker,threads}:
     *  every sample is the worker's, and the worker still has its full share of samples (about 10 s / 10 ms). */
    void wallFilter() {
        String name = "wall-filter";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path out = t.runDir(name).resolve("p.collapsed");
        IntegrationTest.Run r = t.launch(name, List.of(),
                "start,event=wall,interval=10ms,filter=wallsplit-worker,threads,file=" + out, "WallSplit", "4", "3");
        if (r.exitCode != 0) problems.add("exit " + r.exitCode + " in " + r.dir);
        long worker = 0, other = 0;
        for (String[] row : read(out, problems)) {
            long x = Long.parseLong(row[1]);
            if (row[0].startsWith("[wallsplit-worker ")) worker += x;
            else other += x;
        }
        details.add(String.format(Locale.ROOT, "wallsplit-worker %d samples, other threads %d", worker, other));
        if (other != 0) problems.add("samples of threads the filter leaves out: " + other);
        if (worker < 300) problems.add("too few samples of the worker (4 s at 10 ms is about 400): " + worker);
        t.report(name, problems, details, t0);
    }

    void hwEvents() {
        String name = "hw-events";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cycles,file=" + t.runDir(name).resolve("c.txt"),
                "NativeLoad", "gc", "1");
        String line = r.stderr.lines().filter(l -> l.contains("event cycles")).findFirst().orElse("");
        details.add("event=cycles: " + line);
        boolean pmu = new java.io.File("/sys/bus/event_source/devices/cpu").exists();
        if (pmu) {
            details.add("this machine has a PMU: event=cycles ran");
        } else if (!line.contains("no hardware performance counters") || !line.contains("page-faults")) {
            problems.add("no line naming the missing PMU and the software events: " + r.stderr);
        }
        if (r.exitCode != 0 || !r.stdout.contains("DONE")) problems.add("the JVM did not run on: exit " + r.exitCode);
        Path out = t.runDir(name + "-pf").resolve("p.collapsed");
        IntegrationTest.Run pf = t.launch(name + "-pf", List.of(), "start,event=page-faults,interval=100,file=" + out,
                "NativeLoad", "gc", "3");
        long[] w = weigh(read(out, problems), "", "NativeLoad.churn");
        details.add(String.format(Locale.ROOT, "event=page-faults: %d samples, %d in churn", w[0], w[1]));
        if (pf.exitCode != 0 || w[1] == 0) problems.add("event=page-faults gave no samples in churn (exit " + pf.exitCode + ")");
        t.report(name, problems, details, t0);
    }

    /** Runs a command, true if it exits 0 within 10 s. */
    static boolean sh(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    void tracepoint() {
        String name = "tracepoint";
        if (!t.selected(name)) return;
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path events = Path.of("/sys/kernel/tracing/events");
        boolean mounted = false;
        if (!"root".equals(System.getProperty("user.name"))) {
            details.add("skipped: tracepoint ids are readable by root only");
            t.report(name, problems, details, t0);
            return;
        }
        if (!Files.isDirectory(events)) {
            mounted = sh("mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing");
            if (!mounted || !Files.isDirectory(events.resolve("syscalls/sys_enter_read"))) {
                if (mounted) sh("umount", "/sys/kernel/tracing");
                details.add("skipped: no tracefs with syscalls:sys_enter_read here (mount " + (mounted ? "worked" : "failed") + ")");
                t.report(name, problems, details, t0);
                return;
            }
        }
        try {
            // Every 1000th read: a dwarf walk costs more than ten reads of /dev/zero, and at a shorter interval the
            // handler budget (a fifth of the thread's CPU) keeps most samples under [throttled].
            run(name, "start,event=syscalls:sys_enter_read,interval=1000,cstack=dwarf", problems, "syscalls", "3");
            List<String[]> rows = read(t.runDir(name).resolve("p.collapsed"), problems);
            long[] all = weigh(rows, "", "NativeLoad.readZero");
            long[] libc = weigh(rows, "NativeLoad.readZero", ";__read", ";read");
            details.add(String.format(Locale.ROOT, "event=syscalls:sys_enter_read: %d samples, %d under readZero, %d of "
                    + "them into libc's read", all[0], all[1], libc[1]));
            if (all[0] < 100) problems.add("too few samples of syscalls:sys_enter_read: " + all[0]);
            else if (all[1] * 10 < all[0] * 9) problems.add("under 90% of the read tracepoint's samples under readZero");
            else if (libc[1] * 2 < libc[0]) problems.add("under half of them reach libc's read with cstack=dwarf");
            IntegrationTest.Run bad = t.launch(name + "-bad", List.of(), "start,event=sched:no_such_tracepoint,file="
                    + t.runDir(name + "-bad").resolve("p.collapsed"), "NativeLoad", "syscalls", "1");
            String line = bad.stderr.lines().filter(l -> l.contains("sched:no_such_tracepoint")).findFirst().orElse("");
            details.add("unknown tracepoint: " + line);
            if (!line.contains("no such tracepoint in")) problems.add("no line naming the unknown tracepoint: " + bad.stderr);
            if (bad.exitCode != 0 || !bad.stdout.contains("DONE")) problems.add("the JVM did not run on after an unknown tracepoint");
        } finally {
            if (mounted) sh("umount", "/sys/kernel/tracing");
        }
        t.report(name, problems, details, t0);
    }
}
