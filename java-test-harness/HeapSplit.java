import java.util.ArrayList;
import java.util.List;

/**
 * A heap whose live part is known: every 100 ms keepBig() adds 300 kB and keepSmall() 100 kB to lists that stay
 * reachable to the end (so of the live bytes allocated in any window, 75% are keepBig's), while drop() allocates
 * 100 kB that is garbage at once; a full GC every 2 s (a live profile counts objects as of the last GC).
 *
 * <p>Usage: {@code java HeapSplit SECONDS}; prints {@code HEAP_DONE kept-bytes} at the end.
 */
public final class HeapSplit {
    static final int BLOCK = 10_000;
    static final List<byte[]> BIG = new ArrayList<>();
    static final List<byte[]> SMALL = new ArrayList<>();
    static volatile byte[] last;

    static void keepBig() {
        for (int i = 0; i < 30; i++) BIG.add(new byte[BLOCK]);
    }

    static void keepSmall() {
        for (int i = 0; i < 10; i++) SMALL.add(new byte[BLOCK]);
    }

    static void drop() {
        for (int i = 0; i < 10; i++) last = new byte[BLOCK];
    }

    public static void main(String[] args) throws Exception {
        long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        long nextGc = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < end) {
            keepBig();
            keepSmall();
            drop();
            if (System.nanoTime() >= nextGc) {
                System.gc();
                nextGc += 2_000_000_000L;
            }
            Thread.sleep(100);
        }
        System.out.println("HEAP_DONE " + (long) (BIG.size() + SMALL.size()) * BLOCK);
    }
}
