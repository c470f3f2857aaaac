package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ReadPreference;
import com.mongodb.TransactionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.protocol.Step;
import dev.arbor.mongo.internal.protocol.Transactions;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Rules of a real MongoDB that the embedded server does not enforce, checked on what Arbor asks
 * of the driver: fakes of the driver's interfaces stand where the embedded server cannot answer
 * as a replica set or a sharded cluster would.
 */
class RealServerRulesTest {

  /** A proxy of {@code type} answering {@code answer}, or the return type's default. */
  static <T> T fake(Class<T> type, Answer answer) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "equals":
              return proxy == args[0];
            case "hashCode":
              return System.identityHashCode(proxy);
            case "toString":
              return "fake " + type.getSimpleName();
            default:
              Object value = answer.answer(method, args == null ? new Object[0] : args);
              if (value == null && method.getReturnType() == boolean.class) {
                return false;
              }
              if (value == null && method.getReturnType().isPrimitive()
                  && method.getReturnType() != void.class) {
                return 0;
              }
              return value;
          }
        }));
  }

  /** What a fake answers to a call. */
  interface Answer {
    Object answer(Method method, Object[] args) throws Throwable;
  }

  /** Thrown by a fake session to end a change once its transaction was started. */
  private static final class Started extends RuntimeException {
    private static final long serialVersionUID = 1L;
  }

  @Test
  void everyTransactionArborStartsReadsFromThePrimary() {
    // A client configured secondaryPreferred: the driver gives a transaction started without a
    // read preference the client's, and then fails its every read ("Read preference in a
    // transaction must be primary").
    List<TransactionOptions> started = new ArrayList<>();
    ClientSession session = fake(ClientSession.class, (m, args) -> {
      switch (m.getName()) {
        case "withTransaction":
          started.add(args.length > 1 ? (TransactionOptions) args[1] : null);
          return null;
        case "startTransaction":
          started.add(args.length > 0 ? (TransactionOptions) args[0] : null);
          throw new Started();
        default:
          return null;
      }
    });
    MongoClient client = fake(MongoClient.class, (m, args) -> m.getName().equals("startSession")
        ? session : null);
    MongoTreeStore store = (MongoTreeStore) TreePattern.NESTED_SETS.open(
        MongoTestServer.get().freshCollection().withReadPreference(
            ReadPreference.secondaryPreferred()));
    store.load(Tree.parse("a(b) c"));
    Transactions transactions = new Transactions(client, store.data, store.lock,
        Transactions.MAX_DOCUMENTS);
    assertTrue(transactions.available(), "the probe ran in the fake's transaction");
    assertThrows(Started.class, () -> transactions.run("a change", change -> { }, null));
    assertEquals(2, started.size(), "the probe's transaction and the change's: " + started);
    for (TransactionOptions o : started) {
      assertTrue(o != null && ReadPreference.primary().equals(o.getReadPreference()),
          "a transaction Arbor starts names the primary: " + o);
    }
  }

  @Test
  void aServerOlderThanMongoDb5IsRefusedAtOpenNamingItsVersion() {
    // buildInfo of a MongoDB 4.4, through the client the store is given.
    List<Document> commands = new ArrayList<>();
    com.mongodb.client.MongoDatabase[] database = new com.mongodb.client.MongoDatabase[1];
    database[0] = fake(com.mongodb.client.MongoDatabase.class, (m, args) -> {
      if (m.getName().equals("runCommand")) {
        commands.add((Document) args[0]);
        return new Document("version", "4.4.29").append("ok", 1.0);
      }
      return m.getReturnType() == com.mongodb.client.MongoDatabase.class ? database[0] : null;
    });
    MongoClient client = fake(MongoClient.class, (m, args) -> m.getName().equals("getDatabase")
        ? database[0] : null);
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    dev.arbor.core.TreeException e = assertThrows(dev.arbor.core.TreeException.class,
        () -> TreePattern.NESTED_SETS.open(c, TreeOptions.defaults().withTransactions(client)));
    assertTrue(e.getMessage().contains("MongoDB 4.4.29") && e.getMessage().contains("5.0 or later")
        && e.getMessage().contains(c.getNamespace().getFullName()), e.getMessage());
    assertEquals(List.of(new Document("buildInfo", 1)), commands);

    // The serverInfo of an explain (no client): a mongod's, and a mongos's over two shards.
    assertEquals("4.4.6", ServerCapabilities.explainedVersion(Document.parse(
        "{queryPlanner: {winningPlan: {stage: 'EOF'}}, serverInfo: {host: 'h', port: 27017,"
            + " version: '4.4.6', gitVersion: 'x'}, ok: 1}")));
    assertEquals("4.4.6", ServerCapabilities.explainedVersion(Document.parse(
        "{queryPlanner: {winningPlan: {stage: 'SHARD_MERGE', shards: [{shardName: 's0',"
            + " serverInfo: {version: '5.0.3'}}, {shardName: 's1', serverInfo: {version:"
            + " '4.4.6'}}]}}, serverInfo: {version: '5.0.3'}, ok: 1}")));
    for (String old : new String[] {"4.4.6", "4.0.0", "3.6.23"}) {
      assertThrows(dev.arbor.core.TreeException.class,
          () -> ServerCapabilities.requireSupportedVersion(old, "db.t"));
    }
    for (String supported : new String[] {"5.0.0", "6.0.19", "7.0.2", "8.0.4", "8.2.0-rc1",
        "10.0.0"}) {
      ServerCapabilities.requireSupportedVersion(supported, "db.t");
    }
    ServerCapabilities.requireSupportedVersion(null, "db.t"); // no explain: the embedded server

    // The embedded server reports 5.0.0 to buildInfo and has no explain: it is accepted both ways.
    TreePattern.NESTED_SETS.open(MongoTestServer.get().freshCollection(),
        TreeOptions.defaults().withTransactions(MongoTestServer.get().client()));
    TreePattern.NESTED_SETS.open(MongoTestServer.get().freshCollection());
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(value = TreePattern.class,
      names = {"NESTED_SETS", "CHILD_REFERENCES"})
  void theLateUpdatesOfAStreamedLoadCarryTheScope(TreePattern pattern) {
    List<org.bson.BsonDocument> statements = new java.util.concurrent.CopyOnWriteArrayList<>();
    com.mongodb.event.CommandListener listener = new com.mongodb.event.CommandListener() {
      @Override
      public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
        if (event.getCommandName().equals("update")) {
          event.getCommand().getArray("updates")
              .forEach(u -> statements.add(u.asDocument().getDocument("q").clone()));
        }
      }
    };
    try (MongoClient client = MongoTestServer.get().recordingClient(listener)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection(client);
      MongoTreeStore store = (MongoTreeStore) pattern.open(c,
          TreeOptions.defaults().withScope("tenant", "acme").capabilities(c).loadBatchSize(64));
      Tree deep = StreamLoadCarryTest.tree(600, 150); // an open path deeper than 64 / 8
      statements.clear();
      assertEquals(deep.size(), store.load(deep.entries().iterator()));
      assertEquals(deep, store.snapshot());
      long late = statements.stream().filter(q -> q.containsKey(Step.MARK + ".v")).count();
      assertTrue(late > 0, "the load sent late updates: " + statements.size());
      for (org.bson.BsonDocument q : statements) {
        assertTrue(carries(q, "tenant", new org.bson.BsonString("acme")),
            "every statement carries the scope equality: " + q.toJson());
      }
    }
  }

  @Test
  void aGraphLookupRefusedInATransactionOnAShardedCollectionFallsBackToTheWalk() {
    // MongoDB refuses $graphLookup of a sharded collection in a transaction with code 3904801
    // ("Cannot run $graphLookup with a sharded foreign collection in a transaction") as well as
    // with 263 (OperationNotSupportedInTransaction).
    for (int code : new int[] {3904801, 263}) {
      com.mongodb.MongoCommandException e = new com.mongodb.MongoCommandException(
          new org.bson.BsonDocument("ok", new org.bson.BsonDouble(0))
              .append("code", new org.bson.BsonInt32(code))
              .append("errmsg", new org.bson.BsonString("Cannot run $graphLookup with a sharded"
                  + " foreign collection in a transaction")), new com.mongodb.ServerAddress());
      assertTrue(Queries.graphLookupOutOfMemory(e), "code " + code);
    }
  }

  @Test
  void aCollectionWithALocaleDefaultCollationIsRefusedAndIndexesAreSimple() {
    // listIndexes of a collection created with {collation: {locale: "en", strength: 2}}, as
    // MongoDB answers it: the _id index carries the collection's default collation.
    List<Document> caseInsensitive = List.of(Document.parse("{v: 2, key: {_id: 1}, name: '_id_',"
        + " collation: {locale: 'en', caseLevel: false, caseFirst: 'off', strength: 2,"
        + " numericOrdering: false, alternate: 'non-ignorable', maxVariable: 'punct',"
        + " normalization: false, backwards: false, version: '57.1'}}"),
        Document.parse("{v: 2, key: {parent: 1, arborRank: 1}, name: 'parent_1_arborRank_1',"
            + " collation: {locale: 'simple'}}"));
    dev.arbor.core.TreeException e = assertThrows(dev.arbor.core.TreeException.class,
        () -> ServerCapabilities.requireSimpleCollation(caseInsensitive, "shop.categories"));
    assertTrue(e.getMessage().contains("'shop.categories'")
        && e.getMessage().contains("\"locale\": \"en\"")
        && e.getMessage().contains("\"strength\": 2"), e.getMessage());
    // No collation (the simple one, which listIndexes omits), or simple named: accepted.
    ServerCapabilities.requireSimpleCollation(List.of(Document.parse(
        "{v: 2, key: {_id: 1}, name: '_id_'}")), "shop.categories");
    ServerCapabilities.requireSimpleCollation(List.of(Document.parse(
        "{v: 2, key: {_id: 1}, name: '_id_', collation: {locale: 'simple'}}")), "shop.categories");
    ServerCapabilities.requireSimpleCollation(List.of(), "shop.categories"); // no collection yet

    // Arbor's own indexes name the simple collation, so a collection's default never applies.
    List<org.bson.BsonDocument> created = new java.util.concurrent.CopyOnWriteArrayList<>();
    com.mongodb.event.CommandListener listener = new com.mongodb.event.CommandListener() {
      @Override
      public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
        if (event.getCommandName().equals("createIndexes")) {
          event.getCommand().getArray("indexes").forEach(i -> created.add(i.asDocument().clone()));
        }
      }
    };
    try (MongoClient client = MongoTestServer.get().recordingClient(listener)) {
      for (TreePattern pattern : TreePattern.values()) {
        for (TreeOptions options : List.of(TreeOptions.defaults(),
            TreeOptions.defaults().withScope("tenant", "acme"))) {
          MongoTree tree = pattern.open(MongoTestServer.get().freshCollection(client), options);
          tree.ensureIndexes();
          tree.load(Tree.parse("a(b)"));
          assertEquals(List.of(), tree.check());
        }
      }
    }
    assertTrue(created.size() >= 10, "indexes were created: " + created);
    for (org.bson.BsonDocument index : created) {
      assertEquals(new org.bson.BsonDocument("locale", new org.bson.BsonString("simple")),
          index.getDocument("collation", new org.bson.BsonDocument()), index.toJson());
    }
  }

  @Test
  void theLockStateIsReadAtMajority() {
    List<org.bson.BsonDocument> lockReads = new java.util.concurrent.CopyOnWriteArrayList<>();
    com.mongodb.event.CommandListener listener = new com.mongodb.event.CommandListener() {
      @Override
      public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
        org.bson.BsonDocument command = event.getCommand();
        if (event.getCommandName().equals("find")
            && command.getDocument("filter").equals(new org.bson.BsonDocument("_id",
                TreeLock.LOCK_ID))) {
          lockReads.add(command.clone());
        }
      }
    };
    try (MongoClient client = MongoTestServer.get().recordingClient(listener)) {
      MongoTree tree = TreePattern.PARENT_REFERENCES.open(
          MongoTestServer.get().freshCollection(client));
      tree.load(Tree.parse("a(b c) d"));
      tree.insert("e", dev.arbor.core.Position.lastChildOf("d"));
      tree.descendants("a", Integer.MAX_VALUE);
      tree.ancestors("e");
      assertEquals(List.of(), tree.check());
    }
    assertTrue(!lockReads.isEmpty(), "the lock document was read");
    for (org.bson.BsonDocument find : lockReads) {
      assertEquals(new org.bson.BsonDocument("level", new org.bson.BsonString("majority")),
          find.getDocument("readConcern", new org.bson.BsonDocument()), find.toJson());
    }
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(TreePattern.class)
  void aStreamWhoseCursorTheServerKilledWhileIdleGoesOn(TreePattern pattern) {
    // The server kills a cursor idle for 10 minutes (cursorTimeoutMillis): killCursors here does
    // the same at once, between two entries the consumer takes, while the stream holds a cursor
    // with more batches to come (a forest of 2 500 roots: the roots cursor of every pattern).
    java.util.Set<Long> cursors = java.util.concurrent.ConcurrentHashMap.newKeySet();
    com.mongodb.event.CommandListener listener = new com.mongodb.event.CommandListener() {
      @Override
      public void commandSucceeded(com.mongodb.event.CommandSucceededEvent event) {
        org.bson.BsonDocument reply = event.getResponse();
        if (reply.isDocument("cursor")) {
          long id = reply.getDocument("cursor").getInt64("id").getValue();
          if (id != 0) {
            cursors.add(id);
          }
        }
      }
    };
    Tree.Builder b = Tree.builder();
    for (int i = 0; i < 2_500; i++) {
      b.add(String.format("r%04d", i), null);
    }
    b.add("c", "r0001");
    Tree forest = b.build();
    try (MongoClient client = MongoTestServer.get().recordingClient(listener)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection(client);
      MongoTree tree = pattern.open(c);
      tree.ensureIndexes();
      tree.load(forest);
      List<Node> read = new ArrayList<>();
      try (java.util.stream.Stream<Node> entries = tree.entries()) {
        java.util.Iterator<Node> it = entries.iterator();
        for (int i = 0; i < 10; i++) {
          read.add(it.next());
        }
        assertTrue(!cursors.isEmpty(), "the stream holds a cursor");
        org.bson.BsonArray ids = new org.bson.BsonArray();
        cursors.forEach(id -> ids.add(new org.bson.BsonInt64(id)));
        Document killed = MongoTestServer.get().database().runCommand(new Document("killCursors",
            c.getNamespace().getCollectionName()).append("cursors", ids));
        assertEquals(ids.size(), killed.getList("cursorsKilled", Object.class).size(),
            killed.toJson());
        it.forEachRemaining(read::add);
      }
      assertEquals(forest.entries(), read);
    }
  }

  @Test
  void isolatedReadersWriteTheLockDocumentAndUnisolatedReadersOnlyRead() {
    List<String> commands = new java.util.concurrent.CopyOnWriteArrayList<>();
    com.mongodb.event.CommandListener listener = new com.mongodb.event.CommandListener() {
      @Override
      public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
        commands.add(event.getCommandName());
      }
    };
    MongoCollection<Document> base = MongoTestServer.get().freshCollection();
    // Nodes written by another process that has not made a lock document yet.
    TreePattern.PARENT_REFERENCES.open(base).load(Tree.parse("a(b c) d"));
    base.deleteMany(new Document("_id", new Document("$type", "object")));
    try (MongoClient client = MongoTestServer.get().recordingClient(listener)) {
      MongoCollection<Document> c = client.getDatabase(base.getNamespace().getDatabaseName())
          .getCollection(base.getNamespace().getCollectionName());
      MongoTree readOnly = TreePattern.PARENT_REFERENCES.open(c,
          TreeOptions.defaults().withIsolatedReads(false));
      commands.clear();
      readAll(readOnly);
      assertTrue(java.util.Set.of("find", "aggregate", "count", "getMore", "killCursors")
          .containsAll(commands), "only reads: " + commands);

      MongoTree isolated = TreePattern.PARENT_REFERENCES.open(c);
      commands.clear();
      readAll(isolated);
      assertTrue(commands.contains("update") || commands.contains("findAndModify"),
          "the first isolated read creates the lock document: " + commands);
    }
  }

  private static void readAll(MongoTree tree) {
    assertEquals(List.of("a"), tree.ancestors("b"));
    assertEquals(List.of("b", "c"), tree.children("a"));
    assertEquals(Tree.parse("a(b c) d"), tree.snapshot());
  }

  /**
   * {@code collection}, whose every {@code aggregate} with a {@code $graphLookup} stage fails as
   * MongoDB fails it in a transaction on a sharded collection (code 3904801); counted in {@code
   * refused}.
   */
  @SuppressWarnings("unchecked")
  static <T> MongoCollection<T> refusingGraphLookup(MongoCollection<T> collection,
      java.util.concurrent.atomic.AtomicInteger refused) {
    return (MongoCollection<T>) Proxy.newProxyInstance(MongoCollection.class.getClassLoader(),
        new Class<?>[] {MongoCollection.class}, (proxy, method, args) -> {
          Object[] a = args == null ? new Object[0] : args;
          if (method.getName().equals("aggregate") && java.util.Arrays.stream(a).anyMatch(
              x -> x instanceof List<?> l && String.valueOf(l).contains("$graphLookup"))) {
            return fake(com.mongodb.client.AggregateIterable.class, (m, ignored) -> {
              if (m.getReturnType() == com.mongodb.client.AggregateIterable.class) {
                return null; // replaced below: chained options return the same iterable
              }
              refused.incrementAndGet();
              throw new com.mongodb.MongoCommandException(new org.bson.BsonDocument("ok",
                  new org.bson.BsonDouble(0)).append("code", new org.bson.BsonInt32(3904801))
                  .append("errmsg", new org.bson.BsonString("Cannot run $graphLookup with a"
                      + " sharded foreign collection in a transaction")),
                  new com.mongodb.ServerAddress());
            }, true);
          }
          Object result;
          try {
            result = method.invoke(collection, a);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
          return result instanceof MongoCollection<?> derived
              ? refusingGraphLookup(derived, refused) : result;
        });
  }

  /** As {@link #fake(Class, Answer)}; {@code chained}: a call returning the type returns it. */
  static <T> T fake(Class<T> type, Answer answer, boolean chained) {
    Object[] self = new Object[1];
    T t = fake(type, (m, args) -> chained && m.getReturnType() == type ? self[0]
        : answer.answer(m, args));
    self[0] = t;
    return t;
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(value = TreePattern.class,
      names = {"PARENT_REFERENCES", "CHILD_REFERENCES"})
  void aRefusedGraphLookupIsWalkedAndNotAskedAgain(TreePattern pattern) {
    java.util.concurrent.atomic.AtomicInteger refused =
        new java.util.concurrent.atomic.AtomicInteger();
    MongoCollection<Document> c = refusingGraphLookup(MongoTestServer.get().freshCollection(),
        refused);
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, new ServerCapabilities(c,
        ServerCapabilities.Mode.ON, ServerCapabilities.Mode.PROBE));
    store.load(Tree.parse("a(b(c(d))) e"));
    assertEquals(List.of("a", "b", "c"), store.ancestors("d"), "walked instead");
    int once = refused.get();
    assertTrue(once > 0, "the store asked for $graphLookup first");
    // The refusal aborted the transaction it met: its retry, and every later walk, walk at once.
    assertEquals(List.of("b", "c", "d"), store.descendants("a", Integer.MAX_VALUE));
    store.move("c", dev.arbor.core.Position.lastChildOf("e"));
    assertEquals(List.of("e", "c"), store.ancestors("d"));
    assertEquals(List.of(), store.check());
    assertEquals(once, refused.get(), "no $graphLookup after the refusal");
  }

  /** {@code filter} selects by {@code field} = {@code value}: at its top, or in an {@code $and}. */
  static boolean carries(org.bson.BsonDocument filter, String field, org.bson.BsonValue value) {
    if (value.equals(filter.get(field))) {
      return true;
    }
    if (filter.isArray("$and")) {
      for (org.bson.BsonValue each : filter.getArray("$and")) {
        if (each.isDocument() && carries(each.asDocument(), field, value)) {
          return true;
        }
      }
    }
    return false;
  }
}
