package dev.arbor.mongo.internal;

import static java.util.Objects.requireNonNull;

import com.mongodb.client.ClientSession;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.mongo.MongoTree;
import dev.arbor.mongo.TypedTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonDocumentWriter;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A {@link TypedTree} over a {@link MongoTree}: a node is encoded by the type's codec into its id
 * and attributes, which the store writes as it writes any node; the store's node reads are decoded
 * back with the same codec. So every typed operation is the store's own (same protocol, isolation
 * and round trips), plus an in-memory conversion per node.
 */
final class TypedMongoTree<T> implements TypedTree<T> {
  private static final String ID = "_id";

  private final MongoTree tree;
  private final Class<T> type;
  private final CodecRegistry registry;
  private final Codec<T> codec;

  TypedMongoTree(MongoTree tree, Class<T> type, CodecRegistry registry) {
    this.tree = requireNonNull(tree, "tree");
    this.type = requireNonNull(type, "documentClass");
    this.registry = requireNonNull(registry, "registry");
    try {
      this.codec = registry.get(type);
    } catch (CodecConfigurationException e) {
      throw new IllegalArgumentException("No codec for " + type.getName() + " in the collection's"
          + " codec registry: " + (type.isRecord() ? "a record is encoded by the driver's default"
          + " registry when it has a codec for each of its components' types (" + e.getMessage()
          + ")" : "records are encoded by the driver's default registry, POJOs need"
          + " PojoCodecProvider") + " (see docs/data-api.md, \"Typed nodes\")", e);
    }
  }

  @Override
  public MongoTree tree() {
    return tree;
  }

  @Override
  public Class<T> documentClass() {
    return type;
  }

  @Override
  public void insert(T node, Position position) {
    requireNonNull(position, "position");
    Written e = encode(node);
    tree.insert(e.id(), position, e.attributes());
  }

  @Override
  public void update(T node) {
    Written e = encode(node);
    tree.update(e.id(), e.attributes());
  }

  @Override
  public Optional<T> find(String id) {
    return tree.find(id).map(this::decode);
  }

  @Override
  public List<T> childNodes(String id) {
    return decode(tree.childNodes(id));
  }

  @Override
  public List<T> childNodes(String id, @Nullable String after, int limit, @Nullable Bson filter) {
    return decode(tree.childNodes(id, after, limit, filter));
  }

  @Override
  public List<T> ancestorNodes(String id) {
    return decode(tree.ancestorNodes(id));
  }

  @Override
  public List<T> descendantNodes(String id, int maxDepth, @Nullable Bson filter) {
    return decode(tree.descendantNodes(id, maxDepth, filter));
  }

  @Override
  public TypedTree<T> withSession(ClientSession session) {
    return new TypedMongoTree<>(tree.withSession(session), type, registry);
  }

  @Override
  public String toString() {
    return "TypedTree<" + type.getSimpleName() + ">[" + tree + "]";
  }

  /** A node as the store takes it. */
  private record Written(String id, Map<String, @Nullable Object> attributes) {}

  private Written encode(T node) {
    requireNonNull(node, "node");
    BsonDocument doc = new BsonDocument();
    codec.encode(new BsonDocumentWriter(doc), node,
        EncoderContext.builder().isEncodingCollectibleDocument(true).build());
    BsonValue id = doc.remove(ID);
    if (id == null || !id.isString()) {
      throw new IllegalArgumentException("A node of a TypedTree<" + type.getSimpleName()
          + "> needs a string _id (a record component or property annotated @BsonId), but "
          + node + " is written with " + (id == null ? "none" : new BsonDocument(ID, id).toJson()));
    }
    Document attributes = registry.get(Document.class)
        .decode(new BsonDocumentReader(doc), DecoderContext.builder().build());
    return new Written(id.asString().getValue(), attributes);
  }

  private T decode(Node node) {
    Document doc = new Document(ID, node.id());
    doc.putAll(node.attributes());
    BsonDocument bson = doc.toBsonDocument(Document.class, registry);
    return codec.decode(new BsonDocumentReader(bson), DecoderContext.builder().build());
  }

  private List<T> decode(List<Node> nodes) {
    List<T> out = new ArrayList<>(nodes.size());
    for (Node n : nodes) {
      out.add(decode(n));
    }
    return out;
  }
}
