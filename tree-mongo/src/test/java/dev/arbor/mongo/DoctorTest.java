package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link Doctor} against the test server (embedded, or the server of {@code ARBOR_MONGO_URI}):
 * everything it used passed, what the embedded server lacks is reported as not offered, and it
 * dropped its scratch collection without touching any other.
 */
class DoctorTest {
  @Test
  void everythingUsedPassesAndOnlyTheScratchCollectionIsTouched() throws Exception {
    MongoTestServer server = MongoTestServer.get();
    // A database of its own: the JVM's other classes write in theirs meanwhile.
    MongoDatabase db = server.databaseOfItsOwn("doctor");
    db.getCollection("bystander").insertOne(new Document("_id", "bystander").append("x", 1));
    Map<String, Long> before = contents(db);
    MongoClientSettings settings = MongoTestServer.settings(server.uri());
    String databaseName = db.getName();
    // docs-doctor:begin
    List<String> progress = new ArrayList<>();
    Doctor.Report report = Doctor.run(settings, databaseName, progress::add);
    report.lines().forEach(System.out::println);
    boolean healthy = report.passed();
    // docs-doctor:end
    assertTrue(healthy, () -> String.join("\n", report.lines()));
    DocsPages.assertShown(DocsPages.page("servers.md"), DocsPages.testSource("DoctorTest.java"),
        "docs-doctor");
    assertEquals(before, contents(db), "other collections");
    String scratch = report.collection().substring(db.getName().length() + 1);
    assertTrue(scratch.startsWith("arbor_doctor_"), scratch);
    assertFalse(db.listCollectionNames().into(new ArrayList<>()).contains(scratch),
        "the scratch collection is dropped");
    assertEquals(report.capabilities().size(), progress.size(), progress::toString);
    assertTrue(report.capabilities().size() >= 30, report::toString);
    for (Doctor.Capability c : report.capabilities()) {
      boolean offeredEverywhere = c.name().startsWith("lock and journal")
          || c.name().startsWith("concurrent") || c.name().startsWith("crash")
          || c.name().startsWith("bounded") || c.name().startsWith("large");
      if (offeredEverywhere) {
        assertEquals(Doctor.Status.PASSED, c.status(), c::line);
      }
      if (server.embedded() && !offeredEverywhere) {
        // no sessions, no pipeline updates, a $graphLookup that ignores startWith
        assertEquals(Doctor.Status.NOT_OFFERED, c.status(), c::line);
      }
    }
    if (server.embedded()) {
      assertTrue(report.topology().startsWith("embedded mongo-java-server"), report.topology());
    }
  }

  /** Every collection of the database with its number of documents. */
  private static Map<String, Long> contents(MongoDatabase db) {
    Map<String, Long> out = new TreeMap<>();
    for (String name : db.listCollectionNames()) {
      out.put(name, db.getCollection(name).countDocuments());
    }
    return out;
  }

  /** A server whose $graphLookup ignores startWith (the embedded one), used anyway, fails. */
  @Test
  void aWrongServerFeatureUsedAnywayIsReportedFailedWithItsReason() {
    assumeTrue(MongoTestServer.get().embedded(), "needs the embedded server's wrong $graphLookup");
    MongoTestServer server = MongoTestServer.get();
    Doctor.Report report = Doctor.run(MongoTestServer.settings(server.uri()),
        server.database().getName(), line -> {}, true, name -> name.startsWith("$graphLookup"));
    report.lines().forEach(System.out::println);
    assertFalse(report.passed(), () -> String.join("\n", report.lines()));
    List<Doctor.Capability> failed = report.failures();
    assertEquals(1, failed.size(), () -> String.join("\n", report.lines()));
    assertTrue(failed.get(0).name().startsWith("$graphLookup"), failed.get(0)::line);
    assertTrue(failed.get(0).line().contains("FAILED") && failed.get(0).detail().contains(
        "expected"), failed.get(0)::line);
    assertTrue(report.lines().get(report.lines().size() - 1).startsWith("NOT healthy: "),
        report::toString);
  }
}
