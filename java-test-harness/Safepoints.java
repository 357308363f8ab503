import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;

/**
 * Safepoints that take long to reach: a worker clears 256 MiB of native memory with one Unsafe.setMemory call after
 * another (each call runs inside the VM, which a safepoint waits for, for tens of milliseconds), while the main thread
 * asks for a safepoint every 200 ms (a thread dump): each time-to-safepoint lasts until the worker's current call
 * ends.
 *
 * <p>Usage: {@code java Safepoints [seconds=3]}. Prints {@code DONE fills=N safepoints=M}.
 */
public final class Safepoints {
    static final long SIZE = 256L << 20;
    static volatile boolean stop;

    /** One pass of the worker over the memory at address. */
    static void clearMemory(sun.misc.Unsafe u, long address, byte v) {
        u.setMemory(address, SIZE, v);
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe u = (sun.misc.Unsafe) f.get(null);
        long address = u.allocateMemory(SIZE);
        long[] fills = new long[1];
        Thread worker = new Thread(() -> {
            byte v = 0;
            while (!stop) {
                clearMemory(u, address, v++);
                fills[0]++;
            }
        }, "safepoints-worker");
        worker.start();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        int safepoints = 0;
        while (System.nanoTime() < end) {
            ManagementFactory.getThreadMXBean().dumpAllThreads(false, false);
            safepoints++;
            Thread.sleep(200);
        }
        stop = true;
        worker.join();
        u.freeMemory(address);
        System.out.println("DONE fills=" + fills[0] + " safepoints=" + safepoints);
    }
}
