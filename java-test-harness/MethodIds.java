import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.util.Locale;
import java.util.function.LongUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import jsampler.JSampler;

/**
 * The JVM's native memory kept for classes that came and went, with the agent loaded but idle, while a session
 * runs, and idle again: in each phase N throw-away loaders define their own {@code ChurnVictim} (UnloadChurn's) and
 * run it once, then are dropped and unloaded ({@code System.gc()}); the phase's figure is how many more C-heap blocks
 * the JVM holds in its Internal and Class categories afterwards (Native Memory Tracking, read through the
 * DiagnosticCommand MBean: run with {@code -XX:NativeMemoryTracking=summary}). What a class leaves behind there is its
 * methods' jmethodIDs, which HotSpot keeps for good once made. Usage: {@code java MethodIds N PROFILE}; prints
 * {@code METHODIDS idle=A running=B after=C unloaded=U}.
 */
public final class MethodIds {
    static final Pattern MALLOCS = Pattern.compile("-\\s+(Internal|Class) \\(reserved[^\\n]*\\n(?:[^\\n]*\\n)*?"
            + "\\s*\\(malloc=\\d+KB(?: [a-z]+=\\w+)? #(\\d+)");
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        byte[] bytes;
        try (InputStream in = MethodIds.class.getResourceAsStream("/ChurnVictim.class")) {
            if (in == null) {
                throw new IOException("ChurnVictim.class is not on the class path");
            }
            bytes = in.readAllBytes();
        }
        JSampler p = JSampler.getInstance();
        churn(bytes, 200); // the paths of class loading and unloading are warm before the first figure
        long idle = phase(bytes, n);
        String started = p.start("start,event=cpu,interval=10ms,file=" + args[1]);
        if (!started.contains("started")) {
            throw new IllegalStateException("the session did not start: " + started);
        }
        long running = phase(bytes, n);
        p.stop();
        long after = phase(bytes, n);
        System.out.printf(Locale.ROOT, "METHODIDS idle=%d running=%d after=%d unloaded=%d%n", idle, running, after,
                ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount());
    }

    /** Blocks held in Internal and Class after n classes came and went. */
    static long phase(byte[] bytes, int n) throws Exception {
        long before = mallocs();
        churn(bytes, n);
        return mallocs() - before;
    }

    static void churn(byte[] bytes, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            Class<?> c = new ChildFirstLoader(bytes).loadClass("ChurnVictim");
            Constructor<?> make = c.getDeclaredConstructor();
            make.setAccessible(true);
            sink += ((LongUnaryOperator) make.newInstance()).applyAsLong(i);
        }
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
    }

    /** The count of malloc blocks in NMT's Internal and Class categories. */
    static long mallocs() throws Exception {
        String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
        Matcher m = MALLOCS.matcher(text);
        long sum = 0;
        int found = 0;
        while (m.find()) {
            sum += Long.parseLong(m.group(2));
            found++;
        }
        if (found != 2) {
            throw new IllegalStateException("Native Memory Tracking's Internal and Class malloc counts not found "
                    + "(run with -XX:NativeMemoryTracking=summary): " + text);
        }
        return sum;
    }
}
