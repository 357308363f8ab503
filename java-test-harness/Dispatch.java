/**
 * A megamorphic virtual call inside a small method that the JIT inlines: {@code average} sums
 * {@code Number.doubleValue()} over boxed numbers of four classes, so the call goes through a vtable stub, and
 * {@code spin} calls {@code average} in a loop. A profile of it shows {@code spin;average;vtable stub} when the
 * inlined caller is named right.
 *
 * <p>Usage: {@code java Dispatch [seconds=5]}. Prints {@code DONE sum}.
 */
public final class Dispatch {
    static double average(Number[] values) {
        double sum = 0;
        for (Number v : values) {
            sum += v.doubleValue();
        }
        return sum / values.length;
    }

    static double spin(Number[] values, long end) {
        double total = 0;
        while (System.nanoTime() < end) {
            total += average(values);
        }
        return total;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        Number[] values = new Number[4096];
        for (int i = 0; i < values.length; i++) {
            values[i] = switch (i % 4) {
                case 0 -> Integer.valueOf(i);
                case 1 -> Long.valueOf(i);
                case 2 -> Float.valueOf(i);
                default -> Double.valueOf(i);
            };
        }
        System.out.println("DONE " + spin(values, System.nanoTime() + (long) (seconds * 1e9)));
    }
}
