import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.nio.file.Path;
import java.util.function.LongUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import jsampler.JSampler;

/**
 * Where the process's malloc heap goes over many sessions (bench/heap_cycles.sh): two threads compute and allocate,
 * optionally beside a thread that loads and drops classes through throw-away loaders ({@code class}) and one that
 * starts short threads with unique names ({@code thread}); the Java API runs CYCLES start/dump/stop cycles with the
 * given start options ({@code none}: no session, the same churn). Every 50 cycles it prints the heap in use
 * ({@code status}'s heap_used_kib), what Native Memory Tracking counts of it, the difference (malloc'ed outside the
 * JVM's tracking: the agent, the C library, other native code), the method names the agent has cached, the
 * resident set and the classes unloaded so far.
 *
 * <p>Arguments: OPTIONS|none CYCLES DIR [class,thread]. %B in OPTIONS is the cycle's output prefix in DIR.
 */
public final class HeapCycles {
    static volatile long sink;
    static final Pattern HEAP = Pattern.compile("heap_used_kib=(\\d+) heap_free_kib=(\\d+)");
    static final Pattern NAMES = Pattern.compile("names_cached=(\\d+)");
    static final Pattern NMT_MALLOC = Pattern.compile("malloc: (\\d+)KB");

    public static void main(String[] a) throws Exception {
        String opts = a[0];
        int cycles = Integer.parseInt(a[1]);
        Path dir = Path.of(a[2]);
        String churn = a.length > 3 ? a[3] : "";
        for (int t = 0; t < 2; t++) {
            daemon(() -> {
                long x = 0;
                while (true) {
                    byte[] b = new byte[64 + (int) (x & 1023)];
                    x += b.length;
                    for (int i = 0; i < 2000; i++) {
                        x = x * 31 + i;
                    }
                    sink = x;
                }
            });
        }
        if (churn.contains("class")) {
            byte[] bytes = HeapCycles.class.getResourceAsStream("/ChurnVictim.class").readAllBytes();
            daemon(() -> {
                for (long i = 0;; i++) {
                    Class<?> c = new ChildFirstLoader(bytes).loadClass("ChurnVictim");
                    Constructor<?> make = c.getDeclaredConstructor();
                    make.setAccessible(true);
                    sink += ((LongUnaryOperator) make.newInstance()).applyAsLong(i);
                    if (i % 500 == 0) {
                        System.gc();
                    }
                }
            });
        }
        if (churn.contains("thread")) {
            daemon(() -> {
                while (true) {
                    Thread t = new Thread(() -> sink += System.nanoTime(), "short-" + System.nanoTime());
                    t.start();
                    t.join();
                }
            });
        }
        JSampler p = JSampler.getInstance();
        for (int n = 0; n < cycles; n++) {
            String base = dir.resolve("c" + (n % 4)).toString();
            if (!opts.equals("none")) {
                p.execute("start," + opts.replace("%B", base));
                Thread.sleep(150);
                p.execute("dump,file=" + base + "-dump.collapsed");
                Thread.sleep(30);
                p.execute("stop");
            } else {
                Thread.sleep(180);
            }
            if (n % 50 == 0 || n == cycles - 1) {
                report(n, p.status());
            }
        }
    }

    interface Body {
        void run() throws Exception;
    }

    static void daemon(Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        t.setDaemon(true);
        t.start();
    }

    static void report(int n, String status) throws Exception {
        Matcher heap = HEAP.matcher(status);
        Matcher names = NAMES.matcher(status);
        if (!heap.find() || !names.find()) {
            throw new IllegalStateException("status without heap figures: " + status);
        }
        String nmt = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
        Matcher m = NMT_MALLOC.matcher(nmt);
        long tracked = m.find() ? Long.parseLong(m.group(1)) : -1;
        long used = Long.parseLong(heap.group(1));
        System.out.println("CYCLE " + n + " heap_used_kib=" + used + " nmt_malloc_kib=" + tracked + " untracked_kib="
                + (tracked < 0 ? -1 : used - tracked) + " heap_free_kib=" + heap.group(2) + " names_cached="
                + names.group(1) + " rss_kib=" + rssKib() + " classes_unloaded="
                + ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount());
    }

    /** The process's resident set (VmRSS), KiB; -1 if /proc cannot say. */
    static long rssKib() {
        try {
            for (String l : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        } catch (java.io.IOException e) {
            return -1;
        }
        return -1;
    }
}
