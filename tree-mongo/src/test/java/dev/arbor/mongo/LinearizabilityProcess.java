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
import java.util.List;
import java.util.function.Function;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * One writer of {@link LinearizabilityProcessesTest}, in a process of its own: opens the tree with
 * the given lease, reads it once (so that every writer plans from the same quiet version), says
 * {@code ready}, waits for {@code go T} (a wall-clock instant in nanoseconds), sleeps until T plus
 * its delay, then runs its changes and prints each as two lines, {@code begin <start> <change>}
 * as it starts and {@code call <start> <end> <change> <result>} as it ends, times on the wall
 * clock in nanoseconds, the result {@code value <v>}, {@code null} or {@code thrown <class>
 * <outcome or ->} (a writer killed in a change said the first line only: its call is open).
 *
 * <p>Arguments: uri, database, collection, pattern, lease in ms, delay in ms, then the changes,
 * each {@code move|x|anchor|p}, {@code insert|id|anchor|p} or {@code delete|x} (p: 0 first child,
 * 1 last child, 2 after).
 *
 * <p>With the environment variable {@code ARBOR_TRACE_DIR} set, each writer also logs every
 * command it sends and every answer, with the wall clock in microseconds, and each call's start
 * and end, to {@code <pid>.log} in that directory: what a history the checker refuses is read
 * against (it found the lanes' batches whose closing outlived a step's deadline).
 */
public final class LinearizabilityProcess {
  private LinearizabilityProcess() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    String traceDir = System.getenv("ARBOR_TRACE_DIR");
    com.mongodb.MongoClientSettings settings = MongoTestServer.settings(args[0]);
    java.io.PrintStream traceLog = null;
    if (traceDir != null && !traceDir.isEmpty()) {
      java.io.PrintStream log = new java.io.PrintStream(new java.io.FileOutputStream(
          traceDir + "/" + ProcessHandle.current().pid() + ".log"), true, StandardCharsets.UTF_8);
      traceLog = log;
      settings = com.mongodb.MongoClientSettings.builder(settings).addCommandListener(
          new com.mongodb.event.CommandListener() {
            @Override
            public void commandStarted(com.mongodb.event.CommandStartedEvent e) {
              org.bson.BsonDocument cmd = e.getCommand().clone();
              for (String k : List.of("lsid", "$db", "$clusterTime", "txnNumber")) {
                cmd.remove(k);
              }
              String j = cmd.toJson();
              log.println(Linearizability.History.wallClock() / 1000 + " S " + e.getRequestId()
                  + " " + (j.length() > 1500 ? j.substring(0, 1500) : j));
            }

            @Override
            public void commandSucceeded(com.mongodb.event.CommandSucceededEvent e) {
              String j = e.getResponse().toJson();
              log.println(Linearizability.History.wallClock() / 1000 + " OK " + e.getRequestId()
                  + " " + (j.length() > 800 ? j.substring(0, 800) : j));
            }

            @Override
            public void commandFailed(com.mongodb.event.CommandFailedEvent e) {
              log.println(Linearizability.History.wallClock() / 1000 + " FAIL "
                  + e.getRequestId() + " " + e.getThrowable());
            }
          }).build();
    }
    try (MongoClient client = MongoClients.create(settings)) {
      MongoCollection<Document> c = client.getDatabase(args[1]).getCollection(args[2]);
      TreePattern pattern = TreePattern.valueOf(args[3]);
      ServerCapabilities capabilities = ServerCapabilities.probing(c)
          .lease(Long.parseLong(args[4]), 60_000);
      double flaky = Double.parseDouble(System.getProperty("arbor.flaky", "0"));
      FlakyNetwork network = flaky > 0
          ? new FlakyNetwork(Long.getLong("arbor.flaky.seed", 1), flaky) : null;
      if (network != null) {
        capabilities = capabilities.sender(network);
      }
      TreeStore store = pattern.open(c, capabilities);
      store.roots(); // a first read: the store is warmed up
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
        out.println("begin " + start + " " + args[i]);
        String result;
        try {
          result = "value " + op.apply(store);
        } catch (ChangeInterruptedException e) {
          result = "thrown " + e.getClass().getName() + " " + e.outcome();
        } catch (RuntimeException e) {
          result = "thrown " + e.getClass().getName() + " -";
        }
        long end = Linearizability.History.wallClock();
        if (traceLog != null) {
          traceLog.println(end / 1000 + " CALL " + start / 1000 + " " + args[i] + " " + result);
        }
        out.println("call " + start + " " + end + " " + args[i] + " " + result);
      }
      if (network != null) {
        network.drain(10_000); // the late deliveries land now, or never
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
      case "insertData" -> s -> {
        s.insert(m[1], position(m[2], m[3]), java.util.Map.of("by", m[1]));
        return null;
      };
      case "update" -> s -> {
        java.util.Map<String, @Nullable Object> set = new java.util.HashMap<>();
        set.put("by", m[2]);
        set.put("n", null);
        s.update(m[1], set);
        return null;
      };
      case "lift" -> s -> s.delete(m[1], dev.arbor.core.Deletion.LIFT_CHILDREN);
      case "leaf" -> s -> s.delete(m[1], dev.arbor.core.Deletion.LEAF_ONLY);
      case "graft" -> s -> s.graft(m[1], LinearizabilityTest.grafted(m[2]));
      case "graftEntries" -> s -> s.graft(m[1],
          LinearizabilityTest.grafted(m[2]).entries().iterator());
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
