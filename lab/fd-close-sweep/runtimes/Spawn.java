// Spawn.java: starts /bin/true 3 times with ProcessBuilder (OpenJDK 17 on Linux: the child,
// jspawnhelper, closes what it inherited by listing /proc/self/fd).
// usage: java Spawn
public class Spawn {
    public static void main(String[] a) throws Exception {
        for (int i = 0; i < 3; i++) new ProcessBuilder("/bin/true").start().waitFor();
    }
}
