import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.stream.Collectors;

/**
 * The two sides an event check ({@link EventChecks}) compares: the truth a workload measured, from its {@code TRUTH}
 * line of key=value fields, and the weights of a collapsed profile, summed by method, leaf frame and thread root.
 */
final class Tallies {
    private Tallies() {
    }

    /** key=value fields of the first stdout line starting with prefix. */
    static Map<String, String> truth(IntegrationTest.Run r, String prefix) throws IntegrationTest.Failure {
        String line = r.stdout.lines().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new IntegrationTest.Failure("the workload printed no '" + prefix.trim()
                        + "' line (" + r.dir + ")", r.stderrTail(10)));
        Map<String, String> m = new LinkedHashMap<>();
        for (String field : line.substring(prefix.length()).trim().split("\\s+")) {
            String[] kv = field.split("=", 2);
            if (kv.length == 2) {
                m.put(kv[0], kv[1]);
            }
        }
        return m;
    }

    static String truthLine(IntegrationTest.Run r) {
        return r.stdout.lines().filter(l -> l.startsWith("TRUTH ")).findFirst().orElse("(no TRUTH line)");
    }

    static double num(Map<String, String> truth, String key) throws IntegrationTest.Failure {
        String v = truth.get(key);
        if (v == null) {
            throw new IntegrationTest.Failure("TRUTH line without " + key + ": " + truth, List.of());
        }
        return Double.parseDouble(v);
    }

    static String sub(Map<String, String> truth, String a, String b) {
        try {
            return String.valueOf(Long.parseLong(truth.get(a)) - Long.parseLong(truth.get(b)));
        } catch (RuntimeException e) {
            return "?";
        }
    }

    static long weight(List<IntegrationTest.Stack> stacks, Predicate<IntegrationTest.Stack> keep) {
        return stacks.stream().filter(keep).mapToLong(s -> s.count).sum();
    }

    static String leaf(IntegrationTest.Stack s) {
        return s.frames.get(s.frames.size() - 1);
    }

    /** The leaf frames of the stacks containing method, with their share of its weight. */
    static String leafShares(IntegrationTest.Profile p, String method) {
        Map<String, Long> leaves = new HashMap<>();
        long all = 0;
        for (IntegrationTest.Stack s : p.stacks) {
            if (s.contains(method)) {
                leaves.merge(leaf(s), s.count, Long::sum);
                all += s.count;
            }
        }
        final long total = all;
        return leaves.isEmpty() ? "(none)" : leaves.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(3)
                .map(e -> String.format(Locale.ROOT, "%s %.2f%%", e.getKey(), 100.0 * e.getValue() / total))
                .collect(Collectors.joining(", "));
    }

    /** Stacks under the thread root [name tid=N] (the `threads` option). */
    static List<IntegrationTest.Stack> ofThread(IntegrationTest.Profile p, String thread) {
        return p.stacks.stream().filter(s -> {
            Matcher m = IntegrationTest.THREAD_ROOT.matcher(s.frames.get(0));
            return m.matches() && m.group(1).equals(thread);
        }).collect(Collectors.toList());
    }

    static Map<String, Long> weightPerThread(IntegrationTest.Profile p) {
        Map<String, Long> m = new HashMap<>();
        for (IntegrationTest.Stack s : p.stacks) {
            Matcher root = IntegrationTest.THREAD_ROOT.matcher(s.frames.get(0));
            if (root.matches()) {
                m.merge(root.group(1), s.count, Long::sum);
            }
        }
        return m;
    }

    /** Distinct stacks whose weight differs between a and b (present in one only included). */
    static long differingStacks(IntegrationTest.Profile a, IntegrationTest.Profile b) {
        Map<String, Long> m = new HashMap<>();
        a.stacks.forEach(s -> m.merge(String.join(";", s.frames), s.count, Long::sum));
        b.stacks.forEach(s -> m.merge(String.join(";", s.frames), -s.count, Long::sum));
        return m.values().stream().filter(v -> v != 0).count();
    }

    /** A collapsed file that may be empty (no event at all is a valid result); it must exist. */
    static IntegrationTest.Profile readAllowEmpty(Path file, IntegrationTest.Run r) throws IntegrationTest.Failure {
        try {
            if (Files.isRegularFile(file) && Files.readString(file).isBlank()) {
                return new IntegrationTest.Profile(new ArrayList<>());
            }
        } catch (IOException e) {
            throw new IntegrationTest.Failure("cannot read " + file + ": " + e, List.of());
        }
        return IntegrationTest.Profile.read(file, r);
    }
}
