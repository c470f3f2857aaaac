package dev.arbor.cli;

import dev.arbor.core.Tree;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The big, regular tree of the small-heap client tests ({@link SmallHeapExportTest}, {@link
 * SmallHeapImportTest}): one root, folders of files, about 250 bytes of JSON a node.
 */
final class BigTrees {
  private BigTrees() {}

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
