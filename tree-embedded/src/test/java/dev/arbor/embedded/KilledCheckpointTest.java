package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory's process killed around its checkpoints ({@link Writer}). A class of its own
 * (it was a test of {@code EmbeddedMongoTest}), unchanged: its six child JVMs are most of the
 * module's test time, and alone in a class it runs in one surefire fork while the other fork
 * runs the rest of the module's tests.
 */
class KilledCheckpointTest {
  @TempDir
  Path dir;

  /**
   * A process writing and checkpointing in a loop, killed at several moments (just before,
   * during and after a checkpoint, and between two): the next start finds exactly the rounds of
   * the last completed checkpoint, with a sound {@code _id} index.
   */
  @Test
  void aKilledProcessLeavesTheLastCheckpoint() throws Exception {
    String[] markers = {"saving 1", "saved 1", "saving 2", "saving 2", "saved 2", "saving 3"};
    long[] delays = {0, 0, 0, 30, 150, 5};
    for (int run = 0; run < markers.length; run++) {
      Path data = dir.resolve("run" + run);
      if (run > 0) {
        // Start from a saved state, so that a kill before the first checkpoint is visible too.
        try (EmbeddedMongo mongo = EmbeddedMongo.start(data)) {
          collection(mongo).insertOne(new Document("_id", "before"));
        }
      }
      int saved = killDuring(data, markers[run], delays[run]);
      try (EmbeddedMongo mongo = EmbeddedMongo.start(data)) {
        MongoCollection<Document> c = collection(mongo);
        long rounds = c.countDocuments(Filters.exists("round"));
        assertEquals(0, rounds % Writer.PER_ROUND, "whole rounds only: " + rounds);
        long k = rounds / Writer.PER_ROUND;
        assertTrue(k == saved || k == saved + 1, "saved " + saved + ", found " + k);
        assertEquals(run > 0 ? 1 : 0, c.countDocuments(Filters.eq("_id", "before")));
        if (k > 1) {
          assertEquals(Writer.PER_ROUND, c.countDocuments(Filters.eq("next", k)));
        }
        for (int round = 1; round <= k; round++) {
          assertTrue(c.find(Filters.eq("_id", round + "-" + (Writer.PER_ROUND - 1))).first()
              != null, "the _id index finds the last document of round " + round);
        }
        if (k > 0) {
          MongoWriteException duplicate = assertThrows(MongoWriteException.class,
              () -> c.insertOne(new Document("_id", "1-0")));
          assertEquals(ErrorCategory.DUPLICATE_KEY, duplicate.getError().getCategory());
        }
      }
    }
  }

  /** Runs {@link Writer} on {@code data}, kills it after {@code marker} and a delay. */
  private static int killDuring(Path data, String marker, long delayMillis) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    // A quick-starting JVM (C1 only, serial GC): the writer runs for a second or two.
    Process p = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
        classpath, Writer.class.getName(), data.toString())
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    int saved = 0;
    List<String> seen = new ArrayList<>();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        seen.add(line);
        if (line.startsWith("saved ")) {
          saved = Integer.parseInt(line.substring(6));
        }
        if (line.equals(marker)) {
          Thread.sleep(delayMillis);
          assertTrue(p.isAlive(), "still writing when killed");
          p.destroyForcibly();
          break;
        }
      }
    } finally {
      p.destroyForcibly();
      assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    }
    assertFalse(seen.isEmpty(), "the writer started");
    assertEquals(marker, seen.get(seen.size() - 1), "killed after " + seen);
    return saved;
  }

  private static MongoCollection<Document> collection(EmbeddedMongo mongo) {
    return mongo.client().getDatabase("d").getCollection("c");
  }
}
