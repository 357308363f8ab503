package one.profiler;

import java.io.IOException;

/**
 * The natives of async-profiler's Java API class, as code built against its API jar calls them (same package,
 * class, names and signatures), over libjsampler.so. A test class: what jsampler exports for that API is checked
 * through it (AsprofApi, the asprof-api check).
 */
public final class AsyncProfiler {
    private AsyncProfiler() {
    }

    /** Loads the library at path (absolute) and returns a handle on its natives. */
    public static AsyncProfiler load(String path) {
        System.load(path);
        return new AsyncProfiler();
    }

    public void start(String event, long interval) {
        start0(event, interval, true);
    }

    public void resume(String event, long interval) {
        start0(event, interval, false);
    }

    public void stop() {
        stop0();
    }

    public String execute(String command) throws IOException {
        return execute0(command);
    }

    public byte[] executeBytes(String command) throws IOException {
        return execute1(command);
    }

    public void addThread(Thread thread) {
        filterThread0(thread, true);
    }

    public void removeThread(Thread thread) {
        filterThread0(thread, false);
    }

    public native long getSamples();

    private native void start0(String event, long interval, boolean reset) throws IllegalStateException;

    private native void stop0() throws IllegalStateException;

    private native String execute0(String command) throws IllegalArgumentException, IllegalStateException, IOException;

    private native byte[] execute1(String command) throws IllegalArgumentException, IllegalStateException, IOException;

    private native void filterThread0(Thread thread, boolean enable);
}
