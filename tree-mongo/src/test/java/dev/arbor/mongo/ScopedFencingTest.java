package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.Document;

/**
 * {@link FencingTest} on one of two trees in one collection: every holder, stalled or live, and
 * every taker-over is a store of tree {@code "t1"}, while a tree with overlapping ids under
 * another scope value shares the collection; the lock each one fences with, takes over and
 * renews is its own tree's, and the other tree's documents and lock are untouched by every case.
 */
class ScopedFencingTest extends FencingTest {
  private static final String FIELD = "tenant";
  private static final String OTHER = "a(b(c d) x) i(j) n0 n1 z";

  @Override
  ServerCapabilities options(ServerCapabilities capabilities) {
    return capabilities.scope(FIELD, "t1");
  }

  @Override
  MongoCollection<Document> fresh() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreePattern.MATERIALIZED_PATHS.open(c, TreeOptions.defaults().withScope(FIELD, "other"))
        .load(Tree.parse(OTHER));
    loaded.put(c.getNamespace().getCollectionName(), others(c));
    return c;
  }

  @Override
  long nodes(MongoCollection<Document> c) {
    return c.countDocuments(Filters.and(Filters.eq(FIELD, "t1"), Filters.exists("_id.id")));
  }

  /** The other tree's raw documents, lock included, as loaded, by collection. */
  private final Map<String, List<Document>> loaded = new ConcurrentHashMap<>();

  private static List<Document> others(MongoCollection<Document> c) {
    return c.find(Filters.eq(FIELD, "other")).sort(Sorts.ascending("_id"))
        .into(new ArrayList<>());
  }

  @Override
  void verifyOthers(MongoCollection<Document> c) {
    List<Document> before = loaded.get(c.getNamespace().getCollectionName());
    assertEquals(Tree.parse(OTHER).size() + 1, before.size(), "the other tree's nodes and lock");
    assertEquals(before, others(c), "the other tree's documents changed");
    assertEquals(Tree.parse(OTHER).toString(), TreePattern.MATERIALIZED_PATHS.open(c,
        TreeOptions.defaults().withScope(FIELD, "other")).snapshot().toString());
  }
}
