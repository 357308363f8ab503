import jsampler.JSampler;
import jsampler.JSamplerException;

/**
 * The JVM exiting while dumps are being written: profiling runs (started by -agentpath), one thread writes dump
 * after dump of a growing profile into the working directory while main calls System.exit(0) after a while. Every
 * dump either completes or is refused with the agent's line; the JVM must exit promptly with status 0.
 *
 * <p>Usage: {@code java -agentpath:...=start,...,file=F -cp jsampler.jar:. ExitDump [millis=600]}.
 */
public final class ExitDump {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 600;
        JSampler p = JSampler.getInstance();
        for (int i = 0; i < 3; i++) {
            Thread burner = new Thread(() -> {
                long x = 1;
                while (true) {
                    x = x * 6364136223846793005L + 1;
                    sink = x;
                }
            }, "burner-" + i);
            burner.setDaemon(true);
            burner.start();
        }
        Thread dumper = new Thread(() -> {
            for (int n = 0;; n++) {
                try {
                    p.dump("dump-" + n + ".html");
                    System.out.println("DUMPED " + n);
                } catch (JSamplerException e) {
                    System.out.println("DUMP_REFUSED " + n + " " + e.getMessage()); // VM death came first: fine
                }
            }
        }, "dumper");
        dumper.setDaemon(true);
        dumper.start();
        Thread.sleep(millis);
        System.exit(0);
    }
}
