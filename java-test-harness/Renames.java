/**
 * Threads renamed after they started, for the thread-name checks: {@code first-name-self} burns CPU, renames itself
 * to {@code renamed-itself-after-start} and burns again; {@code first-name-other} burns while the main thread
 * renames it to {@code renamed-by-main-thread-after-start}; both end before the JVM exits. {@code first-name-live}
 * is renamed by the main thread to {@code renamed-and-running-when-the-jvm-exits} and still burns when the JVM
 * exits. Every name is longer than the 15 characters the kernel keeps. Prints {@code RENAMES_DONE} at the end.
 *
 * <p>Usage: {@code java Renames}.
 */
public final class Renames {
    static volatile long sink;

    static void burn(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long x = 1;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
    }

    public static void main(String[] args) throws InterruptedException {
        Thread self = new Thread(() -> {
            burn(600);
            Thread.currentThread().setName("renamed-itself-after-start");
            burn(600);
        }, "first-name-self");
        Thread other = new Thread(() -> burn(1200), "first-name-other");
        Thread live = new Thread(() -> burn(60_000), "first-name-live");
        live.setDaemon(true);
        self.start();
        other.start();
        live.start();
        Thread.sleep(600);
        other.setName("renamed-by-main-thread-after-start");
        live.setName("renamed-and-running-when-the-jvm-exits");
        self.join();
        other.join();
        Thread.sleep(300);
        System.out.println("RENAMES_DONE");
    }
}
