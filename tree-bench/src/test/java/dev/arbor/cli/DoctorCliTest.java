package dev.arbor.cli;

import static dev.arbor.cli.Cli.onServer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.MongoTestServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code arbor doctor} against the test server, and its one-line errors. */
class DoctorCliTest {
  @Test
  void doctorPrintsOneLinePerCapabilityAndExitsZeroWhenEverythingUsedPassed() {
    Cli.Result r = Cli.run(onServer("doctor", "-q"));
    assertEquals(Arbor.EXIT_OK, r.exit(), r::toString);
    List<String> lines = r.out().lines().toList();
    assertTrue(lines.get(0).startsWith("server: ") && lines.get(0).contains("topology: ")
        && lines.get(0).contains("arbor_doctor_"), lines.get(0));
    assertEquals(32, lines.size(), r::toString); // header, 30 capabilities, summary
    for (String pattern : List.of("parent references", "child references",
        "array of ancestors", "materialized paths", "nested sets")) {
      for (String what : List.of("lock and journal", "concurrent writers", "crash recovery")) {
        String line = lines.stream().filter(l -> l.startsWith(what + ", " + pattern + " "))
            .findFirst().orElseThrow(() -> new AssertionError(what + ", " + pattern + "\n" + r));
        assertTrue(line.matches(".*\\s+used\\s+passed\\s.*"), line);
      }
    }
    for (String line : lines.subList(1, 31)) {
      assertTrue(line.matches(".*\\s(used\\s+passed|not offered -)\\s.*"), line);
    }
    if (MongoTestServer.get().embedded()) {
      assertTrue(lines.get(0).contains("embedded mongo-java-server"), lines.get(0));
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("transactions, nested sets")
          && l.contains("not offered")), r::toString);
    }
    assertTrue(lines.get(31).startsWith("healthy: "), lines.get(31));
    assertEquals("", r.stderr(), "-q: no progress");
  }

  @Test
  void aServerThatCannotBeReachedIsOneLineAndExitCodeOne() {
    Cli.Result r = Cli.run("doctor", "--uri",
        "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300");
    assertEquals(Arbor.EXIT_FAILURE, r.exit(), r::toString);
    assertEquals(List.of("arbor doctor: cannot reach MongoDB at 127.0.0.1:1: no server answered"
        + " within 0.3 s"), r.errLines());
    assertEquals("", r.out());
  }

  @Test
  void aMalformedUriOrDatabaseIsABadCommandLine() {
    Cli.Result uri = Cli.run("doctor", "--uri", "mongodb://user:secret@");
    assertEquals(Arbor.EXIT_USAGE, uri.exit(), uri::toString);
    assertEquals(1, uri.errLines().size(), uri::toString);
    assertFalse(uri.stderr().contains("secret"), uri::toString);
    Cli.Result db = Cli.run("doctor", "--database", "a/b");
    assertEquals(Arbor.EXIT_USAGE, db.exit(), db::toString);
    assertTrue(db.stderr().startsWith("arbor doctor: invalid --database 'a/b'"), db::toString);
  }
}
