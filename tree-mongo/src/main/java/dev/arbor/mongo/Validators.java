package dev.arbor.mongo;

import java.util.ArrayList;
import java.util.List;
import org.bson.Document;

/**
 * The {@code $jsonSchema} validator of each pattern (MongoDB's schema validation): a node
 * document has a string {@code _id} and the pattern's structural fields with their types; Arbor's
 * own documents (the lock, journal parts, insert fences) have a document {@code _id} and are let
 * through. User attributes are not constrained: add your own to the {@code anyOf}'s node branch.
 */
final class Validators {
  private Validators() {}

  private static Document type(Object bsonType) {
    return new Document("bsonType", bsonType);
  }

  private static final List<String> STRING_OR_NULL = List.of("string", "null");

  static Document of(TreePattern pattern) {
    Document properties = new Document(MongoTreeStore.ID, type("string"));
    List<String> required = new ArrayList<>(List.of(MongoTreeStore.ID));
    switch (pattern) {
      case PARENT_REFERENCES -> {
        properties.append(ParentReferenceTreeStore.PARENT, type(STRING_OR_NULL))
            .append(Ranks.RANK, type("number"));
        required.addAll(List.of(ParentReferenceTreeStore.PARENT, Ranks.RANK));
      }
      case CHILD_REFERENCES -> {
        properties.append(ChildReferenceTreeStore.CHILDREN,
                type("array").append("items", type("string")))
            .append(Ranks.RANK, type("number")); // roots only
        required.add(ChildReferenceTreeStore.CHILDREN);
      }
      case ARRAY_OF_ANCESTORS -> {
        properties.append(ArrayOfAncestorsTreeStore.PARENT, type(STRING_OR_NULL))
            .append(ArrayOfAncestorsTreeStore.ANCESTORS,
                type("array").append("items", type("string")))
            .append(Ranks.RANK, type("number"));
        required.addAll(List.of(ArrayOfAncestorsTreeStore.PARENT,
            ArrayOfAncestorsTreeStore.ANCESTORS, Ranks.RANK));
      }
      case MATERIALIZED_PATHS -> {
        properties.append(MaterializedPathTreeStore.PATH, type(STRING_OR_NULL))
            .append(Ranks.RANK, type("number"));
        required.addAll(List.of(MaterializedPathTreeStore.PATH, Ranks.RANK));
      }
      case NESTED_SETS -> {
        properties.append(NestedSetTreeStore.PARENT, type(STRING_OR_NULL))
            .append(NestedSetTreeStore.LEFT, type("number"))
            .append(NestedSetTreeStore.RIGHT, type("number"))
            .append(NestedSetTreeStore.DEPTH, type("number"));
        required.addAll(List.of(NestedSetTreeStore.PARENT, NestedSetTreeStore.LEFT,
            NestedSetTreeStore.RIGHT, NestedSetTreeStore.DEPTH));
      }
    }
    properties.append(Step.MARK, type("object"));
    Document node = type("object").append("required", required).append("properties", properties);
    Document arbor = type("object").append("required", List.of(MongoTreeStore.ID))
        .append("properties", new Document(MongoTreeStore.ID, type("object")));
    return new Document("$jsonSchema", new Document("anyOf", List.of(node, arbor)));
  }
}
