package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.layout.MaterializedPathLayout;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What a real server would do differently, checked here on the commands Arbor sends. */
class RealServerPathsTest {

  @Test
  void aProbeThatMeetsANetworkErrorIsAskedAgainNotRememberedAsNo() {
    try (MongoClient unreachable = MongoClients.create(MongoClientSettings.builder()
        .applyToClusterSettings(b -> b.hosts(List.of(new com.mongodb.ServerAddress(
            "127.0.0.1", 1))).serverSelectionTimeout(200, TimeUnit.MILLISECONDS)).build())) {
      ServerCapabilities caps = ServerCapabilities.probing(
          unreachable.getDatabase("arbor").getCollection("t"));
      assertFalse(caps.pipelineUpdates());
      assertFalse(caps.graphLookup());
      assertTrue(caps.toString().contains("graphLookup=null")
          && caps.toString().contains("pipelineUpdates=null"), caps.toString());
    }
    // The server's own answer is remembered.
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    c.insertOne(new Document("_id", "x"));
    ServerCapabilities caps = ServerCapabilities.probing(c);
    caps.pipelineUpdates();
    caps.graphLookup();
    assertFalse(caps.toString().contains("null"), caps.toString());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void repairReadsInNaturalOrder(TreePattern pattern) {
    List<String> finds = new CopyOnWriteArrayList<>();
    CommandListener listener = new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent event) {
        if (event.getCommandName().equals("find")) {
          finds.add(event.getCommand().toJson());
        }
      }
    };
    try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new com.mongodb.ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(listener).build())) {
      MongoCollection<Document> base = MongoTestServer.get().freshCollection();
      MongoCollection<Document> c = client.getDatabase(base.getNamespace().getDatabaseName())
          .getCollection(base.getNamespace().getCollectionName());
      MongoTree tree = pattern.open(c);
      tree.load(Tree.parse("a(b c) d"));
      finds.clear();
      assertEquals(List.of(), tree.repair());
      assertTrue(finds.stream().anyMatch(f -> f.contains("\"sort\": {\"$natural\": 1}")),
          "the repair's scan asks for natural order: " + finds);
    }
  }

  @Test
  void depthLimitedDescendantsSendOnlyRegexesPcreCompiles() {
    List<String> regexes = new CopyOnWriteArrayList<>();
    CommandListener listener = new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent event) {
        collect(event.getCommand(), regexes);
      }
    };
    // A chain of 250 nodes with long ids that need escaping: deep prefixes, long paths.
    Tree.Builder b = Tree.builder();
    dev.arbor.core.InMemoryTreeStore reference = new dev.arbor.core.InMemoryTreeStore();
    String parent = null;
    for (int i = 0; i < 250; i++) {
      String id = "n" + i + ",$-\\." + "x".repeat(20);
      b.add(id, parent);
      parent = id;
    }
    Tree chain = b.build();
    reference.load(chain);
    try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new com.mongodb.ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(listener).build())) {
      MongoCollection<Document> base = MongoTestServer.get().freshCollection();
      MongoTree tree = TreePattern.MATERIALIZED_PATHS.open(client.getDatabase(
          base.getNamespace().getDatabaseName()).getCollection(
          base.getNamespace().getCollectionName()));
      tree.load(chain);
      List<String> ids = chain.ids();
      for (int from : new int[] {0, 5, 120, 240}) {
        for (int depth : new int[] {1, 2, 50, 101, 102, 249, 1_000}) {
          String id = ids.get(from);
          assertEquals(reference.descendants(id, depth), tree.descendants(id, depth),
              "descendants(" + from + ", " + depth + ")");
        }
      }
    }
    assertFalse(regexes.isEmpty(), "small limits still go to the server");
    for (String regex : regexes) {
      assertTrue(regex.length() <= MaterializedPathLayout.MAX_REGEX_LENGTH, regex);
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\{0,(\\d+)\\}")
          .matcher(regex);
      while (m.find()) {
        assertTrue(Integer.parseInt(m.group(1)) <= MaterializedPathLayout.MAX_REGEX_DEPTH,
            regex);
      }
    }
  }

  @Test
  void graphLookupsPastTheirMemoryLimitAreToldApartFromOtherErrors() {
    com.mongodb.ServerAddress here = new com.mongodb.ServerAddress();
    java.util.function.BiFunction<Integer, String, com.mongodb.MongoCommandException> error =
        (code, message) -> new com.mongodb.MongoCommandException(new org.bson.BsonDocument("ok",
            new org.bson.BsonDouble(0)).append("code", new org.bson.BsonInt32(code))
            .append("errmsg", new org.bson.BsonString(message)), here);
    assertTrue(Queries.graphLookupOutOfMemory(error.apply(40099,
        "$graphLookup reached maximum memory consumption")));
    assertTrue(Queries.graphLookupOutOfMemory(error.apply(292,
        "Exceeded memory limit for $graphLookup")));
    assertTrue(Queries.graphLookupOutOfMemory(error.apply(263,
        "$graphLookup is not supported in a transaction on a sharded collection")));
    assertFalse(Queries.graphLookupOutOfMemory(error.apply(13, "Unauthorized")));
    assertFalse(Queries.graphLookupOutOfMemory(error.apply(40324,
        "Unrecognized pipeline stage name")));
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void everyNodeQueryAndWriteCarriesTheSimpleCollation(TreePattern pattern) {
    List<org.bson.BsonDocument> commands = new CopyOnWriteArrayList<>();
    CommandListener listener = new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent event) {
        commands.add(event.getCommand().clone());
      }
    };
    try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new com.mongodb.ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(listener).build())) {
      MongoCollection<Document> base = MongoTestServer.get().freshCollection();
      MongoTree tree = pattern.open(client.getDatabase(base.getNamespace().getDatabaseName())
          .getCollection(base.getNamespace().getCollectionName()));
      tree.load(Tree.parse("a(b(c d) e) f"));
      commands.clear();
      tree.insert("x", dev.arbor.core.Position.lastChildOf("c"));
      tree.move("b", dev.arbor.core.Position.lastChildOf("f"));
      tree.descendants("f", 2);
      tree.ancestors("x");
      tree.children("b");
      tree.delete("d");
      tree.check();
    }
    int checked = 0;
    for (org.bson.BsonDocument command : commands) {
      String name = command.getFirstKey();
      List<org.bson.BsonDocument> parts = new java.util.ArrayList<>();
      if (name.equals("find") || name.equals("aggregate")) {
        if (command.toJson().contains("\"arbor\"") && !command.toJson().contains("\"$in\"")) {
          continue; // a read of the lock document alone: its _id holds no user string
        }
        parts.add(command);
      } else if (name.equals("update") || name.equals("delete")) {
        for (org.bson.BsonValue s : command.getArray(name.equals("update") ? "updates"
            : "deletes")) {
          // Statements on the lock document, fences and journal parts name an _id of
          // Arbor's ({arbor: …}); every other statement reads or writes nodes.
          if (!s.asDocument().getDocument("q").toJson().contains("\"arbor\"")) {
            parts.add(s.asDocument());
          }
        }
      }
      for (org.bson.BsonDocument part : parts) {
        checked++;
        assertEquals("simple", part.getDocument("collation", new org.bson.BsonDocument())
            .getString("locale", new org.bson.BsonString("none")).getValue(), part.toJson());
      }
    }
    assertTrue(checked > 5, "node commands were checked: " + checked);
  }

  /** Every regular expression anywhere in a command. */
  private static void collect(org.bson.BsonValue v, List<String> out) {
    if (v.isRegularExpression()) {
      out.add(v.asRegularExpression().getPattern());
    } else if (v.isDocument()) {
      v.asDocument().values().forEach(x -> collect(x, out));
    } else if (v.isArray()) {
      v.asArray().forEach(x -> collect(x, out));
    }
  }
}
