package dev.arbor.mongo.internal.bson;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.MongoTreeStore;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.CollectibleCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * One tree of a collection that holds several ({@link TreeOptions#withScope}): the one place that
 * knows how a scoped tree is stored. Every node document of the tree carries {@code field: value}
 * and has the {@code _id} {@code {s: value, id: nodeId}}, so the same node id may exist in two
 * trees; the tree's lock, journal parts and insert fences carry the field too and have {@code s:
 * value} in their {@code _id}.
 *
 * <p>Stores keep building their queries on {@code _id} = the node id: {@link #filter} rewrites
 * each filter to the stored form and adds the scope equality, and the collection a scoped store
 * reads through ({@link #collection}) decodes node documents back to {@code _id} = the node id,
 * without the scope field.
 */
public final class Scope {
  /** The key of the scope value in scoped {@code _id}s. */
  public static final String S = "s";
  /** The key of the node id in a scoped node's {@code _id}. */
  public static final String NODE = "id";

  private static final Set<String> MAPPED = Set.of("$in", "$nin", "$eq", "$ne");

  private final String field;
  private final BsonValue value;

  public Scope(String field, BsonValue value) {
    this.field = field;
    this.value = value;
  }

  /** The scope field. */
  public String field() {
    return field;
  }

  /** The scope value. */
  public BsonValue value() {
    return value;
  }

  /** The scope equality alone. */
  public BsonDocument equality() {
    return new BsonDocument(field, value);
  }

  /**
   * Why this tree cannot live in {@code collection}, or null: it holds a tree scoped by another
   * field with the same value, whose documents take the {@code _id}s this tree's would (a scoped
   * {@code _id} holds the value, not the field: {@code {arbor: "lock", s: v}}, {@code {s: v, id:
   * …}}), so the two would share their lock document and their nodes' ids (before, every call
   * of the second store threw a {@code NullPointerException} or met a duplicate key). Reads the
   * lock document by {@code _id}, with {@code projection}.
   */
  public @Nullable String sharedIds(MongoCollection<BsonDocument> collection, Bson projection) {
    BsonDocument other = collection.find(new BsonDocument(MongoTreeStore.ID, ownKey("lock"))
        .append(field, new BsonDocument("$ne", value))).projection(projection).first();
    if (other == null) {
      return null;
    }
    List<String> fields = new java.util.ArrayList<>();
    for (String k : other.keySet()) {
      if (!k.equals(MongoTreeStore.ID) && !k.startsWith("arbor")) {
        fields.add(k);
      }
    }
    return "collection '" + collection.getNamespace().getCollectionName() + "' holds a tree"
        + " scoped by " + (fields.isEmpty() ? "another field" : "'" + String.join("', '", fields)
        + "'") + " with the same value, whose documents take the _ids this tree's would ("
        + ownKey("lock").toJson() + " for the lock, {s: <value>, id: <node id>} for the nodes):"
        + " scope the trees of one collection by one field, or by different values";
  }

  /** The stored {@code _id} of node {@code id}. */
  public BsonDocument nodeKey(String id) {
    return new BsonDocument(S, value).append(NODE, new BsonString(id));
  }

  /** The {@code _id} of one of Arbor's own documents ({@code arbor: kind}) of this tree. */
  public BsonDocument ownKey(String kind) {
    return new BsonDocument("arbor", new BsonString(kind)).append(S, value);
  }

  /**
   * {@code filter} as it selects this tree's documents: the scope equality first, then the
   * filter with every condition on {@code _id} that names node ids rewritten to the stored keys
   * (equality and {@code $in}-like lists of strings), or to {@code _id.id} (other operators).
   */
  public BsonDocument filter(Bson filter, CodecRegistry registry) {
    BsonDocument f = filter.toBsonDocument(BsonDocument.class, registry);
    BsonDocument out = equality();
    if (!f.isEmpty()) {
      out.append("$and", new BsonArray(List.of(rewrite(f))));
    }
    return out;
  }

  private BsonDocument rewrite(BsonDocument f) {
    return Rewrites.conditions(f, (k, v, out) -> {
      if (!k.equals(MongoTreeStore.ID)) {
        out.put(k, v);
      } else if (v.isString()) {
        out.put(k, nodeKey(v.asString().getValue()));
      } else if (Rewrites.isOperators(v) && MAPPED.containsAll(v.asDocument().keySet())) {
        BsonDocument ops = new BsonDocument();
        for (var op : v.asDocument().entrySet()) {
          ops.put(op.getKey(), Rewrites.strings(op.getValue(), this::nodeKey));
        }
        out.put(k, ops);
      } else if (Rewrites.isOperators(v)) {
        out.put(MongoTreeStore.ID + "." + NODE, v);
      } else {
        out.put(k, v); // one of Arbor's own documents, or an id that is no node id
      }
    });
  }

  /** A node document as it is stored: the scoped {@code _id}, then the scope field. */
  public BsonDocument stored(BsonDocument document) {
    BsonDocument out = new BsonDocument();
    BsonValue id = document.get(MongoTreeStore.ID);
    out.put(MongoTreeStore.ID, id != null && id.isString() ? nodeKey(id.asString().getValue())
        : id);
    out.put(field, value);
    for (var e : document.entrySet()) {
      if (!e.getKey().equals(MongoTreeStore.ID) && !e.getKey().equals(field)) {
        out.put(e.getKey(), e.getValue());
      }
    }
    return out;
  }

  /** {@code document} with {@code field: value} added (for Arbor's own documents). */
  public BsonDocument tagged(BsonDocument document) {
    BsonDocument out = document.clone();
    out.put(field, value);
    return out;
  }

  /**
   * {@code collection} reading node documents as the stores expect them: a scoped {@code _id}
   * decodes to the node id, and the scope field is dropped.
   */
  public MongoCollection<Document> collection(MongoCollection<Document> collection) {
    CodecRegistry base = collection.getCodecRegistry();
    @SuppressWarnings("unchecked")
    CollectibleCodec<Document> codec = (CollectibleCodec<Document>) base.get(Document.class);
    return collection.withCodecRegistry(CodecRegistries.fromRegistries(
        CodecRegistries.fromCodecs(new DecodingCodec(codec, this::decoded, this)), base));
  }

  /** A node document as the stores read it, or {@code d} itself if it is not a scoped node. */
  Document decoded(Document d) {
    if (d.get(MongoTreeStore.ID) instanceof Document key && key.containsKey(NODE)
        && !key.containsKey("arbor") && key.get(NODE) instanceof String id) {
      Document out = new Document(MongoTreeStore.ID, id);
      for (var e : d.entrySet()) {
        if (!e.getKey().equals(MongoTreeStore.ID) && !e.getKey().equals(field)) {
          out.put(e.getKey(), e.getValue());
        }
      }
      return out;
    }
    return d;
  }

  /**
   * Encodes a scope value, for {@link TreeOptions#withScope}.
   *
   * @throws IllegalArgumentException naming the option if it cannot be stored in BSON
   */
  public static BsonValue encode(Object value, CodecRegistry registry) {
    try {
      BsonDocument holder = new BsonDocument();
      registry.get(Document.class).encode(new BsonDocumentWriter(holder),
          new Document("v", value), EncoderContext.builder().build());
      return holder.get("v");
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("withScope: the value " + value + " ("
          + value.getClass().getName() + ") cannot be stored in BSON: " + e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    return field + "=" + value;
  }
}
