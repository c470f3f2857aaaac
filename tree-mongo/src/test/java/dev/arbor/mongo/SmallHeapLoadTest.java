package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Streams a load, a graft and an export of a tree that does not fit in the client's heap: a
 * child JVM with {@code -Xmx}{@value #HEAP} loads {@value #NODES} generated nodes (about {@value
 * #PAD} bytes of attributes each) from a lazy iterator into the test server (which runs in this
 * JVM, or is the configured one), grafts as many again under a node, then reads them back with
 * {@code entries()}, checking every entry against the generators again; the same child fails with
 * {@link OutOfMemoryError} on {@code snapshot()}, which shows that the tree would not fit whole.
 */
class SmallHeapLoadTest {
  static final String HEAP = "48m";
  static final int NODES = 15_000;
  static final int PAD = 2_000;

  /**
   * The generated forest in preorder, made lazily: node i is a child of one of the last few open
   * nodes, so that about one node in fifty has children, up to 4 levels deep.
   */
  static Iterator<Node> generated(int nodes) {
    return generated("node-", nodes, 0);
  }

  /** The same shape, ids starting with {@code prefix}, depths from {@code base}. */
  static Iterator<Node> generated(String prefix, int nodes, int base) {
    String pad = "p".repeat(PAD);
    return new Iterator<>() {
      private final ArrayDeque<String> path = new ArrayDeque<>();
      private int i;

      @Override
      public boolean hasNext() {
        return i < nodes;
      }

      @Override
      public Node next() {
        int depth = i % 5_000 == 0 ? 0 : i % 500 == 0 ? 1 : i % 50 == 0 ? 2 : 3;
        while (path.size() > depth) {
          path.pop();
        }
        if (path.size() < depth) {
          depth = path.size();
        }
        String id = prefix + i;
        Node e = new Node(id, path.peek(), base + depth, Map.of("i", i, "pad", pad));
        path.push(id);
        i++;
        return e;
      }
    };
  }

  @Test
  void aStreamedLoadAndExportOfATreeThatDoesNotFitInTheHeap() throws Exception {
    for (TreePattern pattern : List.of(TreePattern.NESTED_SETS, TreePattern.CHILD_REFERENCES)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      String out = child(pattern, c, "stream");
      assertTrue(out.contains("loaded " + NODES) && out.contains("grafted " + NODES)
          && out.contains("exported " + 2 * NODES), out);
      System.out.println(pattern + ": " + out.strip());
      assertEquals(2 * NODES, c.countDocuments(MongoTreeStore.NODES));
      MongoTreeStore store = (MongoTreeStore) pattern.open(c);
      assertEquals(3, store.depth("node-" + (NODES - 1)));
      assertEquals(6, store.depth("more-" + (NODES - 1)));
      assertEquals(List.of(), store.check());
      if (pattern == TreePattern.NESTED_SETS) {
        String snapshot = child(pattern, c, "snapshot");
        assertTrue(snapshot.contains("OutOfMemoryError"), snapshot);
        System.out.println(pattern + ": " + snapshot.strip());
      }
    }
  }

  /** Runs {@link #main} in a child JVM with the small heap; returns its output. */
  private static String child(TreePattern pattern, MongoCollection<Document> c, String mode)
      throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx" + HEAP, "-XX:+UseSerialGC",
        "-cp", System.getProperty("java.class.path"), SmallHeapLoadTest.class.getName(),
        MongoTestServer.get().uri(), c.getNamespace().getDatabaseName(),
        c.getNamespace().getCollectionName(), pattern.name(), mode));
    long start = System.nanoTime();
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] output = p.getInputStream().readAllBytes();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child ends");
    String text = new String(output, StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), text);
    return text + " (child " + mode + ": " + (System.nanoTime() - start) / 1_000_000 + " ms)";
  }

  /**
   * The child: {@code uri database collection pattern mode}; mode {@code stream} loads and
   * exports, {@code snapshot} tries to read the tree whole.
   */
  public static void main(String[] args) {
    try (MongoClient client = MongoClients.create(MongoTestServer.settings(args[0]))) {
      MongoCollection<Document> c = client.getDatabase(args[1]).getCollection(args[2]);
      MongoTreeStore store = (MongoTreeStore) TreePattern.valueOf(args[3]).open(c);
      if (args[4].equals("snapshot")) {
        try {
          System.out.println("read whole: " + store.snapshot().size());
        } catch (OutOfMemoryError e) {
          System.out.println("snapshot: OutOfMemoryError");
        }
        return;
      }
      store.ensureIndexes();
      long t0 = System.nanoTime();
      long loaded = store.load(generated(NODES));
      System.out.println("loaded " + loaded + " in " + (System.nanoTime() - t0) / 1_000_000
          + " ms");
      t0 = System.nanoTime();
      String under = "node-" + (NODES - 5_000 + 500 + 50); // a node at depth 2, in the last root
      long grafted = store.graft(under, generated("more-", NODES, 0));
      System.out.println("grafted " + grafted + " in " + (System.nanoTime() - t0) / 1_000_000
          + " ms");
      t0 = System.nanoTime();
      // Expected: the load's entries, with the graft's after the subtree of 'under' begins.
      long exported = 0;
      Iterator<Node> expected = generated(NODES);
      try (Stream<Node> entries = store.entries()) {
        Iterator<Node> it = entries.iterator();
        boolean inGraft = false;
        Iterator<Node> graft = null;
        while (it.hasNext()) {
          Node e = it.next();
          if (!inGraft && e.id().startsWith("more-")) {
            inGraft = true;
            graft = generated("more-", NODES, 3);
          }
          if (inGraft && !e.id().startsWith("more-")) {
            inGraft = false;
          }
          Node x = inGraft ? graft.next() : expected.next();
          if (inGraft && x.parentId() == null) {
            x = new Node(x.id(), under, x.depth(), x.attributes());
          }
          if (!e.equals(x)) {
            throw new AssertionError("entry " + exported + ": " + e + " instead of " + x);
          }
          exported++;
        }
      }
      if (expected.hasNext()) {
        throw new AssertionError("only " + exported + " entries exported");
      }
      System.out.println("exported " + exported + " in " + (System.nanoTime() - t0) / 1_000_000
          + " ms, heap used at the end "
          + (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) / 1024
          + " KB of " + Runtime.getRuntime().maxMemory() / 1024 + " KB");
    }
  }
}
