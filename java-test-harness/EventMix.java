import java.util.Locale;

/**
 * A workload for every event at once: AllocSplit's split mode on one thread ({@code allocsplit-worker}, paced to
 * {@code mbPerSecond}: CPU and allocation) and LockSplit's contended mode beside it (synchronized waits and
 * ReentrantLock parks), for the same {@code seconds}.
 *
 * <p>Usage: {@code java EventMix [seconds=6] [mbPerSecond=128]}. Prints the two workloads' truths
 * ({@code ALLOC ...}, {@code LOCK ...}, as AllocSplit and LockSplit print after {@code TRUTH}) and
 * <pre>TRUTH start_ms=EPOCH_MS end_ms=EPOCH_MS</pre>
 * the wall-clock window in which both ran (epoch milliseconds), to tell which JFR chunks lie inside it.
 */
public final class EventMix {
    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 6.0;
        double mbPerSecond = args.length > 1 ? Double.parseDouble(args[1]) : 128;
        AllocSplit.MX.setThreadAllocatedMemoryEnabled(true);
        String[] alloc = new String[1];
        long startMs = System.currentTimeMillis();
        Thread allocator = new Thread(() -> alloc[0] = AllocSplit.runSplit(seconds, mbPerSecond),
                "allocsplit-worker");
        allocator.start();
        String lock = LockSplit.runContended(seconds, 10_000);
        allocator.join();
        long endMs = System.currentTimeMillis();
        System.out.println("ALLOC " + alloc[0]);
        System.out.println("LOCK " + lock);
        System.out.println(String.format(Locale.ROOT, "TRUTH start_ms=%d end_ms=%d", startMs, endMs));
    }
}
