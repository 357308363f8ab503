import java.io.File;
import java.lang.ref.WeakReference;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Java API loaded by a class loader that is then dropped (a web application redeployed, a plugin unloaded): the
 * JDK unloads a native library with the last class of its loader, while the agent's JVMTI callbacks (class loads,
 * thread starts) stay registered for the JVM's life. The library must stay mapped: after the loader is collected,
 * threads start and classes load without a crash.
 *
 * <p>Usage: {@code java -cp classes ApiLoaderUnload JSAMPLER_JAR LIB OUT_DIR CLASSES} (no -agentpath; the throw-away
 * loader has its own JSampler, its parent the platform loader). Prints {@code UNLOAD_OK loader_collected=B mapped=B ...}.
 */
public final class ApiLoaderUnload {
    public static void main(String[] args) throws Exception {
        WeakReference<ClassLoader> loader = useAndDrop(args[0], args[1], Path.of(args[2]));
        long until = System.nanoTime() + 20_000_000_000L;
        while (loader.get() != null && System.nanoTime() < until) { // unreachable: collected, then its libraries
            System.gc();
            Thread.sleep(50);
        }
        boolean collected = loader.get() == null;
        for (int i = 0; i < 20; i++) { // the JDK's cleaner unloads the library after the loader is collected
            System.gc();
            Thread.sleep(50);
        }
        boolean mapped = Files.readString(Path.of("/proc/self/maps")).contains(new File(args[1]).getName());
        int threads = 0, classes = 0;
        for (int i = 0; i < 200; i++) { // ThreadStart, ThreadEnd
            Thread t = new Thread(() -> { }, "after-unload-" + i);
            t.start();
            t.join();
            threads++;
        }
        for (int i = 0; i < 50; i++) { // ClassLoad, ClassPrepare
            URLClassLoader l = new URLClassLoader(new URL[] {Path.of(args[3]).toUri().toURL()}, null);
            l.loadClass("ApiLoaderUnload$Victim");
            l.close();
            classes++;
        }
        System.out.println("UNLOAD_OK loader_collected=" + collected + " mapped=" + mapped + " threads=" + threads
                + " classes=" + classes);
    }

    /** Loads JSampler in a loader of its own, runs one session through it, and lets go of all of it. */
    private static WeakReference<ClassLoader> useAndDrop(String jar, String lib, Path out) throws Exception {
        URLClassLoader l = new URLClassLoader(new URL[] {new File(jar).toURI().toURL()},
                ClassLoader.getPlatformClassLoader());
        Class<?> api = l.loadClass("jsampler.JSampler");
        Object p = api.getMethod("getInstance", String.class).invoke(null, lib);
        Method execute = api.getMethod("execute", String.class);
        execute.invoke(p, "start,event=cpu,interval=1ms");
        long x = 0;
        for (long end = System.nanoTime() + 300_000_000L; System.nanoTime() < end; ) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        execute.invoke(p, "stop,file=" + out.resolve("p.collapsed"));
        System.out.println("SESSION_DONE " + (x & 1));
        l.close();
        return new WeakReference<>(l);
    }

    /** A class loaded by throw-away loaders after the library's loader is gone. */
    static final class Victim {
    }
}
