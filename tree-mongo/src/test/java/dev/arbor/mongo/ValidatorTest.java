package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Deletion;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every document Arbor writes passes its pattern's validator: after every change, and at every
 * step of every change (a crash after each write leaves the collection as a validating server
 * would have had to accept it, journal and fence documents included).
 */
class ValidatorTest {
  private static final String FIXTURE = "a(b(c d) e(f)) g(h)";

  private static final List<Consumer<MongoTreeStore>> CHANGES = List.of(
      s -> s.insert("x", Position.lastChildOf("b"), Map.of("title", "X")),
      s -> s.move("b", Position.lastChildOf("g")),
      s -> s.move("e", Position.firstRoot()),
      s -> s.update("c", Map.of("title", "C")),
      s -> s.delete("b"),
      s -> s.delete("e", Deletion.LIFT_CHILDREN));

  private static void assertAllValid(TreePattern pattern, MongoCollection<Document> c,
      String where) {
    assertAllValid(pattern, TreeOptions.defaults(), c, where);
  }

  private static void assertAllValid(TreePattern pattern, TreeOptions options,
      MongoCollection<Document> c, String where) {
    Document validator = pattern.validator(options);
    for (BsonDocument d : c.withDocumentClass(BsonDocument.class).find()
        .into(new ArrayList<>())) {
      assertNull(SchemaCheck.problem(validator, d), () -> where + ": " + d.toJson());
    }
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void everyStepOfEveryChangeWritesDocumentsTheValidatorAccepts(TreePattern pattern) {
    everyStepOfEveryChangeIsAccepted(pattern, TreeOptions.defaults());
  }

  /** The same for one of several trees in a collection, its fields under names of their own. */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void scopedTreesWithTheirOwnFieldNamesPassTheirValidator(TreePattern pattern) {
    TreeOptions options = ScopedStoreContract.named(pattern).withScope("tenant", "t1");
    everyStepOfEveryChangeIsAccepted(pattern, options);
    Document validator = pattern.validator(options);
    for (TreeField f : TreeField.of(pattern)) {
      assertTrue(validator.toJson().contains("\"" + ScopedStoreContract.NAMES.get(f) + "\""),
          f + " under its own name: " + validator.toJson());
    }
    // a node without the scope field, or with a string _id in a scoped collection, is refused
    BsonDocument unscoped = BsonDocument.parse("{_id: {s: 't1', id: 'a'}}");
    assertNotNull(SchemaCheck.problem(validator, unscoped));
    assertNotNull(SchemaCheck.problem(validator, BsonDocument.parse("{_id: 'a', tenant: 't1'}")));
    // default names are not what a named store reads: a document with them fails
    BsonDocument defaults = BsonDocument.parse("{_id: {s: 't1', id: 'a'}, tenant: 't1', parent: null,"
        + " children: [], ancestors: [], path: null, left: 1, right: 2, arborDepth: 0, arborRank: 0}");
    assertNotNull(SchemaCheck.problem(validator, defaults));
  }

  private static void everyStepOfEveryChangeIsAccepted(TreePattern pattern, TreeOptions options) {
    for (int i = 0; i < CHANGES.size(); i++) {
      Consumer<MongoTreeStore> change = CHANGES.get(i);
      MongoCollection<Document> clean = MongoTestServer.get().freshCollection();
      SwitchableSender countingSender = new SwitchableSender();
      MongoTreeStore counting = (MongoTreeStore) pattern.open(clean,
          options.capabilities(clean).sender(countingSender));
      counting.load(Tree.parse(FIXTURE));
      assertAllValid(pattern, options, clean, pattern + " after load");
      StepwiseSender counter = StepwiseSender.crashingAfter(-1);
      countingSender.target = counter;
      change.accept(counting);
      assertAllValid(pattern, options, clean, pattern + " change " + i);
      for (int k = 0; k < counter.written; k++) {
        MongoCollection<Document> c = MongoTestServer.get().freshCollection();
        SwitchableSender crashingSender = new SwitchableSender();
        MongoTreeStore crashing = (MongoTreeStore) pattern.open(c,
            options.capabilities(c).sender(crashingSender));
        crashing.load(Tree.parse(FIXTURE));
        crashingSender.target = StepwiseSender.crashingAfter(k);
        assertThrows(StepwiseSender.Crash.class, () -> change.accept(crashing));
        assertAllValid(pattern, options, c, pattern + " change " + i + ", crashed after " + k
            + " writes");
      }
    }
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, options);
    store.load(Tree.parse(FIXTURE));
    store.repair();
    assertAllValid(pattern, options, c, pattern + " after repair");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void everyWriteOfAStreamedGraftAndLoadIsAccepted(TreePattern pattern) {
    Tree grafted = Tree.parse("x(y(z1 z2) w) v");
    for (String under : new String[] {"b", null}) {
      MongoCollection<Document> clean = MongoTestServer.get().freshCollection();
      SwitchableSender countingSender = new SwitchableSender();
      MongoTreeStore counting = (MongoTreeStore) pattern.open(clean,
          ServerCapabilities.probing(clean).sender(countingSender).loadBatchSize(2));
      counting.load(Tree.parse(FIXTURE));
      StepwiseSender counter = StepwiseSender.crashingAfter(-1);
      countingSender.target = counter;
      counting.graft(under, grafted.entries().iterator());
      assertAllValid(pattern, clean, pattern + " after a graft under " + under);
      for (int k = 0; k < counter.written; k++) {
        MongoCollection<Document> c = MongoTestServer.get().freshCollection();
        SwitchableSender crashingSender = new SwitchableSender();
        MongoTreeStore crashing = (MongoTreeStore) pattern.open(c,
            ServerCapabilities.probing(c).sender(crashingSender).loadBatchSize(2));
        crashing.load(Tree.parse(FIXTURE));
        crashingSender.target = StepwiseSender.crashingAfter(k);
        assertThrows(StepwiseSender.Crash.class,
            () -> crashing.graft(under, grafted.entries().iterator()));
        assertAllValid(pattern, c, pattern + " graft under " + under + ", crashed after " + k
            + " writes");
      }
    }
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c,
        ServerCapabilities.probing(c).loadBatchSize(2));
    store.load(Tree.parse(FIXTURE).entries().iterator());
    assertAllValid(pattern, c, pattern + " after a streamed load");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void theValidatorRefusesWhatIsNotANodeOfThePattern(TreePattern pattern) {
    Document validator = pattern.validator();
    assertNotNull(SchemaCheck.problem(validator, BsonDocument.parse("{_id: 7, parent: null}")));
    assertNotNull(SchemaCheck.problem(validator, BsonDocument.parse("{_id: 'x', title: 'X'}")));
    assertNull(SchemaCheck.problem(validator, BsonDocument.parse(
        "{_id: {arbor: 'lock'}, arborLock: {version: 1}}")));
    String shaped = switch (pattern) {
      case PARENT_REFERENCES -> "{_id: 'x', parent: 5, rank: 0}";
      case CHILD_REFERENCES -> "{_id: 'x', children: [1, 2]}";
      case ARRAY_OF_ANCESTORS -> "{_id: 'x', parent: 'p', ancestors: 'p', rank: 0}";
      case MATERIALIZED_PATHS -> "{_id: 'x', path: ',p,', rank: 'first'}";
      case NESTED_SETS -> "{_id: 'x', parent: null, left: '1', right: 2, depth: 0}";
    };
    String problem = SchemaCheck.problem(validator, BsonDocument.parse(shaped));
    assertNotNull(problem, shaped);
    assertTrue(problem.contains("is not"), problem);
    assertEquals(pattern.validator(), validator, "a fresh, equal document each call");
  }
}
