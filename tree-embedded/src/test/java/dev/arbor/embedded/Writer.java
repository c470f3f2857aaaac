package dev.arbor.embedded;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import dev.arbor.embedded.internal.DataDirectories;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;

/**
 * The process {@link KilledCheckpointTest} kills: writes rounds of documents into a data directory
 * and checkpoints after each (with no saves between commands, so that only checkpoints save),
 * printing {@code saving k} before and {@code saved k} after the
 * checkpoint of round k, until it is killed.
 *
 * <p>Round k inserts {@value #PER_ROUND} documents {@code {_id: "k-i", round: k, i}}, then marks
 * every document of the previous round {@code next: k}: a saved state holds rounds 1..k complete,
 * and the documents of round k-1 only if marked.
 */
final class Writer {
  static final int PER_ROUND = 4_000;

  private Writer() {}

  public static void main(String[] args) throws java.io.IOException {
    Path dir = Path.of(args[0]);
    boolean backgroundCommits = args.length > 1 && args[1].equals("--background-commits");
    PrintStream out = System.out;
    if (backgroundCommits) {
      // The H2 backend as mongo-java-server opens it: commits in the background every second.
      java.nio.file.Files.createDirectories(dir);
      MongoServer server = new MongoServer(new H2Backend(dir.resolve("arbor.mv").toString()));
      java.net.InetSocketAddress a = server.bind();
      try (com.mongodb.client.MongoClient client = com.mongodb.client.MongoClients.create(
          "mongodb://" + a.getHostString() + ":" + a.getPort())) {
        run(client.getDatabase("d").getCollection("c"), () -> { }, out);
      }
      return;
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir, Long.MAX_VALUE)) {
      run(mongo.client().getDatabase("d").getCollection("c"),
          () -> DataDirectories.checkpoint(mongo), out);
    }
  }

  private static void run(MongoCollection<Document> c, Runnable checkpoint, PrintStream out) {
    c.createIndex(new Document("round", 1));
    for (int k = 1; ; k++) {
      List<Document> docs = new ArrayList<>();
      for (int i = 0; i < PER_ROUND; i++) {
        docs.add(new Document("_id", k + "-" + i).append("round", k).append("i", i)
            .append("pad", "x".repeat(100)));
      }
      c.insertMany(docs);
      c.updateMany(Filters.eq("round", k - 1), Updates.set("next", k));
      out.println("saving " + k);
      out.flush();
      checkpoint.run();
      out.println("saved " + k);
      out.flush();
    }
  }
}
