package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.FieldNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * An oracle for the stored documents, independent of the stores' code: the structural fields each
 * pattern must hold for a given tree, computed from the tree alone, compared with what is in the
 * collection. Sibling ranks are compared by order only.
 */
final class StoredLayout {
  private StoredLayout() {}

  /** Asserts that the raw documents of {@code collection} hold {@code tree} in the pattern. */
  static void assertLayout(TreePattern pattern, Tree tree, MongoCollection<Document> collection) {
    assertLayout(pattern, tree, collection.find(MongoTreeStore.NODES));
  }

  /** Asserts that the node documents {@code nodes} (ids as node ids) hold {@code tree}. */
  static void assertLayout(TreePattern pattern, Tree tree, Iterable<Document> nodes) {
    assertLayout(pattern, tree, nodes, FieldNames.DEFAULTS);
  }

  /**
   * Asserts that the node documents {@code nodes} (ids as node ids) hold {@code tree}, with the
   * structural fields named {@code names}.
   */
  static void assertLayout(TreePattern pattern, Tree tree, Iterable<Document> nodes,
      FieldNames names) {
    Map<String, Document> docs = new HashMap<>();
    for (Document d : nodes) {
      docs.put(d.getString("_id"), d);
    }
    assertEquals(tree.size(), docs.size(), "number of documents");
    Map<String, List<String>> ancestors = new HashMap<>();
    Map<String, Integer> left = new HashMap<>();
    Map<String, Integer> right = new HashMap<>();
    numberIntervals(tree, left, right);
    for (Node e : tree.entries()) {
      List<String> chain = new ArrayList<>();
      if (e.parentId() != null) {
        chain.addAll(ancestors.get(e.parentId()));
        chain.add(e.parentId());
      }
      ancestors.put(e.id(), chain);
      Document d = docs.get(e.id());
      String where = pattern + " document of '" + e.id() + "': " + d;
      assertTrue(d != null, where);
      switch (pattern) {
        case PARENT_REFERENCES -> assertEquals(e.parentId(), d.get(names.parent), where);
        case CHILD_REFERENCES -> assertEquals(tree.children(e.id()), d.get(names.children), where);
        case ARRAY_OF_ANCESTORS -> {
          assertEquals(e.parentId(), d.get(names.parent), where);
          assertEquals(chain, d.get(names.ancestors), where);
        }
        case MATERIALIZED_PATHS -> assertEquals(path(chain), d.get(names.path), where);
        case NESTED_SETS -> {
          assertEquals(e.parentId(), d.get(names.parent), where);
          assertEquals(left.get(e.id()), ((Number) d.get(names.left)).intValue(), where);
          assertEquals(right.get(e.id()), ((Number) d.get(names.right)).intValue(), where);
        }
      }
    }
    if (pattern != TreePattern.CHILD_REFERENCES && pattern != TreePattern.NESTED_SETS) {
      // siblings' ranks increase in sibling order
      Map<String, List<String>> children = new HashMap<>();
      for (Node e : tree.entries()) {
        children.computeIfAbsent(e.parentId(), k -> new ArrayList<>()).add(e.id());
      }
      for (List<String> siblings : children.values()) {
        for (int i = 1; i < siblings.size(); i++) {
          long before = ((Number) docs.get(siblings.get(i - 1)).get(names.rank)).longValue();
          long after = ((Number) docs.get(siblings.get(i)).get(names.rank)).longValue();
          assertTrue(before < after, "rank of " + siblings.get(i - 1) + " < rank of "
              + siblings.get(i));
        }
      }
    }
  }

  /** The manual's path string, ids escaped as Arbor documents: '\' → '\\', ',' → '\,'. */
  static String path(List<String> ancestors) {
    if (ancestors.isEmpty()) {
      return null;
    }
    StringBuilder sb = new StringBuilder(",");
    for (String a : ancestors) {
      sb.append(a.replace("\\", "\\\\").replace(",", "\\,")).append(',');
    }
    return sb.toString();
  }

  /** Nested-set numbers of a forest: a counter visiting each node twice, 1-based. */
  static void numberIntervals(Tree tree, Map<String, Integer> left, Map<String, Integer> right) {
    int counter = 0;
    List<Node> open = new ArrayList<>();
    for (Node e : tree.entries()) {
      while (!open.isEmpty() && open.get(open.size() - 1).depth() >= e.depth()) {
        right.put(open.remove(open.size() - 1).id(), ++counter);
      }
      left.put(e.id(), ++counter);
      open.add(e);
    }
    while (!open.isEmpty()) {
      right.put(open.remove(open.size() - 1).id(), ++counter);
    }
  }
}
