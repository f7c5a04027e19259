// Test support for tests/groups/test_java_order.py: replays operations on a java.util.HashMap
// and prints its iteration order after each case. Input lines:
//   NEW <initial capacity or -1>   PUT <key>   COMPUTE <key>   REMOVE <key>   PRINT
// Keys are strings; PRINT writes the keys in iteration order, separated by spaces.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;

public class HashOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        HashMap<String, Integer> map = new HashMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            int sp = line.indexOf(' ');
            String op = sp < 0 ? line : line.substring(0, sp);
            String arg = sp < 0 ? "" : line.substring(sp + 1);
            switch (op) {
                case "NEW":
                    int cap = Integer.parseInt(arg);
                    map = cap < 0 ? new HashMap<>() : new HashMap<>(cap);
                    break;
                case "PUT": map.put(arg, 1); break;
                case "COMPUTE": map.computeIfAbsent(arg, k -> 1); break;
                case "REMOVE": map.remove(arg); break;
                case "HASH": out.append(arg.hashCode()).append('\n'); break;
                case "PRINT": out.append(String.join(" ", map.keySet())).append('\n'); break;
                default: throw new IllegalArgumentException(op);
            }
        }
        System.out.print(out);
    }
}
