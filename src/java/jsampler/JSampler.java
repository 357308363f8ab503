package jsampler;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileReader;
import java.io.IOException;

/**
 * The profiler from inside the JVM it profiles. Every method hands one command string to the agent's dispatcher,
 * the same one that serves {@code -agentpath} options and attach: same syntax, same state machine, same replies.
 *
 * <pre>
 * JSampler p = JSampler.getInstance("/opt/jsampler/libjsampler.so"); // or getInstance() when already loaded
 * p.start("event=cpu,interval=1ms,file=/tmp/profile.html");
 * ... p.dump("/tmp/now.collapsed"); ...
 * p.stop();
 * </pre>
 *
 * Thread-safe. A command the agent refuses (a start while running, a stop while idle, a bad option, an output that
 * cannot be written) throws {@link JSamplerException} with the agent's message.
 */
public final class JSampler {
    private static final String LIBRARY = "libjsampler.so";
    private static JSampler instance;

    private JSampler() {
    }

    /** The profiler whose library is already in this JVM (loaded by -agentpath or an earlier System.load). */
    public static synchronized JSampler getInstance() {
        if (instance == null) {
            String path = loadedLibrary();
            if (path == null) {
                throw new JSamplerException(LIBRARY + " is not loaded in this JVM: start it with -agentpath or call "
                        + "getInstance(libPath)");
            }
            System.load(path);
            instance = new JSampler();
        }
        return instance;
    }

    /** The profiler, loading the library at libPath (an absolute path) if it is not loaded yet. */
    public static synchronized JSampler getInstance(String libPath) {
        if (instance == null) {
            System.load(new File(libPath).getAbsolutePath());
            instance = new JSampler();
        }
        return instance;
    }

    /** Run one command ("start,event=cpu,file=p.html", "stop", "dump,file=x", "status", ...); the agent's reply. */
    public String execute(String command) {
        return execute0(command);
    }

    /** Start profiling event (cpu, ctimer, itimer) every intervalNs of CPU time. */
    public String start(String event, long intervalNs) {
        return execute("start,event=" + event + ",interval=" + intervalNs);
    }

    /** Start profiling with options as in -agentpath ("event=cpu,interval=1ms,file=/tmp/p.jfr"). */
    public String start(String options) {
        return execute(options == null || options.isEmpty() ? "start" : "start," + options);
    }

    /** Stop profiling and write the session's output. */
    public String stop() {
        return execute("stop");
    }

    /** Write what was sampled so far to file (its extension picks the format) without stopping. */
    public String dump(String file) {
        return execute("dump,file=" + file);
    }

    /** State, engine, counters. */
    public String status() {
        return execute("status");
    }

    /** "jsampler X.Y.Z". */
    public String getVersion() {
        return version0();
    }

    /** Path of the library as mapped into this process, from /proc/self/maps; null if it is not there. */
    private static String loadedLibrary() {
        try (BufferedReader r = new BufferedReader(new FileReader("/proc/self/maps"))) {
            for (String line; (line = r.readLine()) != null;) {
                int slash = line.indexOf('/');
                if (slash >= 0 && line.endsWith("/" + LIBRARY)) {
                    return line.substring(slash);
                }
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }

    private static native String execute0(String command);

    private static native String version0();
}
