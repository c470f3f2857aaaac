package dev.arbor.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStoreContract;
import dev.arbor.core.TreeStoreProperties;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.mongodb.MongoDBContainer;

/**
 * The contract and the equivalence property of all five patterns on a real MongoDB 8 (a
 * single-node replica set in a container), where {@code $graphLookup}, pipeline updates, sessions
 * and secondary indexes all work: the contract with the lock and journal, the property with
 * transactions. Runs wherever Docker runs; skipped, not failed, elsewhere.
 */
@Testcontainers(disabledWithoutDocker = true)
class MongoDb8ContainerTest {
  @Container
  static final MongoDBContainer MONGO = new MongoDBContainer("mongo:8.0");

  private static final AtomicInteger COLLECTIONS = new AtomicInteger();
  private static MongoClient client;

  static synchronized MongoCollection<Document> freshCollection() {
    if (client == null) {
      client = MongoClients.create(MONGO.getReplicaSetUrl());
    }
    return client.getDatabase("arbor_container").getCollection("t" + COLLECTIONS.incrementAndGet());
  }

  @AfterAll
  static void close() {
    if (client != null) {
      client.close();
    }
  }

  abstract static class Contract extends TreeStoreContract {
    MongoCollection<Document> collection;

    abstract TreePattern pattern();

    @Override
    protected TreeStore newStore() {
      collection = freshCollection();
      return pattern().open(collection);
    }

    @Override
    protected void verifyStoredInvariants(TreeStore store) {
      StoredLayout.assertLayout(pattern(), store.snapshot(), collection);
    }
  }

  abstract static class Properties extends TreeStoreProperties {
    abstract TreePattern pattern();

    @Override
    protected TreeStore newStore() {
      freshCollection(); // starts the client
      // transactions: a replica set
      return pattern().open(freshCollection(), TreeOptions.defaults().withTransactions(client));
    }
  }

  @Nested
  class ParentReferences extends Contract {
    @Override
    TreePattern pattern() {
      return TreePattern.PARENT_REFERENCES;
    }
  }

  @Nested
  class ChildReferences extends Contract {
    @Override
    TreePattern pattern() {
      return TreePattern.CHILD_REFERENCES;
    }
  }

  @Nested
  class ArrayOfAncestors extends Contract {
    @Override
    TreePattern pattern() {
      return TreePattern.ARRAY_OF_ANCESTORS;
    }
  }

  @Nested
  class MaterializedPaths extends Contract {
    @Override
    TreePattern pattern() {
      return TreePattern.MATERIALIZED_PATHS;
    }
  }

  @Nested
  class NestedSets extends Contract {
    @Override
    TreePattern pattern() {
      return TreePattern.NESTED_SETS;
    }
  }

  @Nested
  class ParentReferencesProperties extends Properties {
    @Override
    TreePattern pattern() {
      return TreePattern.PARENT_REFERENCES;
    }
  }

  @Nested
  class ChildReferencesProperties extends Properties {
    @Override
    TreePattern pattern() {
      return TreePattern.CHILD_REFERENCES;
    }
  }

  @Nested
  class ArrayOfAncestorsProperties extends Properties {
    @Override
    TreePattern pattern() {
      return TreePattern.ARRAY_OF_ANCESTORS;
    }
  }

  @Nested
  class MaterializedPathsProperties extends Properties {
    @Override
    TreePattern pattern() {
      return TreePattern.MATERIALIZED_PATHS;
    }
  }

  @Nested
  class NestedSetsProperties extends Properties {
    @Override
    TreePattern pattern() {
      return TreePattern.NESTED_SETS;
    }
  }
}
