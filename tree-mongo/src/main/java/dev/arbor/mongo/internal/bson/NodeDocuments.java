package dev.arbor.mongo.internal.bson;

import static dev.arbor.mongo.internal.MongoTreeStore.ID;

import dev.arbor.core.internal.TreeStores;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.Document;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * How a node is a document: {@code _id} the node id, then the pattern's structural fields, then
 * the attributes as top-level fields. Checks attributes and callers' filters against the names
 * the structure reserves (the pattern's fields, Arbor's mark, lock and journal fields, a scope
 * field), before anything is written or read.
 */
public final class NodeDocuments {
  private final Set<String> structuralFields;
  private final CodecRegistry codecs;

  /**
   * @param structuralFields every field the structure reserves, besides {@code _id}
   * @param codecs the collection's codecs, which attribute values must encode with
   */
  public NodeDocuments(Set<String> structuralFields, CodecRegistry codecs) {
    this.structuralFields = structuralFields;
    this.codecs = codecs;
  }

  /** The fields the structure reserves, besides {@code _id}. */
  public Set<String> structuralFields() {
    return structuralFields;
  }


  /**
   * Checks attribute names and values before anything is written.
   *
   * @throws IllegalArgumentException naming the node and the attribute
   */
  public void checkAttributes(String id, Map<String, ?> attributes) {
    checkAttributes(id, attributes, true);
  }

  /**
   * Checks attribute names and nested keys, but not that the values encode: for a caller that
   * encodes the whole document next and, if that fails, calls {@link #checkAttributes(String,
   * Map)} to name the attribute (a streamed load, whose documents are encoded once).
   *
   * @throws IllegalArgumentException naming the node and the attribute
   */
  public void checkAttributeNames(String id, Map<String, ?> attributes) {
    checkAttributes(id, attributes, false);
  }

  private void checkAttributes(String id, Map<String, ?> attributes, boolean encode) {
    for (Map.Entry<String, ?> e : attributes.entrySet()) {
      String name = e.getKey();
      if (name != null && (name.equals(ID) || structuralFields.contains(name))) {
        throw new IllegalArgumentException("Attribute '" + name + "' of node '" + id
            + "' is reserved by this pattern for the tree structure (reserved: "
            + reservedNames() + ")");
      }
    }
    TreeStores.checkAttributeNames(id, attributes); // what no store takes, at any depth
    for (Map.Entry<String, ?> e : attributes.entrySet()) {
      String name = e.getKey();
      if (!encode) {
        continue;
      }
      try {
        codecs.get(Document.class).encode(
            new BsonDocumentWriter(new BsonDocument()), new Document(name, e.getValue()),
            EncoderContext.builder().build());
      } catch (CodecConfigurationException ex) {
        throw new IllegalArgumentException("Attribute '" + name + "' of node '" + id
            + "' cannot be stored in BSON: the collection's codec registry has no codec for its"
            + " value, of " + (e.getValue() == null ? "null" : e.getValue().getClass().getName())
            + ", or for a value inside it (" + ex.getMessage() + "); use strings, numbers,"
            + " booleans, dates, ObjectIds, maps and lists of them, or register a codec", ex);
      } catch (IllegalArgumentException | org.bson.BSONException ex) {
        throw new IllegalArgumentException("Attribute '" + name + "' of node '" + id
            + "' cannot be stored in BSON: " + ex.getMessage(), ex);
      }
    }
  }

  private List<String> reservedNames() {
    List<String> names = new ArrayList<>(structuralFields);
    names.add(ID);
    names.sort(null);
    return names;
  }

  /** A new node document: {@code _id}, then the structure, then the attributes. */
  public static Document newDocument(String id, Document structure, Map<String, ?> attributes) {
    Document d = new Document(ID, id);
    d.putAll(structure);
    d.putAll(attributes);
    return d;
  }

  /** The attributes of a stored document: every field but {@code _id} and the structure. */
  public Map<String, Object> attributesOf(Document d) {
    Map<String, Object> attributes = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : d.entrySet()) {
      if (!e.getKey().equals(ID) && !structuralFields.contains(e.getKey())) {
        attributes.put(e.getKey(), e.getValue());
      }
    }
    return TreeStores.copyAttributes(attributes);
  }

  /**
   * Checks a caller's filter: it may name the caller's fields and {@code _id}, not the
   * structure's nor Arbor's, and may not run JavaScript.
   *
   * @return the filter, encoded
   * @throws IllegalArgumentException naming the field
   */
  public Bson checkFilter(Bson filter) {
    BsonDocument encoded = filter.toBsonDocument(BsonDocument.class,
        codecs);
    checkFilterDocument(encoded, false);
    return encoded;
  }

  private void checkFilterDocument(BsonDocument d, boolean expression) {
    for (Map.Entry<String, org.bson.BsonValue> e : d.entrySet()) {
      String key = e.getKey();
      if (key.equals("$where") || key.equals("$function") || key.equals("$accumulator")) {
        throw new IllegalArgumentException("A node filter cannot use " + key
            + " (it could read the tree's structural fields)");
      }
      if (!key.startsWith("$") && !expression) {
        checkFilterField(key);
      }
      checkFilterValue(e.getValue(), expression || key.equals("$expr"));
    }
  }

  private void checkFilterValue(org.bson.BsonValue v, boolean expression) {
    if (v.isDocument()) {
      checkFilterDocument(v.asDocument(), expression);
    } else if (v.isArray()) {
      for (org.bson.BsonValue each : v.asArray()) {
        checkFilterValue(each, expression);
      }
    } else if (expression && v.isString() && v.asString().getValue().startsWith("$")
        && !v.asString().getValue().startsWith("$$")) {
      checkFilterField(v.asString().getValue().substring(1));
    }
  }

  private void checkFilterField(String path) {
    String top = path.contains(".") ? path.substring(0, path.indexOf('.')) : path;
    if (structuralFields.contains(top)) {
      throw new IllegalArgumentException("A node filter cannot name '" + top
          + "': this pattern keeps the tree structure in it (reserved: " + reservedNames() + ")");
    }
  }
}
