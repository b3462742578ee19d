// Lines.java: writes N log lines to a file through a bare FileOutputStream (one write(2) per
// write() call) or a BufferedOutputStream of 64 KiB.
// usage: java Lines.java MODE N OUT   (MODE: unbuffered | buffered64k | buffered-default)
import java.io.*;
import java.nio.charset.StandardCharsets;

public class Lines {
    public static void main(String[] a) throws IOException {
        String mode = a[0];
        int n = Integer.parseInt(a[1]);
        OutputStream out = new FileOutputStream(a[2]);
        if (mode.equals("buffered64k")) out = new BufferedOutputStream(out, 1 << 16);
        else if (mode.equals("buffered-default")) out = new BufferedOutputStream(out); // 8 KiB
        else if (!mode.equals("unbuffered")) throw new IllegalArgumentException(mode);
        for (int i = 0; i < n; i++) {
            out.write(("2026-11-27T17:00:00Z INFO request " + i + " served in 3 ms status=200\n")
                .getBytes(StandardCharsets.UTF_8));
        }
        out.close();
    }
}
