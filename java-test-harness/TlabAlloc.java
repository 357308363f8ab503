/**
 * A workload for the tlab check: for {@code seconds} (default 3) it allocates, in {@link #big}, a 4 MB byte array
 * every 50th round (larger than any TLAB: always allocated outside one) and, in {@link #small}, short strings the rest
 * of the time (allocated in TLABs). It prints {@code TLAB_TRUTH <big arrays> <their bytes, headers included>} at the
 * end, the count a profile that takes every allocation outside a TLAB must show.
 */
public final class TlabAlloc {
    static final int BIG = 4_000_000;
    static volatile Object sink;

    public static void main(String[] args) {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 3;
        long end = System.nanoTime() + seconds * 1_000_000_000L, bigs = 0;
        for (int i = 0; System.nanoTime() < end; i++) {
            if (i % 50 == 0) {
                big();
                bigs++;
            } else {
                small(i);
            }
        }
        long header = 16; /* a byte[]'s header with compressed class pointers (the default below 32 GB heaps) */
        System.out.println("TLAB_TRUTH " + bigs + " " + bigs * (BIG + header));
    }

    static void big() {
        sink = new byte[BIG];
    }

    static void small(int i) {
        for (int k = 0; k < 100; k++) {
            sink = Integer.toString(i + k);
        }
    }
}
