import jsampler.JSampler;
import jsampler.JSamplerException;

/**
 * stop() racing System.exit: profiling runs, one thread calls stop() at the moment main calls System.exit(0).
 * Either the stop or VM death writes the output, once; the JVM must exit promptly with status 0.
 *
 * <p>Usage: {@code java -agentpath:...=start,...,file=F -cp jsampler.jar:. ExitRace}.
 */
public final class ExitRace {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        JSampler p = JSampler.getInstance();
        Thread burner = new Thread(() -> {
            long x = 1;
            while (true) {
                x = x * 6364136223846793005L + 1;
                sink = x;
            }
        }, "burner");
        burner.setDaemon(true);
        burner.start();
        Thread.sleep(300);
        Thread stopper = new Thread(() -> {
            try {
                p.stop();
            } catch (JSamplerException e) {
                System.out.println("STOP_REFUSED " + e.getMessage()); // VM death came first: fine
            }
        }, "stopper");
        stopper.start();
        System.exit(0);
    }
}
