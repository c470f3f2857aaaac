package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.tools.CommandMeter;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/**
 * The explain replay and the reply accounting, on documents shaped like the server's (the embedded
 * server has no explain, so these are checked on samples of MongoDB's documented output).
 */
class ExplainerTest {

  @Test
  void commandsLoseTheDriversFieldsAndUpdatesSplitIntoStatements() {
    BsonDocument update = BsonDocument.parse("{update: 'tree', ordered: true, $db: 'bench',"
        + " lsid: {id: 1}, $clusterTime: {}, updates: [{q: {_id: 'a'}, u: {$set: {x: 1}}},"
        + " {q: {ancestors: 'a'}, u: {$set: {y: 1}}, multi: true}]}");
    List<BsonDocument> statements = Explainer.statements(update);
    assertEquals(2, statements.size());
    for (BsonDocument s : statements) {
      assertFalse(s.containsKey("$db") || s.containsKey("lsid") || s.containsKey("$clusterTime"));
      assertEquals(1, s.getArray("updates").size());
    }
    BsonDocument find = BsonDocument.parse("{find: 'tree', filter: {ancestors: 'a'}, $db: 'b'}");
    assertEquals(List.of(BsonDocument.parse("{find: 'tree', filter: {ancestors: 'a'}}")),
        Explainer.statements(find));
    assertTrue(Explainer.statements(BsonDocument.parse("{insert: 'tree', documents: []}"))
        .isEmpty());
  }

  @Test
  void totalsComeFromExecutionStatsAndLookupStages() {
    long[] totals = new long[2];
    Explainer.addTotals(BsonDocument.parse("{queryPlanner: {}, executionStats: {nReturned: 3,"
        + " totalKeysExamined: 4, totalDocsExamined: 3, executionStages: {stage: 'FETCH',"
        + " docsExamined: 3}}}"), totals);
    assertArrayEquals(new long[] {3, 4}, totals);

    totals = new long[2];
    Explainer.addTotals(BsonDocument.parse("{stages: [{$cursor: {executionStats: {"
        + "totalDocsExamined: 1, totalKeysExamined: 1}}}, {$graphLookup: {},"
        + " totalDocsExamined: 40, totalKeysExamined: 40}]}"), totals);
    assertArrayEquals(new long[] {41, 41}, totals);

    totals = new long[2];
    Explainer.addTotals(BsonDocument.parse("{executionStats: {totalDocsExamined: 10,"
        + " totalKeysExamined: 12, executionStages: {shards: [{totalDocsExamined: 10,"
        + " totalKeysExamined: 12}]}}}"), totals);
    assertArrayEquals(new long[] {10, 12}, totals, "sharded totals are not counted twice");
  }

  @Test
  void repliesCountDocumentsReturnedAndWritten() {
    assertEquals(2, CommandMeter.returned(BsonDocument.parse(
        "{cursor: {id: 0, firstBatch: [{_id: 'a'}, {_id: 'b'}]}, ok: 1}")));
    assertEquals(1,
        CommandMeter.returned(BsonDocument.parse("{cursor: {nextBatch: [{}]}, ok: 1}")));
    assertEquals(0, CommandMeter.returned(BsonDocument.parse("{n: 3, ok: 1}")));
    assertEquals(3, CommandMeter.written("delete", BsonDocument.parse("{n: 3, ok: 1}")));
    assertEquals(2,
        CommandMeter.written("update", BsonDocument.parse("{n: 5, nModified: 2, ok: 1}")));
    assertEquals(3, CommandMeter.written("update", BsonDocument.parse(
        "{n: 1, nModified: 1, upserted: [{index: 0, _id: 'x'}, {index: 1, _id: 'y'}], ok: 1}")));
    assertEquals(0, CommandMeter.written("find", BsonDocument.parse("{n: 3, ok: 1}")));
    BsonDocument reply = BsonDocument.parse("{n: 1, ok: 1}");
    long size = new RawBsonDocument(reply, new BsonDocumentCodec()).getByteBuffer().remaining();
    assertEquals(size, CommandMeter.sizeOf(reply));
    assertEquals(size, CommandMeter.sizeOf(new RawBsonDocument(reply, new BsonDocumentCodec())));
  }

  @Test
  void lockAndJournalCommandsAreToldFromNodeCommands() {
    assertTrue(CommandMeter.touchesOnlyLock(BsonDocument.parse(
        "{find: 'x', filter: {_id: {arbor: 'lock'}}, limit: 1, $db: 't'}")));
    assertTrue(CommandMeter.touchesOnlyLock(BsonDocument.parse("{findAndModify: 'x', query: {$and: ["
        + "{_id: {arbor: 'lock'}}, {$or: [{owner: null}]}]}, update: {$set: {owner: 'o'}}}")));
    assertTrue(CommandMeter.touchesOnlyLock(BsonDocument.parse(
        "{delete: 'x', deletes: [{q: {'_id.arbor': 'journal'}, limit: 0}]}")));
    assertTrue(CommandMeter.touchesOnlyLock(BsonDocument.parse(
        "{insert: 'x', documents: [{_id: {arbor: 'journal', op: 'a', part: 0}, steps: []}]}")));
    assertFalse(CommandMeter.touchesOnlyLock(BsonDocument.parse(
        "{find: 'x', filter: {_id: {$in: ['n10', 'n2']}}}")));
    assertFalse(CommandMeter.touchesOnlyLock(BsonDocument.parse("{update: 'x', updates: ["
        + "{q: {_id: {arbor: 'lock'}}, u: {}}, {q: {_id: 'n1'}, u: {}}]}")));
    assertFalse(CommandMeter.touchesOnlyLock(BsonDocument.parse(
        "{insert: 'x', documents: [{_id: 'n1', parent: null}]}")));
  }
}
