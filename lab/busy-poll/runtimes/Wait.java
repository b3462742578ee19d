// Wait.java: a thread waits for a message another thread sends through a java.nio Pipe after
// 0.3 s.
//   spin: source.configureBlocking(false) and read() again while it returns 0 (each read(2)
//         fails with EAGAIN)
//   wait: a Selector: select() blocks in epoll_wait until the pipe is readable, then read()
// usage: java Wait MODE      (bounded: at most 10,000,000 tries)
import java.nio.ByteBuffer;
import java.nio.channels.*;

public class Wait {
    public static void main(String[] a) throws Exception {
        Pipe p = Pipe.open();
        Thread writer = new Thread(() -> {
            try {
                Thread.sleep(300);
                p.sink().write(ByteBuffer.wrap("hello\n".getBytes()));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        writer.start();
        Pipe.SourceChannel src = p.source();
        src.configureBlocking(false);
        ByteBuffer buf = ByteBuffer.allocate(512);
        if (a[0].equals("spin")) {
            for (int i = 0; i < 10_000_000; i++) {
                if (src.read(buf) > 0) {
                    System.out.println("read after " + i + " tries");
                    break;
                }
            }
        } else if (a[0].equals("wait")) {
            Selector sel = Selector.open();
            src.register(sel, SelectionKey.OP_READ);
            sel.select();
            System.out.println("read " + src.read(buf));
        } else {
            throw new IllegalArgumentException(a[0]);
        }
        writer.join();
    }
}
