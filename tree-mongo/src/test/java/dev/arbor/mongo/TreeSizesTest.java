package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Tree;
import java.util.List;
import java.util.Map;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

/**
 * {@link TreePattern#measure}: the total and largest of the documents a load writes, per pattern,
 * equal to the encoded sizes of the documents the store holds after a streamed load; the totals of
 * the patterns whose documents grow with depth are quadratic in a chain's depth.
 */
class TreeSizesTest {

  /** A small tree of every kind of node: roots, fan-out, depth, attributes, ids to escape. */
  static Tree sample() {
    return Tree.builder()
        .add("Books", null, Map.of("title", "Books", "shelf", 1))
        .add("Programming", "Books", Map.of("title", "Programming"))
        .add("Languages", "Programming",
            Map.of("title", "Languages", "examples", List.of("Java", "Go", "Rust")))
        .add("Databases", "Programming")
        .add("Mongo,DB \\ 5", "Databases", Map.of("stars", 4.5, "since", 2009L,
            "site", Map.of("url", "https://www.mongodb.com")))
        .add("dbm", "Databases", java.util.Collections.singletonMap("maintained", null))
        .add("Ŝtrange ids ✓", null)
        .add("x", "Ŝtrange ids ✓")
        .build();
  }

  /** The encoded sizes of the node documents (string {@code _id}s) of {@code c}: sum, largest. */
  private static long[] stored(MongoCollection<Document> c) {
    long total = 0;
    long largest = 0;
    long n = 0;
    for (RawBsonDocument d : c.withDocumentClass(RawBsonDocument.class)
        .find(Filters.type("_id", BsonType.STRING))) {
      int size = d.getByteBuffer().remaining();
      total += size;
      largest = Math.max(largest, size);
      n++;
    }
    return new long[] {total, largest, n};
  }

