import java.io.RandomAccessFile;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

/**
 * Workloads that spend their time outside Java code, for the native- and kernel-frame checks.
 *
 * <ul>
 * <li>{@code zip}: compresses 1 MiB of low-entropy bytes with {@link Deflater} (zlib, through JNI) and checksums it
 *     with {@link CRC32}, over and over: most of the CPU time is in libz.</li>
 * <li>{@code syscalls}: reads 64 bytes from /dev/zero after a seek, over and over: most of the CPU time is in the
 *     kernel, entered through libc from a JNI method.</li>
 * <li>{@code gc}: allocates and drops 64 KiB arrays in a small heap (run it with -Xmx32m): the GC threads work.</li>
 * </ul>
 *
 * <p>Usage: {@code java NativeLoad MODE [seconds=5]}. Prints {@code DONE n} at the end.
 */
public final class NativeLoad {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long end = System.nanoTime() + (long) ((args.length > 1 ? Double.parseDouble(args[1]) : 5) * 1e9);
        long n = 0;
        if (mode.equals("zip")) {
            byte[] in = new byte[1 << 20];
            Random r = new Random(1);
            for (int i = 0; i < in.length; i++) in[i] = (byte) r.nextInt(16);
            byte[] out = new byte[2 << 20];
            while (System.nanoTime() < end) n += zip(in, out);
        } else if (mode.equals("syscalls")) {
            byte[] b = new byte[64];
            try (RandomAccessFile f = new RandomAccessFile("/dev/zero", "r")) {
                while (System.nanoTime() < end) n += readZero(f, b);
            }
        } else {
            while (System.nanoTime() < end) n += churn();
        }
        System.out.println("DONE " + n);
    }

    static long zip(byte[] in, byte[] out) {
        Deflater d = new Deflater(6);
        d.setInput(in);
        d.finish();
        long n = d.deflate(out);
        d.end();
        CRC32 c = new CRC32();
        c.update(in);
        return n + c.getValue();
    }

    static long readZero(RandomAccessFile f, byte[] b) throws java.io.IOException {
        f.seek(0);
        return f.read(b);
    }

    static long churn() {
        long n = 0;
        for (int i = 0; i < 64; i++) {
            byte[] b = new byte[64 << 10];
            b[i] = 1;
            sink = b;
            n += b.length;
        }
        return n;
    }
}
