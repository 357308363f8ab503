/**
 * A tiny application for the start-up and output-error checks: does a little work (about {@code millis}, default
 * 300 ms) and prints one marker line, {@code HELLO_MAIN_RAN}, that shows main ran to the end.
 */
public final class Hello {
    public static void main(String[] args) {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 300;
        long end = System.nanoTime() + millis * 1_000_000L;
        long x = 88172645463325252L;
        while (System.nanoTime() < end) {
            x = spin(x);
        }
        System.out.println("HELLO_MAIN_RAN " + (x & 0xff));
    }

    static long spin(long x) {
        for (int i = 0; i < 100_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }
}
