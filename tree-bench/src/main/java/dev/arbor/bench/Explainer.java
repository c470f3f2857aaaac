package dev.arbor.bench;

import com.mongodb.MongoException;
import com.mongodb.client.MongoDatabase;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Replays the commands of one operation under {@code explain} (verbosity {@code executionStats})
 * and adds up the documents and index keys the server examined. Reads are explained as they were
 * sent; updates and deletes statement by statement (explain takes one); inserts and other commands
 * are not explainable and are skipped. Explain never writes.
 */
final class Explainer {
  private static final Set<String> EXPLAINABLE =
      Set.of("find", "aggregate", "count", "distinct", "update", "delete", "findAndModify");
  /** Fields the driver adds to a command that must not go inside {@code explain}. */
  private static final Set<String> SESSION_FIELDS =
      Set.of("lsid", "txnNumber", "autocommit", "startTransaction", "apiVersion", "apiStrict",
          "apiDeprecationErrors");

  /**
   * What the server examined for a list of commands.
   *
   * @param docsExamined documents examined, summed
   * @param keysExamined index keys examined, summed
   * @param explained commands (statements) explained
   * @param skipped commands not explainable or whose explain failed
   */
  record Explained(long docsExamined, long keysExamined, int explained, int skipped) {}

  private Explainer() {}

  static Explained explain(MongoDatabase database, List<BsonDocument> commands) {
    long docs = 0;
    long keys = 0;
    int explained = 0;
    int skipped = 0;
    for (BsonDocument command : commands) {
      List<BsonDocument> statements = statements(command);
      if (statements.isEmpty()) {
        skipped++;
        continue;
      }
      for (BsonDocument statement : statements) {
        try {
          BsonDocument result = database.runCommand(new BsonDocument("explain", statement)
              .append("verbosity", new BsonString("executionStats")), BsonDocument.class);
          long[] totals = new long[2];
          addTotals(result, totals);
          docs += totals[0];
          keys += totals[1];
          explained++;
        } catch (MongoException e) {
          skipped++;
        }
      }
    }
    return new Explained(docs, keys, explained, skipped);
  }

  /**
   * The explainable statements of a command as the driver sent it, without the driver's session
   * and {@code $}-fields; empty if the command cannot be explained.
   */
  static List<BsonDocument> statements(BsonDocument sent) {
    String name = sent.getFirstKey();
    if (!EXPLAINABLE.contains(name)) {
      return List.of();
    }
    BsonDocument command = new BsonDocument();
    for (Map.Entry<String, BsonValue> e : sent.entrySet()) {
      if (!e.getKey().startsWith("$") && !SESSION_FIELDS.contains(e.getKey())) {
        command.append(e.getKey(), e.getValue());
      }
    }
    String list = name.equals("update") ? "updates" : name.equals("delete") ? "deletes" : null;
    if (list == null || !(command.get(list) instanceof BsonArray items) || items.size() <= 1) {
      return List.of(command);
    }
    return items.stream().map(item -> {
      BsonDocument one = command.clone();
      one.put(list, new BsonArray(List.of(item)));
      return one;
    }).toList();
  }

  /**
   * Adds the {@code totalDocsExamined} and {@code totalKeysExamined} of an explain output into
   * {@code totals}: those of each {@code executionStats} (not looking inside it again, where a
   * sharded plan repeats them per shard) and those reported by stages outside it (a {@code
   * $lookup} stage reports its own).
   */
  static void addTotals(BsonDocument doc, long[] totals) {
    for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
      BsonValue v = e.getValue();
      if (e.getKey().equals("executionStats") && v.isDocument()) {
        totals[0] += number(v.asDocument().get("totalDocsExamined"));
        totals[1] += number(v.asDocument().get("totalKeysExamined"));
      } else if (e.getKey().equals("totalDocsExamined")) {
        totals[0] += number(v);
      } else if (e.getKey().equals("totalKeysExamined")) {
        totals[1] += number(v);
      } else if (v.isDocument()) {
        addTotals(v.asDocument(), totals);
      } else if (v.isArray()) {
        for (BsonValue item : v.asArray()) {
          if (item.isDocument()) {
            addTotals(item.asDocument(), totals);
          }
        }
      }
    }
  }

  private static long number(BsonValue v) {
    return v != null && v.isNumber() ? v.asNumber().longValue() : 0;
  }
}
