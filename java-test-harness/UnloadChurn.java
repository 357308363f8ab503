import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.util.Locale;
import java.util.function.LongUnaryOperator;

/**
 * Class unloading under the profiler: again and again, a throw-away class loader defines its own copy of
 * {@code ChurnVictim} (child-first, from the bytes on the class path), runs its hot method (which calls a lambda,
 * itself a hidden class of that loader) for about 10 ms, and is dropped; {@code System.gc()} every 200 ms unloads
 * the dropped classes. Usage: {@code java UnloadChurn [seconds=3]}; prints
 * {@code UnloadChurn done loaders=N unloaded=M} (M = classes unloaded, from the class-loading MXBean).
 */
public final class UnloadChurn {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3.0;
        byte[] bytes;
        try (InputStream in = UnloadChurn.class.getResourceAsStream("/ChurnVictim.class")) {
            if (in == null) {
                throw new IOException("ChurnVictim.class is not on the class path");
            }
            bytes = in.readAllBytes();
        }
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long nextGc = start + 200_000_000L;
        int loaders = 0;
        while (System.nanoTime() < end) {
            Class<?> c = new ChildFirstLoader(bytes).loadClass("ChurnVictim");
            Constructor<?> make = c.getDeclaredConstructor(); // package access, but another runtime package
            make.setAccessible(true);
            LongUnaryOperator victim = (LongUnaryOperator) make.newInstance();
            long stop = System.nanoTime() + 10_000_000L;
            while (System.nanoTime() < stop) {
                sink += victim.applyAsLong(sink);
            }
            loaders++;
            if (System.nanoTime() >= nextGc) {
                System.gc();
                nextGc = System.nanoTime() + 200_000_000L;
            }
        }
        System.gc();
        long unloaded = ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount();
        System.out.printf(Locale.ROOT, "UnloadChurn done loaders=%d unloaded=%d%n", loaders, unloaded);
    }
}

/** Defines ChurnVictim itself from the given bytes; everything else comes from the parent. */
final class ChildFirstLoader extends ClassLoader {
    private final byte[] bytes;

    ChildFirstLoader(byte[] bytes) {
        super(UnloadChurn.class.getClassLoader());
        this.bytes = bytes;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.equals("ChurnVictim")) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            return c != null ? c : defineClass(name, bytes, 0, bytes.length);
        }
    }
}

/** The class each throw-away loader defines anew: a hot method and a lambda. */
final class ChurnVictim implements LongUnaryOperator {
    @Override
    public long applyAsLong(long seed) {
        return hotLoop(seed);
    }

    static long hotLoop(long seed) {
        LongUnaryOperator step = x -> x * 6364136223846793005L + 1442695040888963407L;
        long x = seed;
        for (int i = 0; i < 20_000; i++) {
            x = step.applyAsLong(x) ^ (x >>> 7);
        }
        return x;
    }
}
