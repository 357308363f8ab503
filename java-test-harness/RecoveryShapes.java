import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import jsampler.JSampler;

/**
 * Compiled Java that spends its time outside Java code without leaving the Java thread state, the places a stack
 * walker must step out of that are neither a compiled method nor a dispatch stub:
 * <ul>
 * <li>{@code time}: a hot loop over {@link System#currentTimeMillis()} and {@link System#nanoTime()}. Compiled,
 * both are leaf calls from the method's code straight into the VM's C++ clock functions (and from there into libc
 * and the vDSO), with no thread-state change and no frame anchor.</li>
 * <li>{@code intrinsics}: a mix of calls the JIT compilers replace by hand-written stubs or inline code: array
 * copies, array and String equality and comparison, CRC32, CRC32C, Adler32, AES/CBC, SHA-256, BigInteger
 * multiplication, Base64, Math functions, StringBuilder, {@code Arrays.fill} and {@code copyOf}, String coding.</li>
 * </ul>
 *
 * <p>Usage: {@code java RecoveryShapes time|intrinsics [seconds=5] [threads=2] [minCpuSeconds=0] [warmupSeconds=0
 * profilerOptions]}. With profiler options the workers first run unprofiled until the JIT compilers have been quiet
 * for half a second (no compile time added: class loading, first compilations and their deoptimizations done), at
 * least a second and at most {@code warmupSeconds}; then the profiler, loaded idle by {@code -agentpath}, is started
 * through {@link JSampler} with those options and stopped at the end. The measured part ends once {@code seconds}
 * have passed and the workers used {@code minCpuSeconds} of CPU in it (at most three times {@code seconds}: on a
 * busy machine a profile still gets its samples). Prints
 * {@code RecoveryShapes done mode=M threads=T calls=N cpu_ms=C checksum=X} (calls and CPU of the measured part).
 */
