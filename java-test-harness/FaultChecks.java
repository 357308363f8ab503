import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Faults around the agent while it profiles: each ends in one clear line per output it breaks (for a streamed
 * recording: when it happens; the stop's result then says the recording is incomplete), a JVM that runs to its end,
 * and no finished recording lost.
 *
 * <ul>
 * <li>{@code output-dir-deleted}: the directory of a text output and a streamed JFR recording removed mid-run: one
 * ERROR line for each, naming it.</li>
 * <li>{@code output-disk-full}: both outputs on a 512 KiB tmpfs that the recording fills (a chunk of 64 KiB of
 * events ends with its constant pools, which with native frames and their names take as much again or more; root
 * only, skipped with a message otherwise): one ERROR line for each; the chunks finished before the device filled are
 * read by
 * {@code jsampler convert}, and the text output's previous file is left whole (outputs are renamed into place).</li>
 * <li>{@code exit-during-dump}: System.exit while a thread writes dump after dump (5 runs): exit 0, no crash, every
 * dump that said it was written is complete, no temporary file left, the final output written once.</li>
 * </ul>
 */
final class FaultChecks {
    static final Pattern COLLAPSED_LINE = Pattern.compile("^.+ \\d+$");

    private final IntegrationTest t;

    FaultChecks(IntegrationTest t) {
        this.t = t;
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path q : walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                Files.delete(q);
            }
        }
    }

    /** Agent ERROR lines naming path, the others counted as problems when expected is one. */
    static List<String> errorsNaming(IntegrationTest.Run r, String path) {
        return r.agentLines("ERROR").stream().filter(l -> l.contains(path)).collect(Collectors.toList());
    }

    /** The JVM ran to its end: CpuSplit's TRUTH line, exit 0, no crash. */
    static void ranToEnd(IntegrationTest.Run r, List<String> problems) {
        problems.addAll(r.crashSigns());
        if (r.timedOut || r.exitCode != 0) {
            problems.add("exit " + r.exitCode + (r.timedOut ? " (timed out)" : "") + ": the JVM did not end normally");
        }
        if (!r.stdout.contains("TRUTH")) {
            problems.add("the application did not run to its end (no TRUTH line)");
        }
    }

    /** Exactly one ERROR line names path and says why. */
    static void oneError(IntegrationTest.Run r, String path, String why, List<String> problems) {
        List<String> lines = errorsNaming(r, path);
        if (lines.size() != 1 || !lines.get(0).contains(why)) {
            problems.add("expected one ERROR line naming " + path + " with '" + why + "', got " + lines);
        }
    }

    /** A streamed recording: one ERROR line when the failure happens ("JFR recording stopped: ..." naming path and
     *  why), and the stop's result, which says the recording is incomplete, and nothing else. */
    static void oneJfrError(IntegrationTest.Run r, String path, String why, List<String> problems) {
        List<String> lines = errorsNaming(r, path);
        long when = lines.stream().filter(l -> l.contains("JFR recording stopped") && l.contains(why)).count();
        long result = lines.stream().filter(l -> l.contains("is incomplete")).count();
        if (when != 1 || result > 1 || lines.size() != when + result) {
            problems.add("expected one ERROR line 'JFR recording stopped' naming " + path + " with '" + why
                    + "' (and the stop's result), got " + lines);
        }
    }

    void dirDeleted() {
        String name = "output-dir-deleted";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path out = t.runDir(name + "-out");
        String html = out.resolve("p.html").toString(), jfr = out.resolve("p.jfr").toString();
        try {
            deleteTree(out);
            Files.createDirectories(out);
            Thread remover = new Thread(() -> {
                try {
                    Thread.sleep(2500);
                    deleteTree(out);
                } catch (IOException | InterruptedException e) {
                    problems.add("cannot remove " + out + ": " + e);
                }
            });
            remover.start();
            IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cpu,interval=1ms,file=" + html + ",jfrfile="
                    + jfr + ",chunktime=1s", "CpuSplit", "5", "2");
            remover.join();
            ranToEnd(r, problems);
            oneError(r, html, "does not exist", problems);
            oneJfrError(r, jfr, "removed while being written", problems);
            r.agentLines("ERROR").forEach(l -> details.add("stderr: " + l));
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        }
        t.report(name, problems, details, t0);
    }

    static int run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }

    void diskFull() {
        String name = "output-disk-full";
        if (!t.selected(name)) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>(), details = new ArrayList<>();
        Path fs = t.runDir(name + "-fs");
        boolean mounted = false;
        try {
            Files.createDirectories(fs);
            mounted = run(List.of("mount", "-t", "tmpfs", "-o", "size=512k,mode=0755", "tmpfs", fs.toString())) == 0;
            if (!mounted) {
                t.skip(name, "cannot mount a small tmpfs here (needs root and CAP_SYS_ADMIN)");
                return;
            }
            Path html = fs.resolve("p.html"), jfr = fs.resolve("p.jfr");
            Files.writeString(html, "the previous profile\n");
            IntegrationTest.Run r = t.launch(name, List.of(), "start,event=cpu,interval=100us,file=" + html
                    + ",jfrfile=" + jfr + ",chunksize=64k,chunktime=1s", "CpuSplit", "6", "2");
            ranToEnd(r, problems);
            oneJfrError(r, jfr.toString(), "No space left on device", problems);
            oneError(r, html.toString(), "No space left on device", problems);
            if (!Files.readString(html).equals("the previous profile\n")) {
                problems.add("the text output's previous file was not left whole");
            }
            Path collapsed = t.runDir(name).resolve("recovered.collapsed");
            Path cli = t.agent.getParent().resolve("jsampler");
            Process p = new ProcessBuilder(cli.toString(), "convert", jfr.toString(), collapsed.toString())
                    .redirectErrorStream(true).start();
            String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            p.waitFor(30, TimeUnit.SECONDS);
            long samples = Files.exists(collapsed) ? Files.readAllLines(collapsed).stream()
                    .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1))).sum() : 0;
            if (p.exitValue() != 0 || samples == 0) {
                problems.add("jsampler convert read no samples from the chunks written before the device filled (exit "
                        + p.exitValue() + ": " + said + ")");
            }
            details.add(Files.size(jfr) + " bytes of JFR on the full device; convert read " + samples + " samples"
                    + (said.isEmpty() ? "" : " (" + said + ")"));
            r.agentLines("ERROR").forEach(l -> details.add("stderr: " + l));
        } catch (IOException | InterruptedException e) {
            problems.add("harness: " + e);
        } finally {
            if (mounted) {
                try {
                    run(List.of("umount", fs.toString()));
                } catch (IOException | InterruptedException e) {
                    problems.add("cannot unmount " + fs + ": " + e);
                }
            }
        }
        t.report(name, problems, details, t0);
    }

    void exitDuringDump() {
        String name = "exit-during-dump";
        if (!t.selected(name) || t.jar == null) {
            return;
        }
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        int dumps = 0, refused = 0;
        for (int i = 0; i < 5; i++) {
            Path dir = t.runDir(name + "-" + i);
            Path fin = dir.resolve("final.collapsed");
            IntegrationTest.Run r = t.launch(name + "-" + i, List.of(), 30, "start,event=cpu,interval=1ms,threads,file="
                    + fin, "ExitDump", Integer.toString(400 + 150 * i));
            String run = "run " + i + ": ";
            if (r.timedOut || r.exitCode != 0 || !r.crashSigns().isEmpty()) {
                problems.add(run + "exit " + r.exitCode + (r.timedOut ? " (hung)" : "") + " " + r.crashSigns());
            }
            long wrote = r.agentLines("INFO").stream().filter(l -> l.contains("wrote collapsed profile")).count();
            try {
                if (wrote != 1 || !Files.isRegularFile(fin)
                        || !Files.readAllLines(fin).stream().allMatch(l -> COLLAPSED_LINE.matcher(l).matches())) {
                    problems.add(run + "the final output was written " + wrote + " times or is not whole");
                }
                for (String l : r.stdout.lines().collect(Collectors.toList())) {
                    if (l.startsWith("DUMPED ")) {
                        dumps++;
                        Path d = dir.resolve("dump-" + l.substring(7).trim() + ".html");
                        if (!Files.isRegularFile(d) || !Files.readString(d).trim().endsWith("</html>")) {
                            problems.add(run + d.getFileName() + " was reported written but is not whole");
                        }
                    } else if (l.startsWith("DUMP_REFUSED")) {
                        refused++;
                    }
                }
                try (Stream<Path> files = Files.list(dir)) {
                    List<String> left = files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".tmp"))
                            .collect(Collectors.toList());
                    if (!left.isEmpty()) {
                        problems.add(run + "temporary files left: " + left);
                    }
                }
            } catch (IOException e) {
                problems.add(run + "harness: " + e);
            }
        }
        t.report(name, problems, List.of(dumps + " dumps written whole, " + refused
                + " refused after the VM began to exit, in 5 runs"), t0);
    }
}
