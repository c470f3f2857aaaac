package dev.arbor.mongo;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.arbor.core.Fixtures;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Figures of the change protocol for docs/guarantees.md, measured, not asserted: round trips per
 * call (counted by a command listener, single caller, steady state), and under contention (three
 * writers and a reader on one tree) the reader's waits and each writer's share. Runs only when
 * asked: {@code mvn -B -q -pl tree-core,tree-mongo test -Dtest=ProtocolFigures
 * -Darbor.figures=true -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@EnabledIfSystemProperty(named = "arbor.figures", matches = "true")
class ProtocolFigures {

  /** Counts the commands a client sends while armed. */
  static final class Counter implements CommandListener {
    final AtomicLong commands = new AtomicLong();
    final List<String> trace = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    volatile boolean armed;

    @Override
    public void commandStarted(CommandStartedEvent event) {
      if (armed) {
        commands.incrementAndGet();
        if (Boolean.getBoolean("arbor.figures.trace")) {
          String c = event.getCommand().toJson();
          trace.add(c.substring(0, Math.min(c.length(), 400)));
        }
      }
    }

    @Override
    public void commandSucceeded(com.mongodb.event.CommandSucceededEvent event) {
      if (armed && Boolean.getBoolean("arbor.figures.trace")) {
        trace.add("  -> " + event.getCommandName() + " "
            + event.getElapsedTime(java.util.concurrent.TimeUnit.MILLISECONDS) + " ms");
      }
    }
  }

  record Call(String name, Consumer<TreeStore> run, Consumer<TreeStore> undo) {}

  @Test
  void roundTripsPerCall() {
    Counter counter = new Counter();
    try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new com.mongodb.ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(counter).build())) {
      List<Call> calls = List.of(
          new Call("insert a leaf", s -> s.insert("new", Position.lastChildOf("c")),
              s -> s.delete("new")),
          new Call("move a leaf", s -> s.move("e", Position.lastChildOf("h")),
              s -> s.move("e", Position.firstChildOf("d"))),
          new Call("move a subtree", s -> s.move("d", Position.lastChildOf("i")),
              s -> s.move("d", Position.after("c"))),
          new Call("delete a leaf", s -> s.delete("k"), s -> s.insert("k",
              Position.lastChildOf("i"))),
          new Call("ancestors", s -> s.ancestors("f"), s -> {}),
          new Call("children", s -> s.children("b"), s -> {}),
          new Call("descendants", s -> s.descendants("a"), s -> {}));
      StringBuilder out = new StringBuilder("\n| call | server |");
      for (TreePattern p : TreePattern.values()) {
        out.append(' ').append(p.name().toLowerCase(Locale.ROOT).replace('_', ' ')).append(" |");
      }
      out.append("\n|---|---|---|---|---|---|---|\n");
      for (Call call : calls) {
        for (boolean ordered : List.of(true, false)) {
          out.append("| ").append(call.name()).append(" | ")
              .append(ordered ? "MongoDB" : "mongo-java-server").append(" |");
          for (TreePattern p : TreePattern.values()) {
            MongoCollection<Document> c = client.getDatabase(MongoTestServer.get().database()
                .getName()).getCollection(MongoTestServer.get().freshCollection().getNamespace()
                .getCollectionName());
            MongoTreeStore s = (MongoTreeStore) p.open(c);
            s.lock.assumeOrdered(ordered);
            s.load(Tree.parse("a(b(c d(e f)) g(h)) i(j k)"));
            s.snapshot();
            long sum = 0;
            int runs = 5;
            for (int r = 0; r < runs; r++) {
              counter.commands.set(0);
              counter.armed = true;
              call.run().accept(s);
              counter.armed = false;
              sum += counter.commands.get();
              if (r == runs - 1 && !counter.trace.isEmpty()) {
                System.out.println(call.name() + " / " + p + " / ordered=" + ordered);
                counter.trace.forEach(t -> System.out.println("    " + t));
              }
              counter.trace.clear();
              call.undo().accept(s);
            }
            out.append(' ').append(String.format(Locale.ROOT, "%.1f", sum / (double) runs))
                .append(" |");
          }
          out.append('\n');
        }
      }
      System.out.println(out);
    }
  }

  @Test
  void contention() throws Exception {
    TreePattern pattern = TreePattern.NESTED_SETS;
    String name = MongoTestServer.get().freshCollection().getNamespace().getCollectionName();
    String db = MongoTestServer.get().database().getName();
    Tree.Builder b = Tree.builder();
    for (int i = 0; i < 2_000; i++) {
      b.add("n" + i, i == 0 ? null : "n" + ((i - 1) / 4));
    }
    Tree initial = b.build();
    List<MongoClient> clients = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      clients.add(MongoClients.create(MongoTestServer.settings(MongoTestServer.get().uri())));
    }
    try {
      pattern.open(clients.get(0).getDatabase(db).getCollection(name)).load(initial);
      AtomicBoolean running = new AtomicBoolean(true);
      List<Long> waits = new CopyOnWriteArrayList<>();
      long[] done = new long[3];
      ExecutorService pool = Executors.newFixedThreadPool(4);
      List<Future<?>> futures = new ArrayList<>();
      for (int w = 0; w < 3; w++) {
        int writer = w;
        TreeStore store = pattern.open(clients.get(w).getDatabase(db).getCollection(name));
        futures.add(pool.submit(() -> {
          Random random = new Random(writer);
          while (running.get()) {
            String x = "n" + random.nextInt(2_000);
            String y = "n" + random.nextInt(2_000);
            try {
              store.move(x, Fixtures.position(2 + random.nextInt(4), y));
            } catch (TreeException e) {
              // a cycle or a root anchor: it still took its turn
            }
            done[writer]++;
          }
          return null;
        }));
      }
      TreeStore reader = pattern.open(clients.get(3).getDatabase(db).getCollection(name));
      futures.add(pool.submit(() -> {
        Random random = new Random(99);
        while (running.get()) {
          long start = System.nanoTime();
          reader.descendants("n" + random.nextInt(50));
          waits.add((System.nanoTime() - start) / 1_000_000);
        }
        return null;
      }));
      Thread.sleep(Long.getLong("arbor.figures.seconds", 10) * 1_000);
      running.set(false);
      for (Future<?> f : futures) {
        f.get();
      }
      pool.shutdown();
      List<Long> sorted = new ArrayList<>(waits);
      Collections.sort(sorted);
      System.out.printf(Locale.ROOT, "%nnested sets, 2 000 nodes, 3 writers (random moves) and a"
          + " reader (descendants), %d s on 4 clients:%n  reads: %d, wait p50 %d ms, p99 %d ms,"
          + " max %d ms%n  changes per writer: %d, %d, %d%n",
          Long.getLong("arbor.figures.seconds", 10), sorted.size(),
          sorted.get(sorted.size() / 2), sorted.get((int) (sorted.size() * 0.99)),
          sorted.get(sorted.size() - 1), done[0], done[1], done[2]);
    } finally {
      clients.forEach(MongoClient::close);
    }
  }

  /**
   * Moves a 1 111-node subtree of an 11 111-node tree (ten children per node) back and forth on
   * every pattern, side by side in one run: the median time and the round trips per move.
   */
  @Test
  void subtreeMoves() {
    Counter counter = new Counter();
    Tree.Builder b = Tree.builder();
    b.add("n0", null);
    for (int i = 1; i < 11_111; i++) {
      b.add("n" + i, "n" + ((i - 1) / 10));
    }
    Tree tree = b.build();
    try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new com.mongodb.ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(counter).build())) {
      StringBuilder out = new StringBuilder("\nmove a 1 111-node subtree of 11 111 nodes"
          + " (embedded server, no pipeline updates):\n| pattern | median ms | min ms | max ms"
          + " | round trips |\n|---|---|---|---|---|\n");
      for (TreePattern p : TreePattern.values()) {
        MongoCollection<Document> c = client.getDatabase(MongoTestServer.get().database()
            .getName()).getCollection(MongoTestServer.get().freshCollection().getNamespace()
            .getCollectionName());
        TreeStore s = p.open(c);
        s.load(tree);
        List<Long> times = new ArrayList<>();
        long trips = 0;
        int runs = Integer.getInteger("arbor.figures.runs", 5);
        for (int r = 0; r < runs; r++) {
          counter.commands.set(0);
          counter.armed = true;
          long start = System.nanoTime();
          s.move("n1", Position.lastChildOf(r % 2 == 0 ? "n2" : "n0"));
          times.add((System.nanoTime() - start) / 1_000_000);
          counter.armed = false;
          trips += counter.commands.get();
          if (r == runs - 1) {
            counter.trace.forEach(t -> System.out.println(p + "    " + (t.length() > 200
                ? t.substring(0, 200) : t)));
          }
          counter.trace.clear();
        }
        Collections.sort(times);
        out.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %.1f |%n",
            p.name().toLowerCase(Locale.ROOT).replace('_', ' '), times.get(times.size() / 2),
            times.get(0), times.get(times.size() - 1), trips / (double) runs));
        c.drop();
      }
      System.out.println(out);
    }
  }

  /**
   * Materialized paths against an array of ancestors moving the same subtree (111 and 1 111
   * nodes of an 11 111-node tree, ten children per node), on collections with their indexes as
   * {@code ensureIndexes} makes them: the two moves timed back to back in every round, in
   * alternating order, and the median of the per-round ratios with its quartiles.
   */
  @Test
  void pathsAgainstAncestorsMove() {
    Tree.Builder b = Tree.builder();
    b.add("n0", null);
    for (int i = 1; i < 11_111; i++) {
      b.add("n" + i, "n" + ((i - 1) / 10));
    }
    Tree tree = b.build();
    TreePattern[] patterns = {TreePattern.ARRAY_OF_ANCESTORS, TreePattern.MATERIALIZED_PATHS};
    TreeStore[] stores = new TreeStore[2];
    List<MongoCollection<Document>> collections = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      collections.add(c);
      stores[i] = patterns[i].open(c);
      stores[i].load(tree);
      stores[i].ensureIndexes();
    }
    int rounds = Integer.getInteger("arbor.figures.runs", 31);
    StringBuilder out = new StringBuilder("\nmove the same subtree of 11 111 nodes (embedded server,"
        + " no pipeline updates), materialized paths over array of ancestors:\n"
        + "| subtree | array of ancestors, median ms | materialized paths, median ms"
        + " | ratio, median (quartiles) |\n|---|---|---|---|\n");
    for (String subject : List.of("n11", "n1")) {
      String parent = subject.equals("n1") ? "n0" : "n1";
      List<Long> aoa = new ArrayList<>();
      List<Long> mp = new ArrayList<>();
      List<Double> ratios = new ArrayList<>();
      for (int r = -3; r < rounds; r++) {
        long[] t = new long[2];
        for (int k = 0; k < 2; k++) {
          int i = (r & 1) == 0 ? k : 1 - k;
          long start = System.nanoTime();
          stores[i].move(subject, Position.lastChildOf((r & 1) == 0 ? "n3" : parent));
          t[i] = System.nanoTime() - start;
        }
        if (r >= 0) {
          aoa.add(t[0]);
          mp.add(t[1]);
          ratios.add((double) t[1] / t[0]);
        }
      }
      Collections.sort(aoa);
      Collections.sort(mp);
      Collections.sort(ratios);
      out.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.2f (%.2f-%.2f) |%n",
          subject.equals("n1") ? "1 111 nodes" : "111 nodes", aoa.get(rounds / 2) / 1e6,
          mp.get(rounds / 2) / 1e6, ratios.get(rounds / 2), ratios.get(rounds / 4),
          ratios.get(3 * rounds / 4)));
    }
    collections.forEach(MongoCollection::drop);
    System.out.println(out);
  }
}
