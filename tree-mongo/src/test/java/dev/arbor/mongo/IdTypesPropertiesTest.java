package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;
import org.junit.jupiter.api.Nested;

/**
 * Every pattern with every non-string id type ({@link TreeOptions#withIdType}) against the
 * in-memory reference, by generated sequences of inserts at every position, moves, deletes both
 * ways, updates and reads, comparing snapshots and checking the store after every step; the ids
 * are generated in the canonical form of the type.
 */
class IdTypesPropertiesTest {
  /** The canonical id of the {@code counter}-th node of a tree of {@code type}. */
  static String canonical(NodeIdType type, int counter) {
    return switch (type) {
      case STRING -> "n" + counter;
      case OBJECT_ID -> String.format("65a%021x", counter * 7919L);
      case UUID -> new java.util.UUID(0xABCDEFL * counter, -counter - 1L).toString();
      case LONG -> counter % 3 == 0 ? Long.toString(counter)
          : counter % 3 == 1 ? Long.toString(-counter * 1_000_000_007L)
          : Long.toString(Long.MAX_VALUE - counter);
    };
  }

  abstract static class Typed extends MongoStoreProperties {
    private final TreePattern pattern;
    private final NodeIdType type;

    private final boolean pipelines;

    Typed(TreePattern pattern, NodeIdType type) {
      this(pattern, type, false);
    }

    /**
     * @param pipelines whether update pipelines are forced on, each run by {@link
     *     PipelineEmulator} (the embedded server has none)
     */
    Typed(TreePattern pattern, NodeIdType type, boolean pipelines) {
      this.pattern = pattern;
      this.type = type;
      this.pipelines = pipelines;
    }

    @Override
    TreePattern pattern() {
      return pattern;
    }

    @Override
    ServerCapabilities capabilities(MongoCollection<Document> collection) {
      if (pipelines) {
        return new ServerCapabilities(collection, ServerCapabilities.Mode.PROBE,
            ServerCapabilities.Mode.ON).client(MongoTestServer.get().client())
            .isolatedReads(false).idType(type)
            .sender(StepwiseSender.crashingAfter(-1));
      }
      return super.capabilities(collection).idType(type);
    }

    @Override
    protected String nodeId(int counter) {
      return canonical(type, counter);
    }

    @Override
    protected int examples() {
      return Integer.getInteger("arbor.qt.idExamples", 12);
    }
  }

  @Nested
  class ParentReferences_ObjectId extends Typed {
    ParentReferences_ObjectId() {
      super(TreePattern.PARENT_REFERENCES, NodeIdType.OBJECT_ID);
    }
  }

  @Nested
  class ChildReferences_ObjectId extends Typed {
    ChildReferences_ObjectId() {
      super(TreePattern.CHILD_REFERENCES, NodeIdType.OBJECT_ID);
    }
  }

  @Nested
  class ArrayOfAncestors_ObjectId extends Typed {
    ArrayOfAncestors_ObjectId() {
      super(TreePattern.ARRAY_OF_ANCESTORS, NodeIdType.OBJECT_ID);
    }
  }

  @Nested
  class MaterializedPaths_ObjectId extends Typed {
    MaterializedPaths_ObjectId() {
      super(TreePattern.MATERIALIZED_PATHS, NodeIdType.OBJECT_ID);
    }
  }

  @Nested
  class NestedSets_ObjectId extends Typed {
    NestedSets_ObjectId() {
      super(TreePattern.NESTED_SETS, NodeIdType.OBJECT_ID);
    }
  }

  @Nested
  class ParentReferences_Uuid extends Typed {
    ParentReferences_Uuid() {
      super(TreePattern.PARENT_REFERENCES, NodeIdType.UUID);
    }
  }

  @Nested
  class ChildReferences_Uuid extends Typed {
    ChildReferences_Uuid() {
      super(TreePattern.CHILD_REFERENCES, NodeIdType.UUID);
    }
  }

  @Nested
  class ArrayOfAncestors_Uuid extends Typed {
    ArrayOfAncestors_Uuid() {
      super(TreePattern.ARRAY_OF_ANCESTORS, NodeIdType.UUID);
    }
  }

  @Nested
  class MaterializedPaths_Uuid extends Typed {
    MaterializedPaths_Uuid() {
      super(TreePattern.MATERIALIZED_PATHS, NodeIdType.UUID);
    }
  }

  @Nested
  class NestedSets_Uuid extends Typed {
    NestedSets_Uuid() {
      super(TreePattern.NESTED_SETS, NodeIdType.UUID);
    }
  }

  @Nested
  class ParentReferences_Long extends Typed {
    ParentReferences_Long() {
      super(TreePattern.PARENT_REFERENCES, NodeIdType.LONG);
    }
  }

  @Nested
  class ChildReferences_Long extends Typed {
    ChildReferences_Long() {
      super(TreePattern.CHILD_REFERENCES, NodeIdType.LONG);
    }
  }

  @Nested
  class ArrayOfAncestors_Long extends Typed {
    ArrayOfAncestors_Long() {
      super(TreePattern.ARRAY_OF_ANCESTORS, NodeIdType.LONG);
    }
  }

  @Nested
  class MaterializedPaths_Long extends Typed {
    MaterializedPaths_Long() {
      super(TreePattern.MATERIALIZED_PATHS, NodeIdType.LONG);
    }
  }

  @Nested
  class NestedSets_Long extends Typed {
    NestedSets_Long() {
      super(TreePattern.NESTED_SETS, NodeIdType.LONG);
    }
  }
  @Nested
  class ArrayOfAncestorsPipeline_ObjectId extends Typed {
    ArrayOfAncestorsPipeline_ObjectId() {
      super(TreePattern.ARRAY_OF_ANCESTORS, NodeIdType.OBJECT_ID, true);
    }
  }

  @Nested
  class MaterializedPathsPipeline_ObjectId extends Typed {
    MaterializedPathsPipeline_ObjectId() {
      super(TreePattern.MATERIALIZED_PATHS, NodeIdType.OBJECT_ID, true);
    }
  }

  @Nested
  class ArrayOfAncestorsPipeline_Uuid extends Typed {
    ArrayOfAncestorsPipeline_Uuid() {
      super(TreePattern.ARRAY_OF_ANCESTORS, NodeIdType.UUID, true);
    }
  }

  @Nested
  class MaterializedPathsPipeline_Uuid extends Typed {
    MaterializedPathsPipeline_Uuid() {
      super(TreePattern.MATERIALIZED_PATHS, NodeIdType.UUID, true);
    }
  }

  @Nested
  class ArrayOfAncestorsPipeline_Long extends Typed {
    ArrayOfAncestorsPipeline_Long() {
      super(TreePattern.ARRAY_OF_ANCESTORS, NodeIdType.LONG, true);
    }
  }

  @Nested
  class MaterializedPathsPipeline_Long extends Typed {
    MaterializedPathsPipeline_Long() {
      super(TreePattern.MATERIALIZED_PATHS, NodeIdType.LONG, true);
    }
  }
}
