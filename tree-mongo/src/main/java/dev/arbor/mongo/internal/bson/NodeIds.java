package dev.arbor.mongo.internal.bson;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.NodeIdType;
import dev.arbor.mongo.internal.MongoTreeStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.bson.codecs.CollectibleCodec;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.types.Binary;
import org.bson.types.ObjectId;
import org.jspecify.annotations.Nullable;

/**
 * How a tree's node ids are stored ({@link TreeOptions#withIdType}): the one place that maps the
 * contract's strings to typed ids and back. Stores keep building their queries and writes with
 * string ids; the funnels every store I/O goes through ({@link Reads}, {@link Change}, {@link
 * StreamLoad}, the loads of {@link MongoTreeStore}) convert, with {@link #filter}, {@link
 * #update}, {@link #pipeline} and {@link #document}, every id in {@code _id} and in the fields
 * naming nodes (parent, children, ancestors, under the store's names) to the stored type; the
 * collection the stores read through ({@link #collection}) decodes those fields back to strings.
 * A string id that is not in the canonical form of the type selects nothing in a filter, and is
 * refused in a write.
 */
public final class NodeIds {
  /** String ids: nothing is converted. */
  public static final NodeIds STRING = new NodeIds(NodeIdType.STRING, FieldNames.DEFAULTS);

  private static final Set<String> LISTS = Set.of("$in", "$nin", "$eq", "$ne", "$all", "$each");
  private static final Set<String> UPDATES = Set.of("$set", "$setOnInsert", "$push",
      "$addToSet", "$pull", "$pullAll");
  private static final Set<String> STAGES = Set.of("$set", "$addFields");

  final NodeIdType type;
  private final Set<String> fields;

  public NodeIds(NodeIdType type, FieldNames names) {
    this.type = type;
    this.fields = Set.of(MongoTreeStore.ID, names.parent, names.children, names.ancestors);
  }

  /** The BSON type of the ids. */
  public NodeIdType type() {
    return type;
  }

  /** The id type whose ids are stored as {@code id}'s BSON type, or null if none is. */
  public static @Nullable NodeIdType typeOf(BsonValue id) {
    return switch (id.getBsonType()) {
      case STRING -> NodeIdType.STRING;
      case OBJECT_ID -> NodeIdType.OBJECT_ID;
      case BINARY -> NodeIdType.UUID;
      case INT64, INT32 -> NodeIdType.LONG;
      default -> null;
    };
  }

  /**
   * The id type whose ids read back as {@code id} (a decoded {@code _id} that no store of this
   * type maps to a string: a {@code Long} or {@code Integer}, an {@code ObjectId}, a UUID), or
   * null if none.
   */
  public static @Nullable NodeIdType typeOf(@Nullable Object id) {
    return id instanceof Long || id instanceof Integer ? NodeIdType.LONG
        : id instanceof ObjectId ? NodeIdType.OBJECT_ID
        : id instanceof java.util.UUID || id instanceof org.bson.types.Binary b
            && (b.getType() == 4 || b.getType() == 3) ? NodeIdType.UUID
        : id instanceof BsonValue v ? typeOf(v) : null;
  }

  /**
   * A value of unknown type (an {@code _id} or a reference another application wrote) as a
   * message shows it: in extended JSON ({@code {"tenant": "x", "n": 1}}, {@code {"$binary": …}}),
   * as a user would search for it in mongosh, not Java's {@code toString} ({@code Document{{…}}},
   * {@code Binary@1a2b}); a string or a number as it is, an ObjectId as its hexadecimal digits.
   */
  public static String shown(@Nullable Object v) {
    if (v == null || v instanceof String || v instanceof Number
        || v instanceof org.bson.types.ObjectId) {
      return String.valueOf(v); // an ObjectId as its 24 hexadecimal digits, its id's string
    }
    try {
      String json = new Document("v", v).toJson();
      return json.substring(json.indexOf(':') + 1, json.length() - 1).trim();
    } catch (RuntimeException e) { // no codec for it: Java's words are all there is
      return String.valueOf(v);
    }
  }

