import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The JDK's view of a recording, for {@link EventChecks}: running the {@code jfr} and {@code jsampler} tools,
 * counting event types in {@code jfr summary} output, cutting a recording into its chunks, and checking the fields
 * of the alloc and lock events in {@code jfr print --json} output (with a small JSON reader of its own).
 */
final class JfrFiles {
    private JfrFiles() {
    }

    // ---------------------------------------------------------------- tools

    /** Output of a tool run (stdout and stderr together) and its exit status (-1: timed out). */
    static final class Tool {
        final String out;
        final int exit;

        Tool(String out, int exit) {
            this.out = out;
            this.exit = exit;
        }
    }

    /** The thread states of the events of one type, counted (from {@code jfr print}); empty if the tool fails. */
    static Map<String, Long> states(Path jfrTool, Path recording, String type) throws IOException,
            InterruptedException {
        Tool print = tool(List.of(jfrTool.toString(), "print", "--stack-depth", "1", "--events", type,
                recording.toString()));
        Map<String, Long> n = new TreeMap<>();
        Matcher m = Pattern.compile("(?m)^\\s*state = \"([A-Z_]+)\"").matcher(print.exit == 0 ? print.out : "");
        while (m.find()) {
            n.merge(m.group(1), 1L, Long::sum);
        }
        return n;
    }

    /** The count of an event type in {@code jfr summary} output (0 if not listed). */
    static long count(String summary, String type) {
        Matcher m = Pattern.compile("(?m)^\\s*" + Pattern.quote(type) + "\\s+(\\d+)").matcher(summary);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    static Tool tool(List<String> cmd) throws IOException, InterruptedException {
        Path log = Files.createTempFile("eventchecks", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean done = p.waitFor(60, TimeUnit.SECONDS);
            if (!done) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            return new Tool(Files.readString(log, StandardCharsets.UTF_8), done ? p.exitValue() : -1);
        } finally {
            Files.deleteIfExists(log);
        }
    }

    // ---------------------------------------------------------------- JFR chunks

    /** One chunk of a recording, from its header: where it is in the file and the time it covers. */
    static final class Chunk {
        final int index;
        final long offset;
        final long size;
        final long startNanos;
        final long durationNanos;

        Chunk(int index, long offset, long size, long startNanos, long durationNanos) {
            this.index = index;
            this.offset = offset;
            this.size = size;
            this.startNanos = startNanos;
            this.durationNanos = durationNanos;
        }

        /** Milliseconds of [startMs, endMs] this chunk covers. */
        long overlapMs(long startMs, long endMs) {
            long from = Math.max(startMs, startNanos / 1_000_000);
            long to = Math.min(endMs, (startNanos + durationNanos) / 1_000_000);
            return Math.max(0, to - from);
        }

        void writeTo(Path file, Path out) throws IOException {
            byte[] all = Files.readAllBytes(file);
            Files.write(out, java.util.Arrays.copyOfRange(all, (int) offset, (int) (offset + size)));
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "#%d @%d +%d ms", index, startNanos / 1_000_000,
                    durationNanos / 1_000_000);
        }
    }

