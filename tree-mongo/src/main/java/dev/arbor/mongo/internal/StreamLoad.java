package dev.arbor.mongo.internal;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.nor;

import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.NodeTooLargeException;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.bson.Fits;
import dev.arbor.mongo.internal.bson.LoadEncoder;
import dev.arbor.mongo.internal.bson.NodeDocuments;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.layout.MaterializedPathLayout;
import dev.arbor.mongo.internal.layout.Ranks;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.protocol.Step;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BSONException;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Turns entries in preorder into a pattern's documents for a streamed load or graft, holding only
 * the path from the top of the stream to the current entry (one {@link Frame} per open node) and
 * the documents of one batch, never the whole tree. What a document needs from its ancestors (its
 * parent, rank, array of ancestors, path, depth, left number) comes from the frames; what it
 * learns only once its subtree is complete (a nested set's {@code right}, a {@code children}
 * array) is put into it if it is still in hand, else written by an idempotent late update ({@code
 * $set} by {@code _id}) sent with a later batch.
 *
 * <p>Each new document is marked with the load's version and step 0, so that the load's undo
 * (delete what it marked) removes it. A graft under an existing node needs writes of existing
 * documents too (the parent's {@code children} array, the nested-set numbers after the graft
 * point): {@link #fixes()} gives them, to run as the commit of the load, leaving out the new
 * documents.
 */
final class StreamLoad {
  /** Where documents go: inserted in one command per batch, and late updates of sent ones. */
  interface Sink {
    /**
     * Inserts {@code documents} (whose ids are {@code ids}) in one fenced command, refusing an
     * id that exists with a {@code DuplicateNodeException} naming it. It may return before the
     * command is done; a failure is then thrown by a later call.
     */
    void insert(List<BsonDocument> documents, List<String> ids);

    /** Sends updates of documents inserted earlier, in one fenced command, as {@link #insert}. */
    void update(List<WriteModel<BsonDocument>> updates);
  }

  /** One new node whose subtree is still open. */
  private static final class Frame {
    final String id;
    final int depth;
    long nextRank;
    /** The node's document while not sent (null once it is). */
    @Nullable Slot slot;
    /** Materialized paths: the length of the prefix before this node's segment. */
    int prefixLength;
    /** Nested sets: the left number. */
    long left;
    /** Child references: its children so far, and their bytes in an array. */
    @Nullable List<String> children;
    long childBytes;

    Frame(String id, int depth) {
      this.id = id;
      this.depth = depth;
    }
  }

  /** A document of the batch in hand: built, and encoded once final (or sent). */
  private static final class Slot {
    final String id;
    @Nullable Document doc;
    @Nullable BsonDocument encoded;
    /** The entry's attributes until it is encoded: to name one that does not encode. */
    @Nullable Map<String, ?> attributes;

    Slot(String id, Document doc, Map<String, ?> attributes) {
      this.id = id;
      this.doc = doc;
      this.attributes = attributes;
    }
  }

  private final MongoTreeStore store;
  private final TreePattern pattern;
  private final Sink sink;
  private final BsonDocument mark;
  private final long version;
  private final int batchSize;
  private final LoadEncoder encoder;
  private final ArrayDeque<Frame> path = new ArrayDeque<>();
  private final List<Slot> batch = new ArrayList<>();
  private final List<WriteModel<BsonDocument>> late = new ArrayList<>();
  private long batchBytes;

  /** The node grafted under, null for new roots. */
  private final @Nullable String parent;
  private final int baseDepth;
  private long baseNextRank;
  /** Array of ancestors: the ancestors of a top entry. */
  private final List<String> baseAncestors;
  /** Materialized paths: the path of the top frame's children (of top entries at the base). */
  private final StringBuilder prefix = new StringBuilder();
  /** Nested sets: the last number given; the first number of the graft. */
  private long counter;
  private final long graftPoint;
  /** Child references: the top entries under {@link #parent}, and how many it had. */
  private final List<String> baseChildren = new ArrayList<>();
  private long baseChildBytes;
  private final int existingChildren;
  private long count;

  /**
   * @param parentDoc the document of the node grafted under, null for new roots (or a load)
   * @param load whether this is a load into an empty store (nothing to read for the base)
   */
  StreamLoad(MongoTreeStore store, Reads r, @Nullable Document parentDoc, boolean load,
      long version, int batchSize, Sink sink) {
    this.store = store;
    this.pattern = store.pattern();
    this.sink = sink;
    this.version = version;
    this.mark = Step.mark(version, 0);
    this.batchSize = Math.max(1, batchSize);
    this.encoder = new LoadEncoder(store.collection.getCodecRegistry());
    this.parent = parentDoc == null ? null : idOf(parentDoc);
    List<String> ancestors = new ArrayList<>();
    int depth = 0;
    long point = 0;
    int existing = 0;
    if (parentDoc != null) {
      switch (pattern) {
        case ARRAY_OF_ANCESTORS -> {
          for (Object a : parentDoc.getList(store.names.ancestors, Object.class,
              List.of())) {
            ancestors.add(String.valueOf(a));
          }
          ancestors.add(parent);
        }
        case MATERIALIZED_PATHS -> {
          String p = parentDoc.getString(store.names.path);
          prefix.append(p == null ? "," : p).append(MaterializedPathLayout.escape(parent))
              .append(',');
        }
        case NESTED_SETS -> {
          point = ((Number) parentDoc.get(store.names.right)).longValue();
          depth = (int) ((Number) parentDoc.get(store.names.depth)).longValue() + 1;
        }
        case CHILD_REFERENCES -> existing = parentDoc.getList(store.names.children,
            Object.class, List.of()).size();
        default -> { }
      }
    } else if (pattern == TreePattern.NESTED_SETS && !load) {
      Document last = r.find(MongoTreeStore.NODES)
          .projection(Queries.fields(store.names.right))
          .sort(Sorts.descending(store.names.right)).limit(1).first();
      point = last == null ? 1 : ((Number) last.get(store.names.right)).longValue() + 1;
    } else if (pattern == TreePattern.NESTED_SETS) {
      point = 1;
    }
    this.baseAncestors = ancestors;
    this.baseDepth = depth;
    this.graftPoint = point;
    this.counter = point - 1;
    this.existingChildren = existing;
    this.baseNextRank = load || pattern == TreePattern.NESTED_SETS
        || (pattern == TreePattern.CHILD_REFERENCES && parent != null) ? 0 : rankAfter(r);
  }

  /** The rank after the last sibling the new top entries join, 0 in an empty group. */
  private long rankAfter(Reads r) {
    Bson group = switch (pattern) {
      case MATERIALIZED_PATHS -> eq(store.names.path,
          parent == null ? null : prefix.toString());
      // the roots, and any stale rank: all before
      case CHILD_REFERENCES -> exists(store.names.rank);
      default -> eq(store.names.parent, parent);
    };
    Document last = r.find(and(MongoTreeStore.NODES, group))
        .projection(Queries.fields(store.names.rank)).sort(Sorts.descending(store.names.rank))
        .limit(1).first();
    return last != null && last.get(store.names.rank) instanceof Number n
        ? n.longValue() + Ranks.GAP
        : 0;
  }

  /** The number of entries taken. */
  long count() {
    return count;
  }

  /**
   * Takes the next entry: checks its attributes and its place, builds its document, and sends a
   * batch when one is full.
   *
   * @throws TreeException if the entry is out of preorder, or cannot be stored
   */
  void add(Node e) {
    TreeStores.checkId(e.id());
    store.ids.checkNew(e.id());
    // the names now; the values encode with the whole document, once (see encode)
    store.checkAttributeNames(e.id(), e.attributes());
    while (!path.isEmpty() && !path.peek().id.equals(e.parentId())) {
      close(path.pop());
    }
    Frame up = e.parentId() == null ? null : path.peek();
    if (e.parentId() != null && up == null) {
      throw TreeStores.notInPreorder(e, count);
    }
    Frame f = new Frame(e.id(), up == null ? baseDepth : up.depth + 1);
    long rank;
    if (up == null) {
      rank = baseNextRank;
      baseNextRank += Ranks.GAP;
    } else {
      rank = up.nextRank;
      up.nextRank += Ranks.GAP;
    }
    String parentId = up == null ? parent : up.id;
    Document structure = new Document();
    switch (pattern) {
      case PARENT_REFERENCES -> structure.append(store.names.parent, parentId)
          .append(store.names.rank, rank);
      case ARRAY_OF_ANCESTORS -> {
        List<String> ancestors = new ArrayList<>(baseAncestors.size() + path.size());
        ancestors.addAll(baseAncestors);
        var down = path.descendingIterator();
        while (down.hasNext()) {
          ancestors.add(down.next().id);
        }
        structure.append(store.names.parent, parentId)
            .append(store.names.ancestors, ancestors).append(store.names.rank, rank);
      }
      case MATERIALIZED_PATHS -> {
        String p = parentId == null ? null : prefix.toString();
        f.prefixLength = prefix.length();
        prefix.append(prefix.length() == 0 ? "," : "")
            .append(MaterializedPathLayout.escape(e.id())).append(',');
        structure.append(store.names.path, p).append(store.names.rank, rank);
      }
      case NESTED_SETS -> {
        f.left = ++counter;
        structure.append(store.names.parent, parentId)
            .append(store.names.left, f.left).append(store.names.right, 0L)
            .append(store.names.depth, (long) f.depth);
      }
      case CHILD_REFERENCES -> {
        addChild(up, e.id());
        structure.append(store.names.children, List.of());
        if (parentId == null) {
          structure.append(store.names.rank, rank);
        }
      }
    }
    Document d = NodeDocuments.newDocument(e.id(), structure, e.attributes());
    d.put(Step.MARK, mark);
    Slot slot = new Slot(e.id(), d, e.attributes());
    f.slot = slot;
    path.push(f);
    batch.add(slot);
    count++;
    if (!lateFields()) {
      encode(slot);
    }
    if (batch.size() >= batchSize || batchBytes > Encoded.MAX_BATCH) {
      flush();
    }
  }

  /** Whether the pattern's documents get a field when their subtree closes. */
  private boolean lateFields() {
    return pattern == TreePattern.NESTED_SETS || pattern == TreePattern.CHILD_REFERENCES;
  }

  private void addChild(@Nullable Frame up, String id) {
    int max = store.capabilities.maxChildren();
    long bytes = 1 + 7 + 1 + 4 + utf8(id) + 1;
    if (up == null) {
      if (parent == null) {
        return; // a root
      }
      if (existingChildren + baseChildren.size() >= max) {
        throw tooManyChildren(parent, existingChildren + baseChildren.size() + 1, max);
      }
      baseChildren.add(id);
      baseChildBytes += bytes;
      if (baseChildBytes > Fits.MAX_NODE) {
        throw arrayTooLarge(parent, baseChildBytes);
      }
      return;
    }
    if (up.children == null) {
      up.children = new ArrayList<>();
    }
    if (up.children.size() >= max) {
      throw tooManyChildren(up.id, up.children.size() + 1, max);
    }
    up.children.add(id);
    up.childBytes += bytes;
    if (up.childBytes > Fits.MAX_NODE) {
      throw arrayTooLarge(up.id, up.childBytes);
    }
  }

  private static TreeException tooManyChildren(String id, long n, int max) {
    return new TreeException("Cannot store the entries: '" + id + "' would have " + n
        + " children, more than TreeOptions.withMaxChildren allows (" + max + "); a node with"
        + " this many children needs parent references, an array of ancestors, materialized"
        + " paths or nested sets. Nothing was written.");
  }

  private NodeTooLargeException arrayTooLarge(String id, long bytes) {
    return new NodeTooLargeException(id, bytes, "Cannot store node '" + id + "' in the "
        + pattern + " pattern: its children array would be at least " + bytes + " bytes of"
        + " BSON, past MongoDB's 16 MB limit; PARENT_REFERENCES, ARRAY_OF_ANCESTORS,"
        + " MATERIALIZED_PATHS, NESTED_SETS hold such a node. Nothing was written.");
  }

  /** The node of {@code f} has no more children coming: its late fields are known. */
  private void close(Frame f) {
    if (pattern == TreePattern.MATERIALIZED_PATHS) {
      prefix.setLength(f.prefixLength);
      return;
    }
    if (!lateFields()) {
      return;
    }
    String field;
    Object value;
    if (pattern == TreePattern.NESTED_SETS) {
      field = store.names.right;
      value = ++counter;
    } else {
      if (f.children == null) {
        if (f.slot != null) {
          encode(f.slot);
        }
        return;
      }
      field = store.names.children;
      value = f.children;
    }
    if (f.slot != null && f.slot.doc != null) {
      f.slot.doc.put(field, value);
      encode(f.slot);
    } else {
      BsonValue v = value instanceof Long l ? new BsonInt64(l) : strings(f.children);
      // by _id and this load's mark: a stale holder's update never reaches a later node; and
      // by the scope equality, as every command of a scoped store (a shard key on the scope
      // field routes it to the tree's shard)
      BsonDocument q = store.scope == null ? new BsonDocument() : store.scope.equality();
      late.add(new UpdateOneModel<>(q.append(MongoTreeStore.ID, key(f.id))
          .append(Step.MARK + ".v", new BsonInt64(version)),
          store.ids.update(new BsonDocument("$set", new BsonDocument(field, v))),
          Step.simpleUpdate()));
    }
    f.slot = null;
  }

  private static BsonArray strings(List<String> ids) {
    BsonArray a = new BsonArray();
    for (String id : ids) {
      a.add(new BsonString(id));
    }
    return a;
  }

  /** The stored {@code _id} of node {@code id}. */
  private BsonValue key(String id) {
    return store.scope == null ? store.ids.key(id) : store.scope.nodeKey(id);
  }

  /** Encodes a slot's document once, checking its size. */
  private void encode(Slot s) {
    Document d = s.doc;
    if (d == null) {
      return;
    }
    BsonDocument b;
    try {
      b = store.scope == null ? (store.ids.isString() ? encoder.encode(d)
          : store.ids.document(d.toBsonDocument(BsonDocument.class,
              store.collection.getCodecRegistry())))
          : store.scope.stored(d.toBsonDocument(BsonDocument.class,
              store.collection.getCodecRegistry()));
    } catch (CodecConfigurationException | IllegalArgumentException | BSONException ex) {
      if (s.attributes != null) {
        store.checkAttributes(s.id, s.attributes); // names the attribute that does not encode
      }
      throw ex;
    }
    int size = Encoded.size(b);
    if (size > Fits.MAX_NODE) {
      throw new NodeTooLargeException(s.id, size, "Cannot store node '" + s.id + "' in the "
          + pattern + " pattern: its document would be " + size + " bytes of BSON, past"
          + " MongoDB's 16 MB limit (its attributes" + (pattern == TreePattern.ARRAY_OF_ANCESTORS
              || pattern == TreePattern.MATERIALIZED_PATHS ? ", and its "
              + (pattern == TreePattern.ARRAY_OF_ANCESTORS ? "array of ancestors" : "path")
              + ", which grows with its depth" : "") + "). Nothing was written.");
    }
    s.encoded = b;
    s.doc = null;
    s.attributes = null;
    batchBytes += size;
  }

  /**
   * Sends the batch in hand: the documents go in insert commands of at most {@link
   * Encoded#MAX_BATCH} bytes (an id that exists already is refused by the server's unique {@code
   * _id} index, and the sink names it), then the late updates. The open nodes' documents still
   * waiting for a late field stay in hand for a later batch while they are few (at most an eighth
   * of a batch: a bushy tree's open path), so that they go in complete; beyond that they are sent
   * with placeholders, completed later.
   */
  void flush() {
    List<Slot> carried = carried();
    if (batch.size() > carried.size()) {
      if (!carried.isEmpty()) {
        java.util.Set<Slot> kept = java.util.Collections.newSetFromMap(
            new java.util.IdentityHashMap<>());
        kept.addAll(carried);
        batch.removeIf(kept::contains);
      }
      for (Slot s : batch) {
        encode(s);
      }
      List<BsonDocument> docs = new ArrayList<>();
      List<String> names = new ArrayList<>();
      long bytes = 0;
      for (Slot s : batch) {
        int size = Encoded.size(s.encoded);
        if (!docs.isEmpty() && bytes + size > Encoded.MAX_BATCH) {
          sink.insert(docs, names);
          docs = new ArrayList<>();
          names = new ArrayList<>();
          bytes = 0;
        }
        docs.add(s.encoded);
        names.add(s.id);
        bytes += size;
      }
      sink.insert(docs, names);
      for (Frame f : path) {
        if (f.slot != null && f.slot.doc == null) {
          f.slot = null; // sent
        }
      }
      batch.clear();
      batch.addAll(carried);
      batchBytes = 0;
    }
    int most = Math.max(1, Math.min(batchSize, Encoded.MAX_BATCH_COUNT - 1));
    for (int from = 0; from < late.size(); from += most) {
      sink.update(new ArrayList<>(late.subList(from, Math.min(late.size(), from + most))));
    }
    late.clear();
  }

  /**
   * The documents of open nodes that wait for a late field, to keep in hand at a flush: none
   * if they are more than an eighth of a batch (a deep path), or the pattern has no late field.
   */
  private List<Slot> carried() {
    List<Slot> open = new ArrayList<>();
    if (!lateFields()) {
      return open;
    }
    for (Frame f : path) {
      if (f.slot != null && f.slot.doc != null) {
        if (open.size() >= batchSize / 8) {
          return List.of();
        }
        open.add(f.slot);
      }
    }
    return open;
  }

  /** The end of the stream: closes every open node and sends what is in hand. */
  void finish() {
    while (!path.isEmpty()) {
      close(path.pop());
    }
    flush();
  }

  /**
   * The writes of existing documents that make the new ones part of the tree, leaving the new
   * documents out: the parent's {@code children} array gets the top entries (child references);
   * every number from the graft point on moves right by twice the nodes grafted (nested sets).
   * Empty for the other patterns, and for new roots.
   */
  List<Step> fixes() {
    List<Step> steps = new ArrayList<>();
    if (parent == null || count == 0) {
      return steps;
    }
    Bson old = nor(and(eq(Step.MARK + ".v", version), eq(Step.MARK + ".s", 0)));
    if (pattern == TreePattern.CHILD_REFERENCES) {
      steps.add(new Step.Update(filter(and(eq(MongoTreeStore.ID, parent), old)),
          store.ids.update(bson(Updates.pushEach(store.names.children, baseChildren))), false,
          false));
    } else if (pattern == TreePattern.NESTED_SETS) {
      long shift = 2 * count;
      for (String f : List.of(store.names.left, store.names.right)) {
        steps.add(new Step.Update(filter(and(MongoTreeStore.NODES, gte(f, graftPoint), old)),
            bson(Updates.inc(f, shift)), true, false));
      }
    }
    return steps;
  }

  private BsonDocument filter(Bson f) {
    return store.scope == null ? store.ids.filter(bson(f))
        : store.scope.filter(f, store.collection.getCodecRegistry());
  }

  private BsonDocument bson(Bson b) {
    return b.toBsonDocument(BsonDocument.class, store.collection.getCodecRegistry());
  }

  /** The bytes of {@code s} in UTF-8. */
  private static long utf8(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
  }
}
