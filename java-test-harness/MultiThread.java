/**
 * Three named threads, each burning CPU in a method of its own: worker-alpha in alphaWork, worker-beta in
 * betaWork, worker-gamma in gammaWork. A per-thread profile must show each method under its own thread only.
 *
 * <p>Usage: {@code java MultiThread [seconds=3]}. Prints {@code MultiThread done ...} at the end.
 */
public final class MultiThread {
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3.0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] workers = {
            new Thread(() -> { while (System.nanoTime() < end) sink += alphaWork(200_000); }, "worker-alpha"),
            new Thread(() -> { while (System.nanoTime() < end) sink += betaWork(200_000); }, "worker-beta"),
            new Thread(() -> { while (System.nanoTime() < end) sink += gammaWork(200_000); }, "worker-gamma"),
        };
        for (Thread w : workers) {
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        System.out.println("MultiThread done " + Long.toHexString(sink));
    }

    static long alphaWork(int n) {
        long x = 0x2545F4914F6CDD1DL;
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            x += i;
        }
        return x;
    }

    static long betaWork(int n) {
        double d = 1.0;
        for (int i = 1; i <= n; i++) {
            d = d * 1.0000001 + 1.0 / i;
            if (d > 1e9) d -= 1e9;
        }
        return Double.doubleToLongBits(d);
    }

    static long gammaWork(int n) {
        long h = 1469598103934665603L;
        for (int i = 0; i < n; i++) {
            h ^= (i & 0xff);
            h *= 1099511628211L;
        }
        return h;
    }
}
