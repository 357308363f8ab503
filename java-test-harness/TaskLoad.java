/**
 * The workload of the task client's checks: idles (sleeps) for {@code idleSeconds}, then runs {@link CpuSplit}
 * for {@code busySeconds} on {@code threads} threads (which prints its measured split), then idles again for
 * {@code tailSeconds}. An idle start lets a task be planned on an idle process and then grow; a busy time of 0
 * makes an idle JVM for the idle-polling benchmark. An idle time written {@code @PATH} idles until that file exists
 * (at most two minutes): a check starts the workload at a moment it observed, not at a guess of when it comes.
 *
 * <p>Arguments: idleSeconds|@PATH busySeconds threads [tailSeconds [minCpuSeconds]]; minCpuSeconds is CpuSplit's (the
 * busy time lasts until the workers used that much CPU, at most three times busySeconds).
 */
public final class TaskLoad {
    public static void main(String[] args) throws InterruptedException {
        String idleArg = args[0];
        double busy = Double.parseDouble(args[1]);
        int threads = Integer.parseInt(args[2]);
        double tail = args.length > 3 ? Double.parseDouble(args[3]) : 0;
        String minCpu = args.length > 4 ? args[4] : "0";
        System.out.println("TASKLOAD_STARTED");
        if (idleArg.startsWith("@")) {
            java.io.File go = new java.io.File(idleArg.substring(1));
            for (int i = 0; i < 12000 && !go.exists(); i++) {
                Thread.sleep(10);
            }
        } else {
            Thread.sleep((long) (Double.parseDouble(idleArg) * 1000));
        }
        if (busy > 0) {
            CpuSplit.main(new String[] {Double.toString(busy), Integer.toString(threads), minCpu});
        }
        Thread.sleep((long) (tail * 1000));
        System.out.println("TASKLOAD_DONE");
    }
}
