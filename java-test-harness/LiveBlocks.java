import java.util.ArrayList;
import java.util.List;

/**
 * Allocates 200 blocks of 100 kB: the 100 from keep() stay reachable to the end, the 100 from drop() become garbage at
 * once; then a full GC. A live profile of it holds keep()'s 10 MB and none of drop()'s.
 *
 * <p>Usage: {@code java LiveBlocks}; prints {@code LIVE_DONE} at the end.
 */
public final class LiveBlocks {
    static final int BLOCK = 100_000;
    static volatile byte[] last;
    static final List<byte[]> KEPT = new ArrayList<>(); /* reachable until the VM ends */

    static byte[] keep() {
        return new byte[BLOCK];
    }

    static byte[] drop() {
        return new byte[BLOCK];
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 100; i++) {
            KEPT.add(keep());
            last = drop();
        }
        last = null;
        System.gc();
        Thread.sleep(200);
        System.out.println("LIVE_DONE " + KEPT.size());
    }
}
