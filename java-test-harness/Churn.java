import java.util.ArrayList;
import java.util.List;

/**
 * Thread churn under the profiler: starts short-lived threads in waves (each burns about 3 ms of CPU in
 * {@code Churn.shortTask} and exits) while one long-lived thread keeps working, so threads are armed and
 * disarmed constantly. Usage: {@code java Churn [seconds=2] [threadsPerWave=8]}; prints {@code Churn done N}.
 */
public final class Churn {
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
        int perWave = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread steady = new Thread(() -> {
            while (System.nanoTime() < end) {
                sink += shortTask(100_000);
            }
        }, "churn-steady");
        steady.start();
        long started = 0;
        while (System.nanoTime() < end) {
            List<Thread> wave = new ArrayList<>(perWave);
            for (int i = 0; i < perWave; i++) {
                Thread t = new Thread(() -> sink += shortTask(4_000_000), "churn-" + started + "-" + i);
                t.start();
                wave.add(t);
            }
            for (Thread t : wave) {
                t.join();
            }
            started += perWave;
        }
        steady.join();
        System.out.println("Churn done " + started);
    }

    static long shortTask(int n) {
        long x = Thread.currentThread().getId() | 1;
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }
}
