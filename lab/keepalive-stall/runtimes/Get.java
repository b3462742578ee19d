// Get.java: downloads http://127.0.0.1:PORT/body.bin once.
//   raw:  a java.net.Socket, an HTTP/1.1 keep-alive request written by hand, read() until it
//         returns -1: that happens only when the server closes (its keep-alive timeout)
//   http: java.net.http.HttpClient: it stops at Content-Length
// usage: java Get MODE PORT
import java.io.*;
import java.net.Socket;
import java.net.URI;
import java.net.http.*;
import java.nio.charset.StandardCharsets;

public class Get {
    public static void main(String[] a) throws Exception {
        int port = Integer.parseInt(a[1]);
        if (a[0].equals("raw")) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.getOutputStream().write(("GET /body.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
                InputStream in = s.getInputStream();
                byte[] buf = new byte[1 << 16];
                long n = 0;
                for (int r; (r = in.read(buf)) > 0; ) n += r;
                System.out.println(n);
            }
        } else if (a[0].equals("http")) {
            HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpResponse<byte[]> r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/body.bin")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
            System.out.println(r.body().length);
        } else {
            throw new IllegalArgumentException(a[0]);
        }
    }
}