    /** The chunks of a JFR file: headers of 'FLR\0', version, chunk size, ..., start ns (epoch), duration ns. */
    static List<Chunk> chunks(Path jfr) throws IOException, IntegrationTest.Failure {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(jfr));
        List<Chunk> chunks = new ArrayList<>();
        long off = 0;
        while (off < b.limit()) {
            if (off + 68 > b.limit() || b.getInt((int) off) != 0x464C5200) {
                throw new IntegrationTest.Failure("no JFR chunk header at offset " + off + " of " + jfr + " ("
                        + b.limit() + " bytes)", List.of());
            }
            long size = b.getLong((int) off + 8);
            if (size < 68 || off + size > b.limit()) {
                throw new IntegrationTest.Failure("chunk " + chunks.size() + " of " + jfr + " has size " + size
                        + " at offset " + off + " (file " + b.limit() + " bytes)", List.of());
            }
            chunks.add(new Chunk(chunks.size(), off, size, b.getLong((int) off + 32), b.getLong((int) off + 40)));
            off += size;
        }
        return chunks;
    }

    // ---------------------------------------------------------------- jfr print --json

    /** The field checks on {@code jfr print --json} of the alloc and lock events (see EventChecks.multiEventJfr). */
    static void checkJfrFields(String json, long bigSize, long smallSize, List<String> problems,
                               List<String> details) {
        Object doc;
        try {
            doc = Json.parse(json);
        } catch (IllegalArgumentException e) {
            problems.add("cannot parse jfr print --json: " + e.getMessage());
            return;
        }
        List<Object> events = Json.list(Json.path(doc, "recording", "events"));
        Map<String, Map<String, Long>> tally = new TreeMap<>(); // "type site" -> detail -> count
        long shortLock = 0;
        long minLockNs = Long.MAX_VALUE;
        for (Object e : events) {
            String type = Json.str(Json.path(e, "type"));
            Object values = Json.path(e, "values");
            List<String> frames = new ArrayList<>();
            for (Object f : Json.list(Json.path(values, "stackTrace", "frames"))) {
                String cls = Json.str(Json.path(f, "method", "type", "name"));
                frames.add((cls == null ? "" : cls.replace('/', '.') + ".") + Json.str(Json.path(f, "method", "name")));
            }
            String site = frames.stream().filter(f -> f.startsWith("AllocSplit.alloc") || f.startsWith("LockSplit."))
                    .filter(f -> !f.startsWith("LockSplit.lambda") && !f.startsWith("LockSplit.run"))
                    .findFirst().orElse("other");
            String what;
            if ("jdk.ObjectAllocationInNewTLAB".equals(type)) {
                what = javaName(Json.str(Json.path(values, "objectClass", "name"))) + " "
                        + Json.path(values, "allocationSize");
            } else {
                String field = "jdk.JavaMonitorEnter".equals(type) ? "monitorClass" : "parkedClass";
                what = field + "=" + javaName(Json.str(Json.path(values, field, "name")));
                Object d = Json.path(values, "duration");
                if (d instanceof String) {
                    long ns = Duration.parse((String) d).toNanos();
                    minLockNs = Math.min(minLockNs, ns);
                    if (ns < EventChecks.LOCK_THRESHOLD_NS) {
                        shortLock++;
                    }
                }
            }
            tally.computeIfAbsent(type + " " + site, k -> new TreeMap<>()).merge(String.valueOf(what), 1L, Long::sum);
        }
        tally.forEach((k, v) -> details.add("jfr print: " + k + ": " + top(v, 4)));
        details.add("jfr print: " + events.size() + " alloc and lock events; shortest lock event "
                + (minLockNs == Long.MAX_VALUE ? "-" : minLockNs + " ns"));
        expectMost(tally, "jdk.ObjectAllocationInNewTLAB AllocSplit.allocBig", "long[] " + bigSize, problems);
        expectMost(tally, "jdk.ObjectAllocationInNewTLAB AllocSplit.allocSmall", "AllocSplit$Small " + smallSize,
                problems);
        expectMost(tally, "jdk.JavaMonitorEnter LockSplit.syncSite", "monitorClass=java.lang.Object", problems);
        Map<String, Long> parks = tally.getOrDefault("jdk.ThreadPark LockSplit.reentrantSite", Map.of());
        if (parks.keySet().stream().noneMatch(k -> k.contains("ReentrantLock"))) {
            problems.add("no jdk.ThreadPark event through LockSplit.reentrantSite with a ReentrantLock parkedClass: "
                    + parks);
        }
        if (shortLock > 0) {
            problems.add(shortLock + " lock events shorter than the 10 us threshold (shortest " + minLockNs + " ns)");
        }
    }

    /** A class name as JFR holds it ("java/lang/Object", "[J", "[Ljava/lang/String;") in Java form. */
    static String javaName(String jvm) {
        if (jvm == null) {
            return "null";
        }
        int dims = 0;
        while (dims < jvm.length() && jvm.charAt(dims) == '[') {
            dims++;
        }
        String element = jvm.substring(dims);
        if (dims > 0) {
            int k = "JIBCSZFD".indexOf(element);
            element = element.length() == 1 && k >= 0
                    ? new String[] {"long", "int", "byte", "char", "short", "boolean", "float", "double"}[k]
                    : element.startsWith("L") && element.endsWith(";") ? element.substring(1, element.length() - 1)
                    : element;
        }
        return element.replace('/', '.') + "[]".repeat(dims);
    }

    /** At least 99% of the events of key (type and site) have detail want (class names in Java form). */
    static void expectMost(Map<String, Map<String, Long>> tally, String key, String want, List<String> problems) {
        Map<String, Long> m = tally.get(key);
        if (m == null) {
            problems.add("no " + key.replace(" ", " event through "));
            return;
        }
        long all = m.values().stream().mapToLong(Long::longValue).sum();
        long good = m.entrySet().stream().filter(e -> e.getKey().equals(want)).mapToLong(Map.Entry::getValue).sum();
        if (good < 0.99 * all) {
            problems.add(key + ": only " + good + " of " + all + " events have " + want + ": " + top(m, 4));
        }
    }

    static String top(Map<String, Long> m, int n) {
        return m.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(n)
                .map(e -> e.getKey() + " x" + e.getValue()).collect(Collectors.joining(", "))
                + (m.size() > n ? ", ..." : "");
    }

    // ---------------------------------------------------------------- a small JSON reader for jfr print --json

    /** Objects as LinkedHashMap, arrays as ArrayList, numbers as Long or Double, strings, booleans, null. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            Json j = new Json(text);
            j.ws();
            Object v = j.value();
            j.ws();
            if (j.i != j.s.length()) {
                throw j.error("trailing text");
            }
            return v;
        }

        /** The value at a path of object keys, or null where the path leaves the document. */
        static Object path(Object v, String... keys) {
            for (String k : keys) {
                if (!(v instanceof Map)) {
                    return null;
                }
                v = ((Map<?, ?>) v).get(k);
            }
            return v;
        }

        @SuppressWarnings("unchecked")
        static List<Object> list(Object v) {
            return v instanceof List ? (List<Object>) v : List.of();
        }

        static String str(Object v) {
            return v instanceof String ? (String) v : null;
        }

        private IllegalArgumentException error(String why) {
            return new IllegalArgumentException(why + " at offset " + i);
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private Object value() {
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{': {
                    i++;
                    Map<String, Object> m = new LinkedHashMap<>();
                    ws();
                    if (s.charAt(i) == '}') {
                        i++;
                        return m;
                    }
                    while (true) {
                        ws();
                        String k = string();
                        ws();
                        expect(':');
                        ws();
                        m.put(k, value());
                        ws();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect('}');
                            return m;
                        }
                    }
                }
                case '[': {
                    i++;
                    List<Object> l = new ArrayList<>();
                    ws();
                    if (s.charAt(i) == ']') {
                        i++;
                        return l;
                    }
                    while (true) {
                        ws();
                        l.add(value());
                        ws();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect(']');
                            return l;
                        }
                    }
                }
                case '"':
                    return string();
                default:
                    if (s.startsWith("true", i)) {
                        i += 4;
                        return Boolean.TRUE;
                    }
                    if (s.startsWith("false", i)) {
                        i += 5;
                        return Boolean.FALSE;
                    }
                    if (s.startsWith("null", i)) {
                        i += 4;
                        return null;
                    }
                    int start = i;
                    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                        i++;
                    }
                    String num = s.substring(start, i);
                    if (num.isEmpty()) {
                        throw error("unexpected '" + c + "'");
                    }
                    try {
                        return num.matches("-?\\d+") ? (Object) Long.parseLong(num) : (Object) Double.parseDouble(num);
                    } catch (NumberFormatException e) {
                        throw error("bad number " + num);
                    }
            }
        }

        private void expect(char c) {
            if (i >= s.length() || s.charAt(i) != c) {
                throw error("expected '" + c + "'");
            }
            i++;
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                if (i >= s.length()) {
                    throw error("unterminated string");
                }
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u':
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                        break;
                    default: b.append(e); // \" \\ \/
                }
            }
        }
    }
}
