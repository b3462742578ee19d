// The Java call-site proof (issue 31): a busy poll in the program's own method. spinFor reads a
// non-blocking java.nio Pipe whose writer sends one line after MS milliseconds, and reads again
// at once while read() returns 0 (each read(2) fails with EAGAIN): the busy-poll lab's
// Wait.java spin, for longer, so that the JIT compiles the loop early in the run even on a
// loaded machine (only compiled methods are in the JVM's perf map; interpreted ones are one
// `Interpreter` frame each).
//
// usage: java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer
//        Spin MS      (bounded: 100 <= MS <= 10000, and at most 100,000,000 tries)
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;

public class Spin {
    static long spinFor(Pipe.SourceChannel src) throws Exception {
        ByteBuffer buf = ByteBuffer.allocate(512);
        for (long i = 0; i < 100_000_000L; i++) {
            if (src.read(buf) > 0) { // the calls the finding is about
                return i;
            }
        }
        return -1;
    }

    public static void main(String[] a) throws Exception {
        long ms = Long.parseLong(a[0]);
        if (ms < 100 || ms > 10_000) {
            throw new IllegalArgumentException("MS: 100 to 10000");
        }
        Pipe p = Pipe.open();
        Thread writer = new Thread(() -> {
            try {
                Thread.sleep(ms);
                p.sink().write(ByteBuffer.wrap("hello\n".getBytes()));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        writer.start();
        p.source().configureBlocking(false);
        System.out.println("read after " + spinFor(p.source()) + " tries");
        writer.join();
    }
}
