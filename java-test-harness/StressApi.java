import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import jsampler.JSampler;
import jsampler.JSamplerException;

/**
 * The Java API's side of {@link Stress}: start, dump and stop through {@code jsampler.JSampler}, over and over, the
 * configurations of {@link #CONFIGS} in turn, while the attach and backend drivers do the same from outside. One
 * session runs at a time, so a command may find another entry point's session running (start refused: busy) or its
 * own session stopped by another entry point (dump and stop refused: idle); those are counted, and must be one of the
 * dispatcher's refusals, in one line. Anything else is a failure ({@code FAIL} in the log line and on stdout).
 *
 * <p>One line per cycle in {@code api.log}: {@code CYCLE n config start=ok|busy|FAIL:.. dump=ok|idle|skip|FAIL:..
 * stop=ok|idle|skip|FAIL:.. base=PATH} (every output of the cycle starts with PATH).
 */
final class StressApi extends Stress.Activity {
    /** Name, start options and dump file; %B is the cycle's path prefix. */
    static final String[][] CONFIGS = {
        {"full-jfr", "event=cpu,interval=1ms,wall,alloc,lock,cstack=dwarf,file=%B.jfr", "%B-dump-%e.collapsed"},
        {"loop-jfr", "event=cpu,interval=1ms,wall,alloc,lock,cstack=dwarf,loop=1s,file=%B-%n.jfr", "%B-dump-%e.html"},
        {"text", "event=cpu,interval=1ms,alloc,lock,file=%B-%e.collapsed", "%B-dump-%e.txt"},
        {"ctimer-html", "event=ctimer,interval=1ms,threads,cstack=fp,file=%B.html", "%B-dump-%e.tree"},
        {"pprof", "event=cpu,interval=1ms,wall,file=%B-%e.pb.gz", "%B-dump-%e.pb.gz"},
        {"jfrfile", "event=cpu,interval=1ms,alloc,lock,cstack=dwarf,jfrfile=%B.jfr,file=%B-%e.txt",
            "%B-dump-%e.collapsed"},
    };
    static final String BUSY = "profiler already running (stop it first)";
    static final String DUMP_IDLE = "dump: profiler is not running";
    static final String STOP_IDLE = "stop: profiler is not running";

    final JSampler p;
    final Path dir;
    final AtomicLong fails = new AtomicLong();
    long cycles;
    long startOk;
    long startBusy;
    long dumpOk;
    long dumpIdle;
    long stopOk;
    long stopIdle;
    long full;

    StressApi(JSampler p, Path dir) {
        super("api", 1);
        this.p = p;
        this.dir = dir;
    }

    void fail(String why) {
        fails.incrementAndGet();
        Stress.report("STRESS_FAIL api " + why);
    }

    /** "ok", "busy"/"idle" for the expected refusal, else "FAIL:..." (counted). */
    String run(String cmd, String refusal, String refusedAs) {
        try {
            p.execute(cmd);
            return "ok";
        } catch (JSamplerException e) {
            String m = e.getMessage();
            // "wrong profiler state: " + the dispatcher's line
            if (m != null && m.indexOf('\n') < 0 && m.equals("wrong profiler state: " + refusal)) {
                return refusedAs;
            }
            fail("'" + cmd + "' refused with '" + m + "'");
            return "FAIL:" + m;
        } catch (RuntimeException | Error e) {
            fail("'" + cmd + "' threw " + e);
            return "FAIL:" + e;
        }
    }

    @Override
    void step(int w) throws InterruptedException {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long n = cycles++;
        String[] c = CONFIGS[(int) (n % CONFIGS.length)];
        String base = dir.resolve(String.format(java.util.Locale.ROOT, "%06d-%s", n, c[0])).toString();
        String start = run("start," + c[1].replace("%B", base), BUSY, "busy");
        String dump = "skip";
        String stop = "skip";
        if (start.equals("ok")) {
            startOk++;
            Thread.sleep(r.nextInt(100, 1500));
            dump = run("dump,file=" + c[2].replace("%B", base), DUMP_IDLE, "idle");
            Thread.sleep(r.nextInt(50, 500));
            stop = run("stop", STOP_IDLE, "idle");
            dumpOk += dump.equals("ok") ? 1 : 0;
            dumpIdle += dump.equals("idle") ? 1 : 0;
            stopOk += stop.equals("ok") ? 1 : 0;
            stopIdle += stop.equals("idle") ? 1 : 0;
            full += dump.equals("ok") && stop.equals("ok") ? 1 : 0;
        } else if (start.equals("busy")) {
            startBusy++;
        }
        Stress.out.println("CYCLE " + n + " " + c[0] + " start=" + start + " dump=" + dump + " stop=" + stop + " base="
                + base);
        Thread.sleep(r.nextInt(50, 1000));
    }

    String summary() {
        return " api_cycles=" + cycles + " api_start_ok=" + startOk + " api_start_busy=" + startBusy + " api_dump_ok="
                + dumpOk + " api_dump_idle=" + dumpIdle + " api_stop_ok=" + stopOk + " api_stop_idle=" + stopIdle
                + " api_full=" + full + " api_fail=" + fails.get();
    }
}
