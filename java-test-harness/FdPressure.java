import java.io.FileInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Many threads in a JVM with few files allowed (run it under {@code ulimit -n}), for the open-file check: starts
 * {@code threads} threads named {@code fdp-worker-N} that each use about 0.3 ms of CPU every 50 ms, waits 1.5 s (a
 * profiler attaches to each of them meanwhile), then opens {@code files} files at once as an application would, and
 * keeps them open until the end. Prints {@code FILES_OK n} or {@code FILES_FAILED after n: why}, then
 * {@code FDPRESSURE_DONE}.
 *
 * <p>Usage: {@code java FdPressure [threads=300] [files=64] [seconds=4]}.
 */
public final class FdPressure {
    static volatile long sink;
    static volatile boolean stop;

    static void burn(long ns) {
        long end = System.nanoTime() + ns;
        long x = 1;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int files = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 4;
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                while (!stop) {
                    burn(300_000);
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "fdp-worker-" + i);
            t.start();
            workers.add(t);
        }
        Thread.sleep(1500);
        List<FileInputStream> open = new ArrayList<>();
        try {
            for (int i = 0; i < files; i++) {
                open.add(new FileInputStream("/proc/self/stat"));
            }
            System.out.println("FILES_OK " + open.size());
        } catch (IOException e) {
            System.out.println("FILES_FAILED after " + open.size() + ": " + e.getMessage());
        }
        Thread.sleep((long) (seconds * 1000) - 1500);
        stop = true;
        for (Thread t : workers) {
            t.join();
        }
        for (FileInputStream f : open) {
            f.close();
        }
        System.out.println("FDPRESSURE_DONE");
    }
}
