package dev.arbor.mongo.internal.doctor;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoDatabase;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import org.bson.Document;

/**
 * What {@link Doctor} found out about the caller's server: its version and topology (from {@code
 * buildInfo} and {@code hello}, or {@code isMaster} on a server too old for {@code hello}), and
 * whether Arbor's transactions run on it, probed once, by the first check that needs them, with
 * the reason when they do not.
 */
public final class DoctorServer {
  private final DoctorScratch scratch;
  private final String version;
  private final String topology;
  private final boolean embedded;
  /** Whether Arbor's transactions run on this server (probed with the first such store). */
  private boolean transactions;
  private String noTransactions = "";

  private DoctorServer(DoctorScratch scratch, String version, String topology,
      boolean embedded) {
    this.scratch = scratch;
    this.version = version;
    this.topology = topology;
    this.embedded = embedded;
  }

  /**
   * Asks the server of {@code scratch} its version and topology.
   *
   * @throws com.mongodb.MongoException if the server cannot be reached or refuses {@code
   *     buildInfo}
   */
  public static DoctorServer identify(DoctorScratch scratch) {
    MongoDatabase admin = scratch.client().getDatabase("admin");
    Document build = admin.runCommand(new Document("buildInfo", 1));
    Document hello;
    try {
      hello = admin.runCommand(new Document("hello", 1));
    } catch (MongoCommandException e) {
      hello = admin.runCommand(new Document("isMaster", 1));
    }
    String version = String.valueOf(build.get("version"));
    if (!build.containsKey("gitVersion")) {
      // mongod always reports the commit it was built from; mongo-java-server does not
      return new DoctorServer(scratch, version, "embedded mongo-java-server", true);
    } else if ("isdbgrid".equals(hello.get("msg"))) {
      return new DoctorServer(scratch, version, "sharded cluster", false);
    } else if (hello.get("setName") != null) {
      return new DoctorServer(scratch, version, "replica set " + hello.get("setName"), false);
    } else {
      return new DoctorServer(scratch, version, "standalone", false);
    }
  }

  /** The server's version, from {@code buildInfo}. */
  public String version() {
    return version;
  }

  /**
   * Standalone, replica set (with its name), sharded cluster, or the embedded mongo-java-server.
   */
  public String topology() {
    return topology;
  }

  /**
   * Whether Arbor's transactions run on this server: the first call opens a store with the
   * doctor's client on the emptied scratch collection and asks it.
   */
  public boolean transactionsOffered() {
    if (noTransactions.isEmpty() && !transactions) {
      MongoTreeStore probe = (MongoTreeStore) TreePattern.PARENT_REFERENCES.open(
          scratch.fresh(), TreeOptions.defaults().withTransactions(scratch.client()));
      transactions = probe.usesTransactions();
      if (!transactions) {
        noTransactions = embedded ? "the embedded server has no sessions or transactions"
            : "no transactions on a " + topology + " (they need a replica set or sharded"
                + " cluster)";
      }
    }
    return transactions;
  }

  /** Why Arbor's transactions do not run here, once {@link #transactionsOffered()} said so. */
  public String noTransactions() {
    return noTransactions;
  }
}
