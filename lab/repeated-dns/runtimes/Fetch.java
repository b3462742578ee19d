// Fetch.java: N requests to NAME:PORT, each on a new java.net.Socket(NAME, PORT) (one short
// HTTP/1.1 GET with Connection: close). Every new Socket(String, int) resolves NAME through
// InetAddress.getByName, which answers from the JVM's address cache while the entry is fresh:
// networkaddress.cache.ttl (security property; system property sun.net.inetaddr.ttl) is 30 s by
// default without a security manager, so only the first request asks DNS. Run with
// -Dsun.net.inetaddr.ttl=0 to turn the cache off (what is often done for fast DNS failover):
// every request asks DNS again.
// usage: java Fetch.java N NAME PORT
import java.io.*;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

public class Fetch {
    public static void main(String[] a) throws IOException {
        int n = Math.min(Integer.parseInt(a[0]), 200);
        String name = a[1];
        int port = Integer.parseInt(a[2]);
        for (int i = 0; i < n; i++) {
            try (Socket s = new Socket(name, port)) {
                OutputStream o = s.getOutputStream();
                o.write(("GET /feed/" + i + " HTTP/1.1\r\nHost: " + name + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
                o.flush();
                InputStream in = s.getInputStream();
                byte[] buf = new byte[1 << 16];
                while (in.read(buf) > 0) { }
            }
        }
    }
}
