import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongUnaryOperator;

/**
 * Class churn as fast as one thread makes it, for the resident set of a JVM whose profiler makes a jmethodID for
 * every method of every class loaded while a session runs (docs/BENCHMARKS.md, "Stress"): a throw-away loader
 * (UnloadChurn's {@code ChildFirstLoader}, java-test-harness/UnloadChurn.java) defines its own copy of
 * {@code ChurnVictim}, one call of it runs, the loader is dropped; {@code System.gc()} every 2,000 loaders unloads
 * them. Every 15 s, and at the end, it prints the resident set (VmRSS) and the classes unloaded so far. Usage: {@code java FastChurn SECONDS}; run it with a fixed, touched
 * heap ({@code -Xms256m -Xmx256m -XX:+AlwaysPreTouch}) so that the resident set moves only with native memory.
 */
public final class FastChurn {
    static volatile long sink;

    public static void main(String[] a) throws Exception {
        double seconds = Double.parseDouble(a[0]);
        byte[] bytes;
        try (InputStream in = FastChurn.class.getResourceAsStream("/ChurnVictim.class")) {
            if (in == null) {
                throw new IOException("ChurnVictim.class is not on the class path");
            }
            bytes = in.readAllBytes();
        }
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long nextPrint = start;
        long n = 0;
        while (System.nanoTime() < end) {
            Class<?> c = new ChildFirstLoader(bytes).loadClass("ChurnVictim");
            Constructor<?> make = c.getDeclaredConstructor();
            make.setAccessible(true);
            sink += ((LongUnaryOperator) make.newInstance()).applyAsLong(sink);
            if (++n % 2000 == 0) {
                System.gc();
            }
            if (System.nanoTime() >= nextPrint) {
                System.out.println("T " + (System.nanoTime() - start) / 1_000_000_000L + " " + figures());
                nextPrint += 15_000_000_000L;
            }
        }
        System.gc();
        Thread.sleep(2000);
        System.out.println("END " + figures());
    }

    static String figures() throws IOException {
        long rss = -1;
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("VmRSS:")) {
                rss = Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        return "rss_kib=" + rss + " unloaded=" + ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount();
    }
}

