import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * What the JDK's own JFR parser ({@code jdk.jfr.consumer.RecordingFile}, the one {@code jfr print} uses) reads from
 * recordings, in one JVM for many files ({@code bench/stress.py} checks thousands). Reads paths from stdin, one a
 * line, and prints one line per file: {@code OK path cpu=N wall=N alloc=N lock=N types=type:count,...} or
 * {@code ERR path message}. The totals are those {@code jsampler convert --event} sums: cpu the
 * {@code jdk.ExecutionSample} events, wall the {@code samples} of {@code profiler.WallClockSample}, alloc the
 * {@code tlabSize} of {@code jdk.ObjectAllocationInNewTLAB} (its {@code allocationSize} where that is 0), lock the
 * nanoseconds of {@code jdk.JavaMonitorEnter} and {@code jdk.ThreadPark}.
 */
public final class JfrTally {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            if (line.isEmpty()) {
                continue;
            }
            System.out.println(tally(Paths.get(line)));
            System.out.flush();
        }
    }

    static String tally(Path p) {
        long cpu = 0;
        long wall = 0;
        long alloc = 0;
        long lock = 0;
        Map<String, Long> types = new TreeMap<>();
        try (RecordingFile f = new RecordingFile(p)) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String t = e.getEventType().getName();
                types.merge(t, 1L, Long::sum);
                switch (t) {
                    case "jdk.ExecutionSample":
                        cpu++;
                        break;
                    case "profiler.WallClockSample":
                        wall += Math.max(0, e.getInt("samples"));
                        break;
                    case "jdk.ObjectAllocationInNewTLAB": {
                        long s = e.getLong("tlabSize");
                        alloc += s > 0 ? s : Math.max(0, e.getLong("allocationSize"));
                        break;
                    }
                    case "jdk.JavaMonitorEnter":
                    case "jdk.ThreadPark": {
                        Duration d = e.getDuration();
                        lock += d.isNegative() ? 0 : d.toNanos();
                        break;
                    }
                    default:
                        break;
                }
            }
        } catch (IOException | RuntimeException e) {
            return "ERR " + p + " " + String.valueOf(e).replace('\n', ' ');
        }
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Long> e : types.entrySet()) {
            b.append(b.length() == 0 ? "" : ",").append(e.getKey()).append(':').append(e.getValue());
        }
        return "OK " + p + " cpu=" + cpu + " wall=" + wall + " alloc=" + alloc + " lock=" + lock + " types=" + b;
    }
}
