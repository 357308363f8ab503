/**
 * A thread that recurses until StackOverflowError and back, over and over: every sample of it walks a stack of
 * thousands of frames. Does a fixed amount of work ({@code rounds}, default 300) beside a second thread doing plain
 * arithmetic, then prints {@code DEEP_DONE rounds=N ms=T}. Used to check that sampling at a short interval cannot
 * livelock a thread in the signal handler, and that SIGTERM mid-run still leaves a readable recording.
 */
public final class DeepRecursion {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        long t0 = System.nanoTime();
        Thread side = new Thread(() -> {
            long x = 1;
            while (!Thread.currentThread().isInterrupted()) {
                for (int i = 0; i < 1_000_000; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                }
                sink = x;
            }
        }, "side-worker");
        side.setDaemon(true);
        side.start();
        Thread deep = new Thread(() -> {
            for (int r = 0; r < rounds; r++) {
                try {
                    recurse(0);
                } catch (StackOverflowError e) {
                    sink += r;
                }
            }
        }, "deep-recursion");
        deep.start();
        deep.join();
        side.interrupt();
        System.out.println("DEEP_DONE rounds=" + rounds + " ms=" + (System.nanoTime() - t0) / 1_000_000);
    }

    static long recurse(long depth) {
        return recurse(depth + 1) + 1;
    }
}
