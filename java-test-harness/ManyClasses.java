import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * A JVM with many loaded classes and a latency probe, to measure what attaching the profiler costs the application.
 * Loads (without initialising) classes of the JDK's own modules until {@code classes} are loaded, then runs a probe
 * thread that sleeps 1 ms at a time and records how late it wakes, beside a thread doing plain arithmetic. Every
 * {@code report} ms it prints {@code PROBE t_ms=T max_late_ms=M} (the worst lateness in that window), and at the end
 * {@code MANY done loaded=N}. Usage: {@code java ManyClasses [classes=20000] [seconds=20] [report=250]}.
 */
public final class ManyClasses {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int want = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 20;
        long reportMs = args.length > 2 ? Long.parseLong(args[2]) : 250;
        int loaded = loadClasses(want);
        System.out.println("MANY loaded=" + loaded);
        System.out.flush();
        Thread work = new Thread(() -> {
            long x = 1;
            while (!Thread.currentThread().isInterrupted()) {
                x = x * 6364136223846793005L + 1442695040888963407L;
                sink = x;
            }
        }, "many-work");
        work.setDaemon(true);
        work.start();
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        long windowEnd = start + reportMs * 1_000_000L, worst = 0;
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            Thread.sleep(1);
            long late = System.nanoTime() - t0 - 1_000_000L;
            worst = Math.max(worst, late);
            if (System.nanoTime() >= windowEnd) {
                System.out.println(String.format(Locale.ROOT, "PROBE t_ms=%d max_late_ms=%.2f",
                        (System.nanoTime() - start) / 1_000_000, worst / 1e6));
                System.out.flush();
                worst = 0;
                windowEnd += reportMs * 1_000_000L;
            }
        }
        System.out.println("MANY done loaded=" + loaded);
    }

    /** Loads classes of the runtime image's modules until want are loaded; returns how many were. */
    static int loadClasses(int want) throws Exception {
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        int n = 0;
        try (Stream<Path> files = Files.walk(jrt.getPath("/modules"))) {
            Iterator<Path> it = files.iterator();
            while (it.hasNext() && n < want) {
                Path p = it.next();
                String s = p.toString();
                if (!s.endsWith(".class") || s.endsWith("module-info.class") || s.contains("-")) {
                    continue;
                }
                String rest = s.substring("/modules/".length());
                String name = rest.substring(rest.indexOf('/') + 1, rest.length() - 6).replace('/', '.');
                try {
                    Class.forName(name, false, ClassLoader.getSystemClassLoader());
                    n++;
                } catch (Throwable e) {
                    // not exported to us, or needs what is absent: skip it
                }
            }
        }
        return n;
    }
}
