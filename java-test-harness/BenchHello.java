import java.time.Instant;

/**
 * Start-up and shut-down timing for the benchmarks (make bench): prints the wall-clock time (ns since the epoch)
 * at which main began and at which it ended, so a harness that notes when it started the JVM and when the process
 * ended can tell start-to-main and exit delay apart.
 *
 * <p>Usage: {@code java BenchHello [millis=0]} (busy work between the two stamps). Prints
 * {@code MAIN_START_NS n} and {@code MAIN_END_NS n}.
 */
public final class BenchHello {
    public static void main(String[] args) {
        long start = nowNanos();
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 0;
        long end = System.nanoTime() + millis * 1_000_000L;
        long x = 88172645463325252L;
        while (System.nanoTime() < end) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        System.out.println("MAIN_START_NS " + start);
        System.out.println("MAIN_END_NS " + nowNanos() + " " + (x & 1));
    }

    static long nowNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
