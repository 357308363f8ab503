import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A workload that keeps the JVM's own threads busy: it runs much varied JDK code (streams, regular expressions,
 * formatting, collections), so the JIT compilers compile for most of the run, and allocates heavily, so the
 * collector runs too. Prints {@code JitNames done} at the end. Usage: {@code java JitNames [seconds=4]}.
 */
public final class JitNames {
    static volatile long sink;

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Pattern p = Pattern.compile("([a-z]+)-(\\d+)");
        int round = 0;
        while (System.nanoTime() < end) {
            round++;
            List<String> words = IntStream.range(0, 2000).mapToObj(i -> "w" + (char) ('a' + i % 26) + "-" + i)
                    .collect(Collectors.toList());
            Map<String, Integer> counts = new HashMap<>();
            for (String w : words) {
                Matcher m = p.matcher(w);
                if (m.find()) {
                    counts.merge(m.group(1), Integer.parseInt(m.group(2)), Integer::sum);
                }
            }
            String text = counts.entrySet().stream().sorted(Map.Entry.comparingByKey())
                    .map(e -> String.format(Locale.ROOT, "%s=%08x/%.3f", e.getKey(), e.getValue(), e.getValue() / 7.0))
                    .collect(Collectors.joining(","));
            List<long[]> garbage = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                garbage.add(new long[256 + round % 64]);
            }
            sink += text.hashCode() + garbage.size() + text.toUpperCase(Locale.ROOT).chars().filter(c -> c == 'A').count();
        }
        System.out.println("JitNames done rounds=" + round + " sink=" + sink);
    }
}
