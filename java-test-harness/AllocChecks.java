import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Allocation profiling as async-profiler users run it:
 * <ul>
 * <li>{@code alloc-startup}: Hello from start-up with {@code event=alloc,alloc=1,cstack=fp} and TLABs off (every
 * allocation goes through the VM's slow path, so each is sampled): the profile holds the allocations the launcher
 * makes before main (loading the main class, under {@code LauncherHelper.checkAndLoadMain}: the main thread was
 * created before VMInit, and samples them only if the sampling interval was set at start-up), the VM's own
 * allocations with their native frames down to {@code JNI_CreateJavaVM}, and the VM's frames above the allocation
 * entry are not shown (no {@code MemAllocator::allocate}, no JVMTI poster, no frame of the agent's callback). With
 * {@code cstack=no} no native frame is shown and the launcher's allocations still are.</li>
 * <li>{@code alloc-tlab}: TlabAlloc with {@code event=alloc,tlab} (every TLAB event taken): the 4 MB arrays
 * {@code big()} allocates outside any TLAB add up, in the collapsed profile ({@code total}) under
 * {@code TlabAlloc.big;byte[]_[k]}, and in the JFR recording's {@code jdk.ObjectAllocationOutsideTLAB} events read by
 * the JDK's own parser (class {@code byte[]}, top frame {@code big}), to exactly the bytes the workload says it
 * allocated there; {@code small()}'s strings show as {@code jdk.ObjectAllocationInNewTLAB}; the run ends normally
 * (the hooked functions are put back at stop). {@code live} with {@code tlab} fails the start naming the option.</li>
 * </ul>
 */
final class AllocChecks {
    private final IntegrationTest t;

    AllocChecks(IntegrationTest t) {
        this.t = t;
    }

    /** The weights (last field) of the collapsed lines containing s: samples or bytes, as the profile counts. */
    static long samplesWith(String collapsed, String s) {
        return AsprofChecks.bytesThrough(collapsed, s);
    }

    void startup() {
        String name = "alloc-startup";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        List<String> noTlab = List.of("env", "JAVA_TOOL_OPTIONS=-XX:+UseG1GC -XX:-UseTLAB");
        for (String cstack : List.of("fp", "no")) {
            Path out = t.runDir(name + "-" + cstack).resolve("alloc.collapsed");
            String opts = "start,event=alloc,alloc=1,samples,cstack=" + cstack + ",collapsed,file=" + out;
            IntegrationTest.Run r = t.launch(name + "-" + cstack, noTlab, opts, "Hello", "50");
            problems.addAll(r.crashSigns());
            String text;
            try {
                text = Files.readString(out);
            } catch (Exception ex) {
                problems.add(cstack + ": no profile: " + ex + " " + String.join(" ", r.stderrTail(3)));
                continue;
            }
            long total = samplesWith(text, "");
            long launcher = samplesWith(text, "sun/launcher/LauncherHelper.checkAndLoadMain");
            long createVm = samplesWith(text, "JNI_CreateJavaVM;");
            long internal = samplesWith(text, "MemAllocator") + samplesWith(text, "post_sampled_object_alloc")
                    + samplesWith(text, "js_vmevents");
            details.add(String.format("cstack=%s: %d samples, %d under LauncherHelper.checkAndLoadMain, %d under "
                    + "JNI_CreateJavaVM, %d through the VM's allocator or the callback", cstack, total, launcher,
                    createVm, internal));
            if (launcher < 20) {
                problems.add(cstack + ": " + launcher + " samples of the launcher's loading of the main class (every "
                        + "allocation is sampled: expected at least 20; the main thread's first sample point was drawn "
                        + "before the interval was set?)");
            }
            if (internal != 0) {
                problems.add(cstack + ": " + internal + " samples show the VM's allocator or the JVMTI callback");
            }
            if (cstack.equals("fp") && createVm == 0) {
                problems.add("fp: no allocation of JVM start-up with its native frames (JNI_CreateJavaVM)");
            }
            if (cstack.equals("no") && (createVm != 0 || samplesWith(text, "::") != 0)) {
                problems.add("no: native frames shown with cstack=no");
            }
        }
        t.report(name, problems, details, t0);
    }

    void tlab() {
        String name = "alloc-tlab";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        for (String out : List.of("alloc.collapsed", "alloc.jfr")) {
            String run = name + (out.endsWith("jfr") ? "-jfr" : "-text");
            Path file = t.runDir(run).resolve(out);
            IntegrationTest.Run r = t.launch(run, List.of(), "start,event=alloc,tlab,total,file=" + file, "TlabAlloc",
                    "2");
            problems.addAll(r.crashSigns());
            String truth = r.stdout.lines().filter(l -> l.startsWith("TLAB_TRUTH ")).findFirst().orElse(null);
            if (r.exitCode != 0 || truth == null) {
                problems.add(out + ": exit " + r.exitCode + ", no TLAB_TRUTH line: " + String.join(" ", r.stderrTail(3)));
                continue;
            }
            long want = Long.parseLong(truth.split(" ")[2]);
            long outside = 0, inNew = 0, outsideElsewhere = 0;
            try {
                if (out.endsWith("jfr")) {
                    try (RecordingFile rf = new RecordingFile(file)) {
                        while (rf.hasMoreEvents()) {
                            RecordedEvent e = rf.readEvent();
                            String type = e.getEventType().getName();
                            List<RecordedFrame> frames = e.getStackTrace() == null ? List.of() : e.getStackTrace().getFrames();
                            String top = frames.isEmpty() ? "" : frames.get(0).getMethod().getName();
                            if (type.equals("jdk.ObjectAllocationOutsideTLAB")) {
                                if (top.equals("big") && List.of("byte[]", "[B").contains(e.getClass("objectClass").getName())) {
                                    outside += e.getLong("allocationSize");
                                } else {
                                    outsideElsewhere++;
                                }
                            } else if (type.equals("jdk.ObjectAllocationInNewTLAB")
                                    && frames.stream().anyMatch(f -> f.getMethod().getName().equals("small"))) {
                                inNew++;
                            }
                        }
                    }
                } else {
                    String text = Files.readString(file);
                    outside = samplesWith(text, "TlabAlloc.big;byte[]_[k]");
                    inNew = text.lines().filter(l -> l.contains("TlabAlloc.small") && l.contains("_[i] ")).count();
                }
            } catch (Exception ex) {
                problems.add(out + ": unreadable: " + ex);
                continue;
            }
            details.add(String.format("%s: big() outside TLABs %d bytes of %d allocated; small() in new TLABs: %d %s; "
                    + "other outside-TLAB events %d", out, outside, want, inNew,
                    out.endsWith("jfr") ? "events" : "stacks", outsideElsewhere));
            if (outside != want) {
                problems.add(out + ": big()'s arrays outside TLABs show " + outside + " bytes, the workload allocated "
                        + want);
            }
            if (inNew == 0) {
                problems.add(out + ": no new-TLAB allocation under small()");
            }
        }
        IntegrationTest.Run bad = t.launch(name + "-live", List.of(), "start,event=alloc,tlab,live,file="
                + t.runDir(name + "-live").resolve("x.collapsed"), "Hello", "50");
        String err = String.join(" ", bad.stderrTail(5));
        if (bad.exitCode == 0 || !err.contains("option 'live'")) {
            problems.add("live with tlab: exit " + bad.exitCode + ", expected a start-up error naming 'live': " + err);
        }
        t.report(name, problems, details, t0);
    }
}
