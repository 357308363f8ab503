import java.io.FileInputStream;
import java.io.IOException;

/**
 * A class initializer that runs long: main loads {@code ClassInit$Slow} through Class.forName, and its static
 * initializer reads /dev/zero for the given time, so the VM's own frames (InstanceKlass::initialize, the call stub)
 * lie between main's Java frames and the initializer's.
 *
 * <p>Usage: {@code java ClassInit [seconds=3]}. Prints {@code DONE bytes}.
 */
public final class ClassInit {
    static double seconds = 3;

    static final class Slow {
        static final long BYTES;

        static {
            long n = 0, end = System.nanoTime() + (long) (seconds * 1e9);
            byte[] b = new byte[4096];
            try (FileInputStream in = new FileInputStream("/dev/zero")) {
                while (System.nanoTime() < end) n += in.read(b);
            } catch (IOException e) {
                throw new ExceptionInInitializerError(e);
            }
            BYTES = n;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0) seconds = Double.parseDouble(args[0]);
        Class<?> c = Class.forName("ClassInit$Slow");
        System.out.println("DONE " + c.getDeclaredField("BYTES").getLong(null));
    }
}
