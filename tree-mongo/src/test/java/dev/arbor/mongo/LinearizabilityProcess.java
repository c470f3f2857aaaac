package dev.arbor.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Position;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * One writer of {@link LinearizabilityProcessesTest}, in a process of its own: opens the tree with
 * the given lease, reads it once (so that every writer plans from the same quiet version), says
 * {@code ready}, waits for {@code go T} (a wall-clock instant in nanoseconds), sleeps until T plus
 * its delay, then runs its changes and prints each as one line:
 * {@code call <start> <end> <change> <result>}, times on the wall clock in nanoseconds, the result
 * {@code value <v>}, {@code null} or {@code thrown <class> <outcome or ->}.
 *
 * <p>Arguments: uri, database, collection, pattern, lease in ms, delay in ms, then the changes,
 * each {@code move|x|anchor|p}, {@code insert|id|anchor|p} or {@code delete|x} (p: 0 first child,
 * 1 last child, 2 after).
 */
public final class LinearizabilityProcess {
  private LinearizabilityProcess() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try (MongoClient client = MongoClients.create(MongoTestServer.settings(args[0]))) {
      MongoCollection<Document> c = client.getDatabase(args[1]).getCollection(args[2]);
      TreePattern pattern = TreePattern.valueOf(args[3]);
      TreeStore store = pattern.open(c, ServerCapabilities.probing(c)
          .lease(Long.parseLong(args[4]), 60_000));
      store.children("n0");
      out.println("ready");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
          StandardCharsets.UTF_8));
      String go = in.readLine();
      long at = Long.parseLong(go.substring("go ".length())) + Long.parseLong(args[5])
          * 1_000_000L;
      long wait = (at - Linearizability.History.wallClock()) / 1_000_000L;
      if (wait > 0) {
        Thread.sleep(wait);
      }
      for (int i = 6; i < args.length; i++) {
        Function<TreeStore, @Nullable Object> op = op(args[i]);
        long start = Linearizability.History.wallClock();
        String result;
        try {
          result = "value " + op.apply(store);
        } catch (ChangeInterruptedException e) {
          result = "thrown " + e.getClass().getName() + " " + e.outcome();
        } catch (RuntimeException e) {
          result = "thrown " + e.getClass().getName() + " -";
        }
        long end = Linearizability.History.wallClock();
        out.println("call " + start + " " + end + " " + args[i] + " " + result);
      }
      out.println("done");
    }
  }

  /** The change {@code spec} names (see the class documentation). */
  static Function<TreeStore, @Nullable Object> op(String spec) {
    String[] m = spec.split("\\|");
    return switch (m[0]) {
      case "move" -> s -> {
        s.move(m[1], position(m[2], m[3]));
        return null;
      };
      case "insert" -> s -> {
        s.insert(m[1], position(m[2], m[3]));
        return null;
      };
      case "delete" -> s -> s.delete(m[1]);
      default -> throw new IllegalArgumentException(spec);
    };
  }

  private static Position position(String anchor, String p) {
    return switch (p) {
      case "0" -> Position.firstChildOf(anchor);
      case "1" -> Position.lastChildOf(anchor);
      default -> Position.after(anchor);
    };
  }
}
