/**
 * A class initializer that runs long: main loads {@code ClassInit$Slow} through Class.forName, and its static
 * initializer computes in Java for the given time, so the VM's own frames (InstanceKlass::initialize, the call stub)
 * lie between main's Java frames and the initializer's. It computes rather than reads a file: a thread in native code
 * may be walked by a GC at any moment, so {@code cstack=vmx} does not walk the Java frames below a VM call there.
 *
 * <p>Usage: {@code java ClassInit [seconds=3]}. Prints {@code DONE n}, the rounds computed.
 */
public final class ClassInit {
    static double seconds = 3;

    static final class Slow {
        static final long ROUNDS;

        static {
            long n = 0, x = 1, end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end) {
                for (int i = 0; i < 10_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
                n++;
            }
            ROUNDS = n + (x == 42 ? 1 : 0);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0) seconds = Double.parseDouble(args[0]);
        Class<?> c = Class.forName("ClassInit$Slow");
        System.out.println("DONE " + c.getDeclaredField("ROUNDS").getLong(null));
    }
}
