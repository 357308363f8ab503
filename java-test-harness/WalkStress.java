import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything that makes stacks hard to walk, at once: a thread recursing into StackOverflowError and back, a
 * deoptimisation storm (compiled code that assumed one {@code Shape} subclass meets a new subclass from a fresh
 * class loader, and rare branches that hit uncommon traps), classes unloaded as those loaders are dropped
 * ({@code System.gc()} every 500 ms), and waves of short-lived threads. Usage:
 * {@code java WalkStress [seconds=10]}; prints
 * {@code WalkStress done soe=N deopt_rounds=M loaders=L unloaded=U threads=T}.
 */
public final class WalkStress {
    static volatile long sink;
    static final AtomicLong soe = new AtomicLong();
    static final AtomicLong deoptRounds = new AtomicLong();
    static final AtomicLong loaders = new AtomicLong();
    static final AtomicLong threads = new AtomicLong();

    /** The class hierarchy whose compiled callers are invalidated by each newly loaded subclass. */
    public abstract static class Shape {
        public abstract long area(long x);
    }

    public static final class Square extends Shape {
        public long area(long x) {
            return x * x;
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10.0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        byte[] extra;
        try (InputStream in = WalkStress.class.getResourceAsStream("/WalkStressExtra.class")) {
            if (in == null) {
                throw new IOException("WalkStressExtra.class is not on the class path");
            }
            extra = in.readAllBytes();
        }
        List<Thread> workers = new ArrayList<>();
        workers.add(new Thread(() -> overflowLoop(end), "stress-soe"));
        workers.add(new Thread(() -> deoptLoop(end, extra), "stress-deopt"));
        workers.add(new Thread(() -> churnLoop(end), "stress-churn"));
        for (Thread t : workers) {
            t.setUncaughtExceptionHandler((th, e) -> {
                e.printStackTrace();
                Runtime.getRuntime().halt(1); // a dead worker would make the run show nothing
            });
            t.start();
        }
        long nextGc = System.nanoTime() + 500_000_000L;
        while (System.nanoTime() < end) {
            Thread.sleep(20);
            if (System.nanoTime() >= nextGc) {
                System.gc();
                nextGc += 500_000_000L;
            }
        }
        for (Thread t : workers) {
            t.join();
        }
        long unloaded = ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount();
        System.out.println("WalkStress done soe=" + soe.get() + " deopt_rounds=" + deoptRounds.get() + " loaders="
                + loaders.get() + " unloaded=" + unloaded + " threads=" + threads.get());
    }

    /** Recurses until StackOverflowError, again and again. */
    static void overflowLoop(long end) {
        while (System.nanoTime() < end) {
            try {
                recurse(1);
            } catch (StackOverflowError e) {
                soe.incrementAndGet();
            }
        }
    }

    static long recurse(long n) {
        sink += n;
        return recurse(n + 1) + 1;
    }

    /** Compiles callers against the Shape hierarchy, then loads a new subclass: their code is deoptimised. */
    static void deoptLoop(long end, byte[] extra) {
        Shape square = new Square();
        while (System.nanoTime() < end) {
            long s = 0;
            for (int i = 0; i < 200_000; i++) {
                s += measure(square, i);
                if ((i & 0xffff) == 0xffff && (s & 1) == 0) {
                    s += rareBranch(i); // an uncommon trap the first few times
                }
            }
            try {
                ClassLoader l = new OneClassLoader(extra);
                java.lang.reflect.Constructor<?> make = l.loadClass("WalkStressExtra").getDeclaredConstructor();
                make.setAccessible(true); // another runtime package: its loader differs
                Shape other = (Shape) make.newInstance();
                s += measure(other, 3);
                loaders.incrementAndGet();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
            sink += s;
            deoptRounds.incrementAndGet();
        }
    }

    static long measure(Shape shape, long x) {
        return shape.area(x) + x;
    }

    static long rareBranch(int i) {
        Object o = (i & 0x10000) == 0 ? (Object) Integer.valueOf(i) : (Object) Long.valueOf(i);
        return o instanceof Long ? (Long) o : (Integer) o;
    }

    /** Waves of eight threads that each burn about 2 ms and exit. */
    static void churnLoop(long end) {
        while (System.nanoTime() < end) {
            Thread[] wave = new Thread[8];
            for (int i = 0; i < wave.length; i++) {
                wave[i] = new Thread(() -> {
                    long x = 0;
                    long stop = System.nanoTime() + 2_000_000L;
                    while (System.nanoTime() < stop) {
                        x += x * 31 + 7;
                    }
                    sink += x;
                });
                wave[i].start();
                threads.incrementAndGet();
            }
            for (Thread t : wave) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /** Defines WalkStressExtra itself (child first); everything else comes from the parent. */
    static final class OneClassLoader extends ClassLoader {
        private final byte[] bytes;

        OneClassLoader(byte[] bytes) {
            super(WalkStress.class.getClassLoader());
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("WalkStressExtra")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                return c != null ? c : defineClass(name, bytes, 0, bytes.length);
            }
        }
    }
}

/** A Shape subclass defined anew by every loader of WalkStress.deoptLoop. */
class WalkStressExtra extends WalkStress.Shape {
    public WalkStressExtra() {
    }

    public long area(long x) {
        return 2 * x + 1;
    }
}