public final class RecoveryShapes {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final AtomicLong calls = new AtomicLong();
    static final AtomicLong checksum = new AtomicLong();
    static final AtomicLong cpuNanos = new AtomicLong();
    static volatile boolean measuring;
    static volatile long softEnd, hardEnd;
    static long minCpuNanos;

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "time";
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 5.0;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        double minCpuSeconds = args.length > 3 ? Double.parseDouble(args[3]) : 0.0;
        double warmupSeconds = args.length > 4 ? Double.parseDouble(args[4]) : 0.0;
        String profilerOptions = args.length > 5 ? args[5] : null;
        MX.setThreadCpuTimeEnabled(true);
        minCpuNanos = (long) (minCpuSeconds * 1e9);
        Thread[] workers = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            Runnable body;
            switch (mode) {
                case "time": body = RecoveryShapes::timeLoop; break;
                case "intrinsics": body = RecoveryShapes::intrinsicsLoop; break;
                default: throw new IllegalArgumentException("mode must be time or intrinsics: " + mode);
            }
            workers[i] = new Thread(body, "shapes-" + mode + "-" + i);
            workers[i].setUncaughtExceptionHandler((th, e) -> {
                e.printStackTrace();
                Runtime.getRuntime().halt(1);
            });
            workers[i].start();
        }
        warmUp(warmupSeconds);
        if (profilerOptions != null) {
            System.out.println("profiler: " + JSampler.getInstance().start(profilerOptions));
        }
        long start = System.nanoTime();
        softEnd = start + (long) (seconds * 1e9);
        hardEnd = start + (long) (3 * seconds * 1e9);
        measuring = true;
        for (Thread w : workers) {
            w.join();
        }
        if (profilerOptions != null) {
            System.out.println("profiler: " + JSampler.getInstance().stop());
        }
        System.out.println("RecoveryShapes done mode=" + mode + " threads=" + threads + " calls=" + calls.get()
                + " cpu_ms=" + cpuNanos.get() / 1_000_000 + " checksum=" + Long.toHexString(checksum.get()));
    }

    /** Waits until the JIT has added no compile time for 500 ms, at least 1 s and at most maxSeconds (all of it where
     *  the JVM does not count compile time); says how long. */
    static void warmUp(double maxSeconds) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean counted = jit != null && jit.isCompilationTimeMonitoringSupported();
        long t0 = System.nanoTime(), last = -1;
        int quiet = 0;
        while (System.nanoTime() - t0 < (long) (maxSeconds * 1e9)) {
            Thread.sleep(250);
            if (!counted) {
                continue;
            }
            long ms = jit.getTotalCompilationTime();
            quiet = ms == last ? quiet + 1 : 0;
            last = ms;
            if (quiet >= 2 && System.nanoTime() - t0 >= 1_000_000_000L) {
                break;
            }
        }
        System.out.printf(java.util.Locale.ROOT, "warm-up %.2f s (JIT %s)%n", (System.nanoTime() - t0) / 1e9,
                quiet >= 2 ? "quiet" : "not quiet: stopped at the limit");
    }

    /**
     * True once the run may end: called by a worker after each round. cpu[0] is the worker's CPU time when the
     * measured part began (its last round before), cpu[1] what of it was added to the total.
     */
    static boolean done(long[] cpu) {
        long now = MX.getCurrentThreadCpuTime();
        if (!measuring) {
            cpu[0] = now;
            return false;
        }
        long total = cpuNanos.addAndGet(now - cpu[0] - cpu[1]);
        cpu[1] = now - cpu[0];
        long t = System.nanoTime();
        return t >= hardEnd || (t >= softEnd && total >= minCpuNanos);
    }

    /** Rounds of clock reads: a wait for the next millisecond spinning on currentTimeMillis (as a timeout loop
     *  does), then a run of nanoTime and currentTimeMillis reads. */
    static void timeLoop() {
        long[] cpu = {MX.getCurrentThreadCpuTime(), 0};
        long acc = 0, n = 0;
        do {
            long t = System.currentTimeMillis(), spins = 0;
            while (System.currentTimeMillis() == t) {
                spins++;
            }
            acc += spins + clocks(1024);
            n += measuring ? spins + 2048 : 0;
        } while (!done(cpu));
        calls.addAndGet(n);
        checksum.accumulateAndGet(acc, (x, y) -> x ^ y);
    }

    /** reps reads of each clock, folded so none is dead. */
    static long clocks(int reps) {
        long acc = 0;
        for (int i = 0; i < reps; i++) {
            acc += System.currentTimeMillis();
            acc ^= System.nanoTime() >>> (i & 7);
        }
        return acc;
    }

    /** Rounds of the intrinsic mix. */
    static void intrinsicsLoop() {
        long[] cpu = {MX.getCurrentThreadCpuTime(), 0};
        Mix m;
        try {
            m = new Mix();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        long acc = 0, n = 0, before = 0;
        do {
            if (!measuring) {
                before = n;
            }
            for (int i = 0; i < 64; i++, n++) {
                acc += m.round(n);
            }
        } while (!done(cpu));
        calls.addAndGet(n - before);
        checksum.accumulateAndGet(acc, (x, y) -> x ^ y);
    }

    /**
     * One thread's buffers and engines for the intrinsic mix. Results go into preallocated buffers where the JDK
     * offers it and the allocating intrinsics run every 32nd round (BigInteger every 64th), so the mix allocates
     * about 20 bytes a round: allocation's slow path (a call into the VM under the VM's thread state, where
     * AsyncGetCallTrace needs a frame anchor HotSpot completes only lazily) is another shape than the one this
     * workload is about, and one the walker does not recover yet (at every eighth round, 4-10 of 15,000 samples
     * failed there as [unknown_not_Java], in OptoRuntime::new_array_C and new_array_nozero_C; at every 32nd, 1-10:
     * no fewer on JDK 25).
     */
    static final class Mix {
        final byte[] bytes = new byte[4096];
        final byte[] other = new byte[4096];
        final int[] ints = new int[1024];
        final long[] longs = new long[512];
        final Object[] objects = new Object[256];
        final char[] chars = new char[512];
        final byte[] block = new byte[1024];
        final byte[] sealed = new byte[1024];
        final byte[] encoded = new byte[2048];
        final byte[] digest = new byte[32];
        final String[] words = new String[64];
        final String[] needles = new String[64];
        final StringBuilder sb = new StringBuilder(256);
        final CRC32 crc = new CRC32();
        final CRC32C crcc = new CRC32C();
        final Adler32 adler = new Adler32();
        final MessageDigest sha = MessageDigest.getInstance("SHA-256");
        final Cipher aes = Cipher.getInstance("AES/CBC/NoPadding");
        final BigInteger big1, big2;
        final Base64.Encoder b64 = Base64.getEncoder();

        Mix() throws GeneralSecurityException {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            r.nextBytes(bytes);
            System.arraycopy(bytes, 0, other, 0, bytes.length);
            for (int i = 0; i < ints.length; i++) {
                ints[i] = r.nextInt();
            }
            for (int i = 0; i < chars.length; i++) {
                chars[i] = (char) ('a' + r.nextInt(26));
            }
            for (int i = 0; i < objects.length; i++) {
                objects[i] = Integer.valueOf(i);
            }
            for (int i = 0; i < words.length; i++) {
                words[i] = new String(chars, i, 200 + i);
            }
            for (int i = 0; i < needles.length; i++) {
                needles[i] = words[(i + 1) & 63].substring(150, 153); /* short: indexOf copies it to the stack */
            }
            byte[] key = new byte[16];
            r.nextBytes(key);
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(new byte[16]));
            big1 = new BigInteger(1024, r);
            big2 = new BigInteger(1024, r);
        }

        /** One round: each intrinsic once or a few times; returns a value depending on all results. */
        long round(long n) {
            int k = (int) (n & 63);
            long acc = 0;
            // array copies of several element types and lengths (arraycopy stubs, inline copies)
            System.arraycopy(bytes, k, other, 64 - k, 2048 + k);
            System.arraycopy(ints, k, ints, 512, 256 + k);
            System.arraycopy(longs, 0, longs, 256, 128 + k);
            System.arraycopy(objects, 0, objects, 128, 64 + k);
            if ((n & 31) == 0) {
                acc += Arrays.copyOf(ints, 16 + k)[k] + Arrays.copyOfRange(bytes, k, 48 + k).length;
            }
            Arrays.fill(longs, 0, 200, n);
            Arrays.fill(bytes, 3000, 3500, (byte) n);
            // equality, comparison and search (array equals, mismatch, String intrinsics)
            acc += Arrays.equals(bytes, other) ? 1 : 2;
            acc += Arrays.mismatch(ints, 0, 512, ints, 512, 1024);
            acc += Arrays.compare(bytes, 0, 2000, other, 0, 2000);
            String a = words[k], b = words[(k + 1) & 63];
            acc += a.equals(b) ? 3 : 4;
            acc += a.compareTo(b) + a.indexOf("zq") + a.indexOf(needles[k]) + a.hashCode();
            // checksums (CRC32, CRC32C and Adler32 stubs)
            crc.reset();
            crc.update(bytes, k, 4000);
            crcc.reset();
            crcc.update(bytes, k, 4000);
            adler.reset();
            adler.update(bytes, k, 4000);
            acc += crc.getValue() ^ crcc.getValue() ^ adler.getValue();
            // crypto (AES and SHA-256 compression stubs)
            try {
                aes.update(block, 0, block.length, sealed, 0);
                sha.update(bytes, 0, 2048);
                sha.digest(digest, 0, digest.length);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
            acc += sealed[k] + digest[k & 31];
            // big numbers now and then, Base64 into a buffer (multiplyToLen, base64 stubs where present)
            if ((n & 63) == 0) {
                acc += big1.multiply(big2).intValue();
            }
            acc += b64.encode(block, encoded);
            // Math functions (the libm-style stubs)
            double x = (n & 1023) * 0.001 + 0.5;
            acc += (long) (1e6 * (Math.sin(x) + Math.cos(x) + Math.tan(x) + Math.log(x) + Math.log10(x) + Math.exp(x)
                    + Math.pow(x, 1.7)));
            // strings built and coded (StringBuilder, Latin-1 compress and inflate)
            sb.setLength(0);
            for (int i = 0; i < 4; i++) {
                sb.append(a, i, i + 12).append(i).append(',');
            }
            acc += sb.length() + sb.indexOf(",");
            if ((n & 31) == 0) {
                acc += new String(chars, k, 40).length() + new String(bytes, k, 40, StandardCharsets.ISO_8859_1).hashCode();
            }
            return acc;
        }
    }
}
