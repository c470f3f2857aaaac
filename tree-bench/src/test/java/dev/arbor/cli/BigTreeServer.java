package dev.arbor.cli;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.arbor.core.Tree;
import dev.arbor.embedded.EmbeddedMongo;
import dev.arbor.mongo.TreePattern;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A test server in its own JVM: starts an embedded MongoDB, loads into collection {@code big} of
 * database {@code arbor} one tree of {@code nodes} nodes per pattern named, prints {@code ready
 * <uri>} and serves until its standard input closes. Arguments: nodes, files per folder,
 * patterns.
 */
public final class BigTreeServer {
  private BigTreeServer() {}

  /** Starts the server; see the class documentation. */
  public static void main(String[] args) throws Exception {
    int nodes = Integer.parseInt(args[0]);
    int perFolder = Integer.parseInt(args[1]);
    Tree tree = tree(nodes, perFolder);
    try (EmbeddedMongo server = EmbeddedMongo.start();
        MongoClient client = MongoClients.create(server.uri())) {
      for (int i = 2; i < args.length; i++) {
        TreePattern pattern = TreePattern.valueOf(args[i]);
        long start = System.nanoTime();
        pattern.open(client.getDatabase("arbor").getCollection(args[i])).load(tree);
        System.out.println("loaded " + args[i] + " in "
            + (System.nanoTime() - start) / 1_000_000 + " ms");
      }
      tree = null;
      System.out.println("ready " + server.uri());
      System.out.flush();
      while (System.in.read() >= 0) {
        // serve until the test closes our input
      }
    }
  }

  /**
   * One root, folders of {@code perFolder} files each, about 200 bytes of attributes per node: a
   * tree whose JSON is about 250 bytes a node.
   */
  static Tree tree(int nodes, int perFolder) {
    Tree.Builder b = Tree.builder().add("root", null, Map.of("kind", "root"));
    String note = "x".repeat(150);
    int folder = -1;
    String folderId = null;
    for (int n = 1; n < nodes; n++) {
      if ((n - 1) % (perFolder + 1) == 0) {
        folder++;
        folderId = String.format("folder-%06d", folder);
        b.add(folderId, "root", attributes(n, note));
      } else {
        b.add(folderId + "/file-" + n, folderId, attributes(n, note));
      }
    }
    return b.build();
  }

  private static Map<String, Object> attributes(int n, String note) {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("size", 10_000_000_000L + n);
    a.put("owner", "user" + (n % 97));
    a.put("note", note + n);
    return a;
  }
}
