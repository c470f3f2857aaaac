package dev.arbor.mongo.internal.read;

import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;

import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Problem;
import dev.arbor.core.TreeEvent;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.MistypedId;
import dev.arbor.mongo.internal.bson.NodeIds;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.layout.Layouts;
import dev.arbor.mongo.internal.protocol.Outcome;
import dev.arbor.mongo.internal.protocol.Reads;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * A store's {@code check()} and {@code repair()}: one scan of every document, checked by the
 * pattern ({@link Layout#checkDocuments}) after the layout ({@link Layouts}); and a
 * repair that completes an interrupted change, then rewrites the derived fields in one change.
 */
public final class TreeCheck {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(MongoTreeStore.class);
  private final MongoTreeStore store;

  public TreeCheck(MongoTreeStore store) {
    this.store = store;
  }

  /** The problems of the tree, read isolated. */
  public List<Problem> check() {
    return store.readAsItIs(this::checkNow);
  }

  private List<Problem> checkNow(Reads r) {
    List<Problem> problems = new ArrayList<>();
    Map<String, Document> byId = new LinkedHashMap<>();
    // Every document but Arbor's lock and journal: one whose _id is not a string is not a node
    // the store can read, and is reported. Read in batches, and each kept with only what the
    // checks read (the structural fields of every pattern, its values shared with equal ones
    // read before), so that a tree of hundreds of thousands of nodes is checked in a small
    // heap; the first is kept whole, for the message that lists its fields.
    Set<String> structure = new HashSet<>();
    for (TreePattern p : TreePattern.values()) {
      structure.addAll(Layouts.fields(p, store.names));
    }
    Map<Object, Object> shared = new HashMap<>();
    try (MongoCursor<Document> docs = r.find(Filters.exists(ID + ".arbor", false))
        .batchSize(CHECK_BATCH).iterator()) {
      while (docs.hasNext()) {
        Document d = docs.next();
        Object id = d.get(ID);
        if (!(id instanceof String s) || s.isEmpty()) {
          problems.add(new Problem(NodeIds.shown(id instanceof MistypedId m ? m.value() : id),
              notANodeId(id, d)));
          continue;
        }
        byId.put(s, byId.isEmpty() ? d : slim(d, structure, shared));
      }
    }
    Problem layout = Layouts.problem(store.pattern(), byId.values(), store.collectionName,
        store.names);
    if (layout != null) { // the pattern's own checks would only list its missing fields
      problems.add(0, layout);
      return problems;
    }
    store.layout.checkDocuments(byId, problems);
    return problems;
  }

  /** The batch size of the check's scan. */
  private static final int CHECK_BATCH = 1_000;

  /**
   * {@code d} with only its {@code _id} and the fields in {@code keep}, in a {@link SlimDocument};
   * each name, each string or array value and each string in an array replaced by an equal one
   * in {@code shared} if there is one (siblings share their parent, path and ancestors, and every
   * document below a node names it).
   */
  private static Document slim(Document d, Set<String> keep, Map<Object, Object> shared) {
    int n = 0;
    for (String k : d.keySet()) {
      n += k.equals(ID) || keep.contains(k) ? 1 : 0;
    }
    String[] keys = new String[n];
    Object[] values = new Object[n];
    int i = 0;
    for (Map.Entry<String, Object> e : d.entrySet()) {
      if (e.getKey().equals(ID) || keep.contains(e.getKey())) {
        Object v = e.getValue();
        keys[i] = (String) shared.computeIfAbsent(e.getKey(), x -> x);
        if (v instanceof List<?> list) {
          // its strings shared too: an array of ancestors names each ancestor in every document
          // below it
          List<Object> elements = new ArrayList<>(list.size());
          for (Object element : list) {
            elements.add(element instanceof String ? shared.computeIfAbsent(element, x -> x)
                : element);
          }
          v = elements;
        }
        values[i++] = v instanceof String && !e.getKey().equals(ID) || v instanceof List<?>
            ? shared.computeIfAbsent(v, x -> x) : v;
      }
    }
    // One array of names for every document with the same ones.
    return new SlimDocument((String[]) shared.computeIfAbsent(new Names(keys), x -> keys),
        values);
  }

  /** An array of field names as a key of the shared values: equal when the names are. */
  private record Names(String[] names) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Names other && java.util.Arrays.equals(names, other.names);
    }

    @Override
    public int hashCode() {
      return java.util.Arrays.hashCode(names);
    }
  }

  /**
   * Completes a stuck or interrupted change, then, under the lock, rewrites the derived and
   * missing structural fields from the authoritative ones in one all-or-nothing change, and
   * returns what {@link #check()} still finds.
   */
  public List<Problem> repair() {
    store.requireLayout(); // never rewrites a collection into another pattern: convert does
    String stuck = store.lock.retryStuck();
    if (stuck != null) {
      return List.of(new Problem("", stuck));
    }
    store.lock.recover();
    store.forget();
    long[] rewritten = new long[1];
    Outcome o = store.change("repair", null, c -> {
      List<Document> docs = new ArrayList<>();
      // Natural order: siblings without a rank are ranked in insertion order, whatever index a
      // server would otherwise choose for the scan.
      c.find(NODES).sort(new Document("$natural", 1)).into(docs);
      // only nodes: a document whose _id is not of the tree's id type (check() lists it) is
      // neither ranked nor rewritten
      docs.removeIf(d -> !(d.get(MongoTreeStore.ID) instanceof String s) || s.isEmpty());
      store.layout.planRepair(c, docs);
      rewritten[0] = c.steps().size();
    });
    if (o.version() >= 0) {
      LOG.info("Tree '{}': repair rewrote {} documents", store.collectionName, rewritten[0]);
      store.tell(new TreeEvent(TreeEvent.Kind.REPAIR, null, null, null, null, rewritten[0],
          o.version()));
    }
    return check();
  }

  /**
   * What check() says of a document whose {@code _id} is not one of the tree's ids: in the words
   * of the tree's id type ("_id is not a long: the double 1.0"), and what an id of another of
   * Arbor's id types tells.
   */
  private String notANodeId(Object stored, Document d) {
    Object id = stored instanceof MistypedId m ? m.value() : stored;
    dev.arbor.mongo.NodeIdType type = store.ids.type();
    String scoped = scopedTree(id, d);
    if (type == dev.arbor.mongo.NodeIdType.STRING || id == null) {
      return "_id is not a non-empty string" + (scoped.isEmpty() ? otherIdType(id) : scoped);
    }
    MistypedId m = new MistypedId(id, type);
    String other = !scoped.isEmpty() ? scoped
        : NodeIds.typeOf(id) == type ? "" : otherIdType(id);
    return "_id is not " + MistypedId.article(type) + ": " + m.description() + (!other.isEmpty()
        ? other : m.candidates().isEmpty() ? ""
        : " (another form of '" + String.join("' or '", m.candidates()) + "'; repair() does"
            + " not rewrite an _id: write the document again with " + MistypedId.article(type)
            + " _id)");
  }

  /**
   * What the {@code _id} {@code {s: value, id: nodeId}} of a document that also holds {@code
   * field: value} tells: a node of a scoped tree ({@code TreeOptions.withScope(field, value)}),
   * which an unscoped store does not read; or "".
   */
  private static String scopedTree(@Nullable Object id, Document d) {
    if (!(id instanceof Document key) || key.size() != 2 || !key.containsKey(Scope.NODE)
        || !key.containsKey(Scope.S)) {
      return "";
    }
    Object value = key.get(Scope.S);
    for (Map.Entry<String, Object> e : d.entrySet()) {
      if (!e.getKey().equals(ID) && java.util.Objects.equals(e.getValue(), value)) {
        String shown = value instanceof String s ? "\"" + s + "\"" : String.valueOf(value);
        return " (a node of the tree of scope " + shown + "? a store opened with"
            + " TreeOptions.withScope(\"" + e.getKey() + "\", " + shown + ") reads it; do not mix"
            + " scoped and unscoped stores in one collection)";
      }
    }
    return "";
  }

  /**
   * What an {@code _id} of one of Arbor's other id types tells (a node of a tree stored with that
   * type, which a store opened with it reads), or "".
   */
  private static String otherIdType(Object id) {
    dev.arbor.mongo.NodeIdType type = NodeIds.typeOf(id);
    return type == null || type == dev.arbor.mongo.NodeIdType.STRING ? ""
        : " (a node of a tree of " + type.name().toLowerCase(java.util.Locale.ROOT)
            .replace("_", "") + " ids? a store opened with " + NodeIds.option(type) + " reads it)";
  }
}
