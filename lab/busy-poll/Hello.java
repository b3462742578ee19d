// A JVM that starts, sleeps 200 ms and prints one line (record-java.sh). Its compiler threads
// call gettid() a few hundred times in a burst of a few milliseconds: no spin worth reporting.
public class Hello {
    public static void main(String[] a) throws Exception {
        Thread.sleep(200);
        System.out.println("hi");
    }
}
