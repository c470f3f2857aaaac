package dev.arbor.mongo.internal.layout;

import dev.arbor.mongo.NodeIdType;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.FieldNames;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.protocol.Step;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * The {@code $jsonSchema} validator of each pattern (MongoDB's schema validation): a node
 * document has an {@code _id} of the tree's id type (a document {@code {s, id}} in a scoped tree,
 * which also requires the scope field) and the pattern's structural fields, under the store's
 * names, with their types; Arbor's own documents (the lock, journal parts, insert fences), whose
 * {@code _id} is a document with an {@code arbor} key, are let through. User attributes are not
 * constrained: add your own to the {@code anyOf}'s node branch.
 */
public final class Validators {
  private Validators() {}

  private static Document type(Object bsonType) {
    return new Document("bsonType", bsonType);
  }


  /**
   * The validator of {@code pattern} with the structural fields named {@code names}, for a
   * collection of one tree ({@code scopeField} null) or of several trees told apart by {@code
   * scopeField}.
   */
  static Document of(TreePattern pattern, FieldNames names, @Nullable String scopeField) {
    return of(pattern, names, scopeField, NodeIdType.STRING);
  }

  /** The BSON types of a node id of {@code idType}, for {@code bsonType}. */
  private static Object idTypes(NodeIdType idType) {
    return switch (idType) {
      case STRING -> "string";
      case OBJECT_ID -> "objectId";
      case UUID -> "binData";
      case LONG -> List.of("long", "int");
    };
  }

  /**
   * The validator of {@code pattern} as {@link #of(TreePattern, FieldNames, String)}, with node
   * ids of {@code idType} in {@code _id}, the parent and the items of the children and ancestors.
   */
  public static Document of(TreePattern pattern, FieldNames names, @Nullable String scopeField,
      NodeIdType idType) {
    Object idt = idTypes(idType);
    List<Object> idOrNull = new ArrayList<>();
    if (idt instanceof List<?> l) {
      idOrNull.addAll(l);
    } else {
      idOrNull.add(idt);
    }
    idOrNull.add("null");
    List<Object> idOrNullTypes = List.copyOf(idOrNull);
    Document id = scopeField == null ? type(idt)
        : type("object").append("required", List.of(Scope.S, Scope.NODE))
            .append("properties", new Document(Scope.NODE, type(idt)));
    Document properties = new Document(MongoTreeStore.ID, id);
    List<String> required = new ArrayList<>(List.of(MongoTreeStore.ID));
    if (scopeField != null) {
      required.add(scopeField);
    }
    Document ids = type("array").append("items", type(idt));
    switch (pattern) {
      case PARENT_REFERENCES -> {
        properties.append(names.parent, type(idOrNullTypes)).append(names.rank, type("number"));
        required.addAll(List.of(names.parent, names.rank));
      }
      case CHILD_REFERENCES -> {
        properties.append(names.children, ids)
            .append(names.rank, type("number")); // roots only
        required.add(names.children);
      }
      case ARRAY_OF_ANCESTORS -> {
        properties.append(names.parent, type(idOrNullTypes)).append(names.ancestors, ids)
            .append(names.rank, type("number"));
        required.addAll(List.of(names.parent, names.ancestors, names.rank));
      }
      case MATERIALIZED_PATHS -> {
        properties.append(names.path, type(List.of("string", "null")))
            .append(names.rank, type("number"));
        required.addAll(List.of(names.path, names.rank));
      }
      case NESTED_SETS -> {
        properties.append(names.parent, type(idOrNullTypes))
            .append(names.left, type("number"))
            .append(names.right, type("number"))
            .append(names.depth, type("number"));
        required.addAll(List.of(names.parent, names.left, names.right, names.depth));
      }
    }
    properties.append(Step.MARK, type("object"));
    Document node = type("object").append("required", required).append("properties", properties);
    Document arbor = type("object").append("required", List.of(MongoTreeStore.ID))
        .append("properties", new Document(MongoTreeStore.ID,
            type("object").append("required", List.of("arbor"))));
    return new Document("$jsonSchema", new Document("anyOf", List.of(node, arbor)));
  }
}
