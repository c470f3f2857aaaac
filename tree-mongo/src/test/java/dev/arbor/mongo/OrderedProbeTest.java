package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The probe of whether the server stops an ordered bulk write at its first failed statement, run
 * by many stores at once. mongo-java-server goes on after a failed statement; a store that
 * wrongly took it for one that stops sent its optimistic claim in the same bulk write as its
 * steps, and the steps ran although the claim was refused (an insert applied, then planned again
 * under the lock: {@code DuplicateNodeException} on the caller's own new id, and siblings with
 * one rank).
 */
class OrderedProbeTest {
  @Test
  void probesSentAtOnceByManyStoresEachSeeTheServerAsItIs() throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreePattern.PARENT_REFERENCES.open(c).load(Tree.parse("r"));
    int threads = 8;
    for (int round = 0; round < 25; round++) {
      List<MongoTreeStore> stores = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        stores.add((MongoTreeStore) TreePattern.PARENT_REFERENCES.open(c));
      }
      CyclicBarrier start = new CyclicBarrier(threads);
      List<Boolean> verdicts = new CopyOnWriteArrayList<>();
      List<Thread> running = new ArrayList<>();
      for (MongoTreeStore s : stores) {
        Thread th = new Thread(() -> {
          try {
            start.await();
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
          verdicts.add(s.lock.ordered());
        });
        running.add(th);
        th.start();
      }
      for (Thread th : running) {
        th.join();
      }
      // the embedded server goes on after a failed statement, whoever else probes meanwhile
      assertEquals(java.util.Collections.nCopies(threads, false), verdicts, "round " + round);
    }
  }

  /**
   * Four writers with stores of their own hammer a 200-node tree (insert a leaf, move it, delete
   * it) from their first change on: no call fails, and the tree is sound.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void writersOpeningTogetherNeverFail(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Tree.Builder b = Tree.builder();
    Random shape = new Random(42);
    int nodes = 200;
    b.add("n0", null, java.util.Map.of());
    for (int i = 1; i < nodes; i++) {
      b.add("n" + i, "n" + shape.nextInt(i), java.util.Map.of());
    }
    TreeStore first = pattern.open(c);
    first.load(b.build());
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    CyclicBarrier start = new CyclicBarrier(4);
    for (int w = 0; w < 4; w++) {
      TreeStore store = pattern.open(c);
      int writer = w;
      Thread t = new Thread(() -> {
        Random random = new Random(writer);
        try {
          start.await();
          for (int i = 0; i < 10; i++) {
            String id = "w" + writer + "-" + i;
            store.insert(id, Position.lastChildOf("n" + random.nextInt(nodes)));
            store.move(id, Position.firstChildOf("n" + random.nextInt(nodes)));
            assertEquals(1, store.delete(id));
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertEquals(List.of(), failures.stream().map(String::valueOf).toList());
    assertEquals(List.of(), first.check());
    assertEquals(nodes, first.size());
  }
}
