import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;

/**
 * {@code threads} threads that wait on a latch and never run, for the wall-clock cost benchmark (make wall-idle):
 * after a 2 s settle the main thread sleeps {@code seconds} and prints the process's CPU time over that window as
 * a share of one core.
 *
 * <p>Usage: {@code java IdleThreads [threads=2000] [seconds=10]}. Output: {@code CPU 0.45% of one core over 10.0 s}.
 */
public final class IdleThreads {
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 10;
        CountDownLatch latch = new CountDownLatch(1);
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                try {
                    latch.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "idle-" + i);
            t.setDaemon(true);
            t.start();
        }
        Thread.sleep(2000);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long c0 = os.getProcessCpuTime(), t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000));
        long c1 = os.getProcessCpuTime(), t1 = System.nanoTime();
        System.out.printf(java.util.Locale.ROOT, "CPU %.2f%% of one core over %.1f s%n", 100.0 * (c1 - c0) / (t1 - t0),
                (t1 - t0) / 1e9);
        latch.countDown();
    }
}
