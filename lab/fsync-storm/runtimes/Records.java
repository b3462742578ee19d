// Records.java: appends N records of ~33 bytes to a log file and makes them durable.
//   each:  FileChannel.force(false) (fdatasync) after every record
//   batch: one force(false) after all records
// usage: java Records MODE N FILE
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;

public class Records {
    public static void main(String[] a) throws Exception {
        String mode = a[0];
        int n = Math.min(Integer.parseInt(a[1]), 5000);
        if (!mode.equals("each") && !mode.equals("batch")) throw new IllegalArgumentException(mode);
        try (FileChannel ch = FileChannel.open(Paths.get(a[2]), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            for (int i = 0; i < n; i++) {
                ch.write(ByteBuffer.wrap(("record " + i + ": account=" + (i % 97) + " amount=" + (i * 3) + "\n")
                    .getBytes(StandardCharsets.US_ASCII)));
                if (mode.equals("each")) ch.force(false);
            }
            ch.force(false);
        }
    }
}