  @Test
  void theTotalsAreThoseOfTheDocumentsALoadWrites() {
    Tree tree = sample();
    TreeSizes sizes = TreePattern.measure(tree.entries().iterator());
    assertEquals(tree.size(), sizes.nodes());
    for (TreePattern pattern : TreePattern.values()) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      pattern.open(c).load(tree.entries().iterator());
      long[] stored = stored(c);
      assertEquals(tree.size(), stored[2], pattern.toString());
      assertEquals(new TreeSizes.Documents(stored[0], stored[1]), sizes.documents(pattern),
          pattern + ": " + sizes);
      assertEquals(stored[0], sizes.totalBytes(pattern));
      assertTrue(sizes.refusal(pattern).isEmpty());
    }
    assertEquals(List.of(TreePattern.PARENT_REFERENCES, TreePattern.CHILD_REFERENCES,
        TreePattern.NESTED_SETS), sizes.linearPatterns());
  }

  @Test
  void oneRootByHand() {
    // {_id: "a", parent: null, arborRank: 0L, arborOp: {v: 1L, s: 0}}: the document's 4-byte
    // length and final NUL; _id: type, "_id\0", int32 length, "a\0"; parent: type, "parent\0";
    // arborRank: type, "arborRank\0", int64; arborOp: type, "arborOp\0", a document of 5 bytes
    // holding v (type, "v\0", int64) and s (type, "s\0", int32).
    long id = 1 + 4 + 4 + 2;
    long mark = 1 + 8 + 5 + (1 + 2 + 8) + (1 + 2 + 4);
    long rank = 1 + 10 + 8;
    TreeSizes one = TreePattern.measure(Tree.builder().add("a", null).build().entries()
        .iterator());
    assertEquals(5 + id + (1 + 7) + rank + mark, one.totalBytes(TreePattern.PARENT_REFERENCES));
    assertEquals(5 + id + (1 + 9 + 5) + rank + mark,
        one.totalBytes(TreePattern.CHILD_REFERENCES)); // children: []
    assertEquals(5 + id + (1 + 7) + (1 + 10 + 5) + rank + mark,
        one.totalBytes(TreePattern.ARRAY_OF_ANCESTORS)); // parent: null, ancestors: []
    assertEquals(5 + id + (1 + 5) + rank + mark,
        one.totalBytes(TreePattern.MATERIALIZED_PATHS)); // path: null
    assertEquals(5 + id + (1 + 7) + (1 + 5 + 8) + (1 + 6 + 8) + (1 + 11 + 8) + mark,
        one.totalBytes(TreePattern.NESTED_SETS)); // parent, left, right, arborDepth
  }

  @Test
  void aChainsPathsAndAncestorsTotalTheSquareOfItsDepth() {
    int n = 3_000;
    int w = 6;
    Tree.Builder b = Tree.builder();
    String parent = null;
    for (int i = 0; i < n; i++) {
      String id = String.format("%0" + w + "d", i);
      b.add(id, parent);
      parent = id;
    }
    long t0 = System.nanoTime();
    TreeSizes sizes = TreePattern.measure(b.build().entries().iterator());
    long millis = (System.nanoTime() - t0) / 1_000_000;
    long id = 1 + 4 + 4 + w + 1;
    long mark = 32;
    long rank = 19;
    long parentElement = 1 + 7 + 4 + w + 1;
    // parent references: a root with a null parent, then n - 1 nodes naming theirs
    long parents = (5 + id + 8 + rank + mark) + (n - 1) * (5 + id + parentElement + rank + mark);
    assertEquals(parents, sizes.totalBytes(TreePattern.PARENT_REFERENCES));
    // materialized paths: the node at depth d has the path ",0,1,...,d-1," of 1 + d(w + 1)
    // bytes, a string element of 11 + those bytes; the root's path is null
    long pathBytes = (n - 1) + (long) (w + 1) * n * (n - 1) / 2;
    long paths = (5 + id + 6 + rank + mark) + (n - 1) * (5 + id + 11 + rank + mark) + pathBytes;
    assertEquals(paths, sizes.totalBytes(TreePattern.MATERIALIZED_PATHS));
    assertEquals(5 + id + 11 + rank + mark + 1 + (n - 1) * (w + 1),
        sizes.documents(TreePattern.MATERIALIZED_PATHS).largestBytes());
    // quadratic against linear: 31 MB of paths, 0.3 MB of parent references
    assertTrue(sizes.totalBytes(TreePattern.MATERIALIZED_PATHS) > 30_000_000L, sizes::toString);
    assertTrue(sizes.totalBytes(TreePattern.ARRAY_OF_ANCESTORS) > 30_000_000L, sizes::toString);
    for (TreePattern linear : sizes.linearPatterns()) {
      assertFalse(linear.documentsGrowWithDepth());
      assertTrue(sizes.totalBytes(linear) < 400_000L, sizes::toString);
    }
    assertTrue(millis < 5_000, "measured in " + millis + " ms");
  }

  @Test
  void aDocumentTooLargeIsRefusedAndStillCountedInTheTotal() {
    // three 6 MB ids in a chain
    String big = "z".repeat(6_000_000);
    Tree three = Tree.builder().add(big + "a", null).add(big + "b", big + "a")
        .add(big + "c", big + "b").build();
    TreeSizes sizes = TreePattern.measure(three.entries().iterator());
    for (TreePattern deep : List.of(TreePattern.MATERIALIZED_PATHS,
        TreePattern.ARRAY_OF_ANCESTORS)) {
      assertTrue(deep.documentsGrowWithDepth());
      assertEquals(deep.sizeRefusal(three.entries().iterator()).get().getMessage(),
          sizes.refusal(deep).get().getMessage());
      // the third node's path (12 MB) and own id pass 16 MB; the second node's ancestors and
      // parent do already
      String refused = sizes.refusal(deep).get().nodeId();
      assertTrue(refused.endsWith(deep == TreePattern.MATERIALIZED_PATHS ? "c" : "b"),
          () -> refused.substring(refused.length() - 1));
      assertTrue(sizes.documents(deep).largestBytes() > 18_000_000L, sizes::toString);
      assertTrue(sizes.totalBytes(deep) > 36_000_000L, sizes::toString); // 6 + 12 + 18 MB
    }
    for (TreePattern linear : sizes.linearPatterns()) {
      assertTrue(sizes.refusal(linear).isEmpty());
      assertTrue(sizes.totalBytes(linear) < 31_000_000L, sizes::toString); // 3 ids, 2 parents
    }
    assertEquals(3, sizes.linearPatterns().size());
  }
}