  /** How to open a store of {@code type}: the option, and the command line's. */
  public static String option(NodeIdType type) {
    return "TreeOptions.withIdType(NodeIdType." + type + ") (arbor: --id-type "
        + type.name().toLowerCase(java.util.Locale.ROOT).replace("_", "") + ")";
  }

  /** Whether ids are stored as strings (nothing to convert). */
  public boolean isString() {
    return type == NodeIdType.STRING;
  }

  /** The id mapping of {@code type} with the default field names. */
  static NodeIds of(NodeIdType type) {
    return type == NodeIdType.STRING ? STRING : new NodeIds(type, FieldNames.DEFAULTS);
  }

  /** The id mapping of the collection a store reads through (see {@link #collection}). */
  public static NodeIds of(MongoCollection<Document> collection) {
    return collection.getCodecRegistry().get(Document.class) instanceof DecodingCodec d
        && d.source() instanceof NodeIds ids ? ids : STRING;
  }

  // ------------------------------------------------------------------ one id

  /** The stored value of {@code id}, or null if {@code id} is not in the canonical form. */
  @Nullable BsonValue parse(String id) {
    switch (type) {
      case STRING:
        return new BsonString(id);
      case OBJECT_ID:
        if (id.length() != 24) {
          return null;
        }
        for (int i = 0; i < 24; i++) {
          char c = id.charAt(i);
          if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
            return null;
          }
        }
        return new BsonObjectId(new ObjectId(id));
      case UUID:
        if (id.length() != 36) {
          return null;
        }
        for (int i = 0; i < 36; i++) {
          char c = id.charAt(i);
          boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
          if (dash ? c != '-' : !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
            return null;
          }
        }
        return new BsonBinary(java.util.UUID.fromString(id), UuidRepresentation.STANDARD);
      case LONG:
        if (id.isEmpty() || id.length() > 20) {
          return null;
        }
        try {
          long v = Long.parseLong(id);
          return Long.toString(v).equals(id) ? new BsonInt64(v) : null;
        } catch (NumberFormatException e) {
          return null;
        }
      default:
        throw new AssertionError(type);
    }
  }

  /**
   * The stored value of a new node's id.
   *
   * @throws IllegalArgumentException naming the id and the type if it is not canonical
   */
  public BsonValue key(String id) {
    BsonValue v = parse(id);
    if (v == null) {
      throw new IllegalArgumentException("Node id '" + id + "' is " + refusal(type));
    }
    return v;
  }

  /** Why {@code id} cannot name a node of a tree of {@code type}, or null if it can. */
  public static @Nullable String refusal(NodeIdType type, String id) {
    NodeIds ids = type == NodeIdType.STRING ? STRING : new NodeIds(type, FieldNames.DEFAULTS);
    return ids.parse(id) == null ? refusal(type) : null;
  }

  private static String refusal(NodeIdType type) {
    return "not a canonical " + type + " id (" + form(type) + "): the tree stores its ids as "
        + type + " (TreeOptions.withIdType)";
  }

  /**
   * Checks that {@code id} can name a node of this tree.
   *
   * @throws IllegalArgumentException naming the id and the type if it is not canonical
   */
  public void checkNew(String id) {
    if (!isString()) {
      key(id);
    }
  }

  private static String form(NodeIdType type) {
    return switch (type) {
      case STRING -> "any string";
      case OBJECT_ID -> "24 lowercase hexadecimal digits";
      case UUID -> "lowercase 8-4-4-4-12 hexadecimal digits";
      case LONG -> "a decimal long without sign '+' or leading zeros";
    };
  }

  /**
   * The id (canonical, lower case) whose string form in upper case {@code s} is, in a tree of
   * ObjectIds or UUIDs ({@code "65A0…"}, as some tools write hexadecimal digits), or null. Only
   * all in upper case: the queries by reference match that form ({@link #forms}), one key more
   * in the same index lookup, which the many forms in mixed case could not be.
   */
  static @Nullable String upperCase(NodeIdType type, String s) {
    if (type != NodeIdType.OBJECT_ID && type != NodeIdType.UUID) {
      return null;
    }
    String lower = s.toLowerCase(java.util.Locale.ROOT);
    return !lower.equals(s) && lower.toUpperCase(java.util.Locale.ROOT).equals(s)
        && of(type).parse(lower) != null ? lower : null;
  }

  /** What a filter compares with for {@code id}: its stored value, or one no node has. */
  private BsonValue match(String id) {
    BsonValue v = parse(id);
    return v != null ? v : new BsonDocument("arborNoSuchId", new BsonString(id));
  }

  /** The contract's string of a stored id (a decoded Java value), or null if of another type. */
  @Nullable String name(@Nullable Object v) {
    switch (type) {
      case OBJECT_ID:
        return v instanceof ObjectId o ? o.toHexString() : null;
      case UUID:
        if (v instanceof java.util.UUID u) {
          return u.toString();
        }
        if (v instanceof Binary b && b.getType() == BsonBinarySubType.UUID_STANDARD.getValue()
            && b.getData().length == 16) {
          return new BsonBinary(b.getType(), b.getData()).asUuid(UuidRepresentation.STANDARD)
              .toString();
        }
        return null;
      case LONG:
        return v instanceof Long l ? l.toString() : v instanceof Integer i ? i.toString() : null;
      default:
        return null;
    }
  }

  /** The {@code $type} of node ids. */
  private BsonValue bsonType() {
    return switch (type) {
      case STRING -> new BsonString("string");
      case OBJECT_ID -> new BsonString("objectId");
      case UUID -> new BsonString("binData");
      case LONG -> new BsonArray(List.of(new BsonString("long"), new BsonString("int")));
    };
  }

  // ------------------------------------------------------------------ queries and writes

  /**
   * {@code f} with the ids it compares converted; {@code f} itself for string ids. A reference
   * field (parent, children, ancestors) compared with an id, by equality, {@code $in} or {@code
   * $nin}, matches the id's {@linkplain #forms other forms} too: one index lookup of a few keys,
   * so that the reads and changes that query by reference meet a node whose reference another
   * tool wrote in another form ({@link MistypedId}) rather than miss it (a delete would orphan
   * it).
   */
  public BsonDocument filter(BsonDocument f) {
    if (isString()) {
      return f;
    }
    return Rewrites.conditions(f, (k, v, out) -> out.put(k, k.equals(MongoTreeStore.ID)
        ? condition(v, false) : fields.contains(k) ? condition(v, true) : v));
  }

  /**
   * The stored value of {@code id} and the other forms of it that other tools write: its string
   * (an ObjectId's 24 hexadecimal digits, a UUID's 8-4-4-4-12, each in lower and in upper case; a
   * long's decimal digits; a long
   * written as a double or a decimal is equal to it already in a query), and for a UUID the
   * legacy binary (subtype 3) in each byte order; just the value that matches nothing if {@code
   * id} is not canonical.
   */
  private List<BsonValue> forms(String id) {
    BsonValue v = parse(id);
    if (v == null) {
      return List.of(match(id));
    }
    List<BsonValue> out = new ArrayList<>(List.of(v, new BsonString(id)));
    String upper = id.toUpperCase(java.util.Locale.ROOT);
    if ((type == NodeIdType.OBJECT_ID || type == NodeIdType.UUID) && !upper.equals(id)) {
      out.add(new BsonString(upper)); // the hexadecimal digits in upper case ("65A0…")
    }
    if (type == NodeIdType.UUID) {
      java.util.UUID u = java.util.UUID.fromString(id);
      for (UuidRepresentation r : MistypedId.LEGACY) {
        BsonBinary legacy = new BsonBinary(u, r);
        if (!out.contains(legacy)) {
          out.add(legacy);
        }
      }
    }
    return out;
  }

  /** The forms ({@link #forms}) of each id of a list, or of one id. */
  private BsonArray allForms(BsonValue v) {
    BsonArray a = new BsonArray();
    for (BsonValue each : v.isArray() ? v.asArray() : List.of(v)) {
      if (each.isString()) {
        a.addAll(forms(each.asString().getValue()));
      } else {
        a.add(each);
      }
    }
    return a;
  }

  private BsonValue condition(BsonValue v, boolean reference) {
    if (v.isString()) {
      return reference ? new BsonDocument("$in", allForms(v)) : match(v.asString().getValue());
    }
    if (v.isArray()) {
      return matches(v);
    }
    if (Rewrites.isOperators(v)) {
      BsonDocument ops = new BsonDocument();
      for (var op : v.asDocument().entrySet()) {
        String k = op.getKey();
        BsonValue x = op.getValue();
        if (reference && (k.equals("$in") || k.equals("$nin"))) {
          ops.put(k, allForms(x));
        } else if (LISTS.contains(k)) {
          ops.put(k, x.isString() ? match(x.asString().getValue()) : matches(x));
        } else if (k.equals("$type") && (x.isString() && x.asString().getValue().equals("string")
            || x.isNumber() && x.asNumber().intValue() == 2)) {
          ops.put(k, bsonType());
        } else if (k.equals("$not")) {
          ops.put(k, condition(x, reference));
        } else {
          ops.put(k, x);
        }
      }
      return ops;
    }
    return v;
  }

  private BsonValue matches(BsonValue v) {
    return v.isArray() ? Rewrites.strings(v, this::match) : v;
  }


  /** An update document with the ids it writes converted. */
  public BsonDocument update(BsonDocument u) {
    if (isString()) {
      return u;
    }
    BsonDocument out = new BsonDocument();
    for (var e : u.entrySet()) {
      BsonValue v = e.getValue();
      if (UPDATES.contains(e.getKey()) && v.isDocument()) {
        BsonDocument set = new BsonDocument();
        for (var f : v.asDocument().entrySet()) {
          set.put(f.getKey(), fields.contains(f.getKey()) ? written(f.getValue()) : f.getValue());
        }
        out.put(e.getKey(), set);
      } else {
        out.put(e.getKey(), v);
      }
    }
    return out;
  }

  /** A written value of an id field: a string, a list of strings, {@code $each} or {@code $in}. */
  private BsonValue written(BsonValue v) {
    if (v.isString()) {
      return key(v.asString().getValue());
    }
    if (v.isArray()) {
      BsonArray a = new BsonArray();
      for (BsonValue each : v.asArray()) {
        a.add(each.isString() ? key(each.asString().getValue()) : written(each));
      }
      return a;
    }
    if (Rewrites.isOperators(v)) {
      BsonDocument ops = new BsonDocument();
      for (var op : v.asDocument().entrySet()) {
        ops.put(op.getKey(), LISTS.contains(op.getKey()) ? written(op.getValue())
            : op.getValue());
      }
      return ops;
    }
    return v;
  }

  /** An update pipeline with the literal ids assigned to id fields converted. */
  public BsonArray pipeline(BsonArray stages) {
    if (isString()) {
      return stages;
    }
    BsonArray out = new BsonArray();
    for (BsonValue stage : stages) {
      if (!stage.isDocument()) {
        out.add(stage);
        continue;
      }
      BsonDocument s = new BsonDocument();
      for (var e : stage.asDocument().entrySet()) {
        BsonValue v = e.getValue();
        if (STAGES.contains(e.getKey()) && v.isDocument()) {
          BsonDocument set = new BsonDocument();
          for (var f : v.asDocument().entrySet()) {
            set.put(f.getKey(), fields.contains(f.getKey()) ? literals(f.getValue())
                : f.getValue());
          }
          s.put(e.getKey(), set);
        } else if (e.getKey().equals("$match") && v.isDocument()) {
          s.put(e.getKey(), filter(v.asDocument()));
        } else {
          s.put(e.getKey(), v);
        }
      }
      out.add(s);
    }
    return out;
  }

  /** An expression with every {@code $literal} string or list of strings converted. */
  private BsonValue literals(BsonValue v) {
    if (v.isDocument()) {
      BsonDocument out = new BsonDocument();
      for (var e : v.asDocument().entrySet()) {
        out.put(e.getKey(), e.getKey().equals("$literal") ? written(e.getValue())
            : literals(e.getValue()));
      }
      return out;
    }
    if (v.isArray()) {
      BsonArray a = new BsonArray();
      for (BsonValue each : v.asArray()) {
        a.add(literals(each));
      }
      return a;
    }
    return v;
  }

  /** A new node document with its ids converted. */
  public BsonDocument document(BsonDocument d) {
    if (isString()) {
      return d;
    }
    BsonDocument out = new BsonDocument();
    for (var e : d.entrySet()) {
      out.put(e.getKey(), fields.contains(e.getKey()) ? written(e.getValue()) : e.getValue());
    }
    return out;
  }

  /** The stages of an aggregation with their {@code $match} filters converted. */
  public List<BsonDocument> stages(List<BsonDocument> stages) {
    if (isString()) {
      return stages;
    }
    List<BsonDocument> out = new ArrayList<>();
    for (BsonDocument s : stages) {
      if (s.containsKey("$match") && s.get("$match").isDocument()) {
        BsonDocument c = s.clone();
        c.put("$match", filter(s.getDocument("$match")));
        out.add(c);
      } else {
        out.add(s);
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ reading

  /**
   * A node document as the stores read it: typed ids in the id fields as strings; a value of
   * another type in a reference field (parent, children, ancestors, or one of their items) as a
   * {@link MistypedId}, never as the string of the id it may resemble; so is a string {@code
   * _id} (no node: the reads skip it or refuse naming it, check() lists it). Arbor's own
   * documents (a document as {@code _id}) are left as they are.
   */
  Document decoded(Document d) {
    if (d.get(MongoTreeStore.ID) instanceof Document) {
      return d;
    }
    for (String f : fields) {
      Object v = d.get(f);
      if (v == null) {
        continue;
      }
      String s = name(v);
      if (s != null) {
        d.put(f, s);
      } else if (f.equals(MongoTreeStore.ID)) {
        // a document whose _id is of another type is no node of the tree; a string, which
        // would read as the id it may resemble, is told apart
        if (v instanceof String) {
          d.put(f, new MistypedId(v, type));
        }
      } else if (v instanceof List<?> list) {
        List<Object> out = new ArrayList<>(list.size());
        for (Object each : list) {
          String n = name(each);
          out.add(n != null ? n : each == null ? null : new MistypedId(each, type));
        }
        d.put(f, out);
      } else {
        d.put(f, new MistypedId(v, type));
      }
    }
    return d;
  }

  /** {@code collection} decoding typed ids to strings ({@code collection} for string ids). */
  public MongoCollection<Document> collection(MongoCollection<Document> collection) {
    if (isString()) {
      return collection;
    }
    CodecRegistry base = collection.getCodecRegistry();
    @SuppressWarnings("unchecked")
    CollectibleCodec<Document> codec = (CollectibleCodec<Document>) base.get(Document.class);
    return collection.withCodecRegistry(CodecRegistries.fromRegistries(
        CodecRegistries.fromCodecs(new DecodingCodec(codec, this::decoded, this)), base));
  }

  @Override
  public String toString() {
    return type.toString();
  }
}
