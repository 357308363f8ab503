import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
 * </ul>
 */
final class AllocChecks {
    private final IntegrationTest t;

    AllocChecks(IntegrationTest t) {
        this.t = t;
    }

    /** Count of samples (the last field) on collapsed lines containing s. */
    static long samplesWith(String collapsed, String s) {
        return collapsed.lines().filter(l -> l.contains(s))
                .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1))).sum();
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
}
