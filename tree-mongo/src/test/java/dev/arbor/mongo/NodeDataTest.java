package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.arbor.core.Tree;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The round trips of the operations on node data, counted by a command listener on a store that
 * has seen the tree quiet (the steady state): the counts the stores' javadoc states.
 */
class NodeDataTest {
  /** Records the names of the commands sent while armed. */
  static final class Recorder implements CommandListener {
    final List<String> commands = new CopyOnWriteArrayList<>();
    final List<String> bodies = new CopyOnWriteArrayList<>();
    volatile boolean armed;

    @Override
    public void commandStarted(CommandStartedEvent event) {
      if (armed) {
        commands.add(event.getCommandName());
        bodies.add(event.getCommand().toJson());
      }
    }
  }

  private final Recorder recorder = new Recorder();
  private MongoClient client;

  @BeforeEach
  void connect() {
    client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(recorder).build());
  }

  @AfterEach
  void close() {
    client.close();
  }

  /** A store of {@code pattern} over a fresh collection of the recording client, loaded. */
  MongoTreeStore open(TreePattern pattern, String outline) {
    MongoCollection<Document> c = client.getDatabase(MongoTestServer.get().database().getName())
        .getCollection(MongoTestServer.get().freshCollection().getNamespace()
            .getCollectionName());
    MongoTreeStore store = (MongoTreeStore) pattern.open(c);
    store.lock.assumeOrdered(true); // count what a MongoDB server gets
    store.load(Tree.parse(outline));
    store.snapshot();
    return store;
  }

  /** The commands {@code call} sends. */
  List<String> commands(MongoTreeStore store, Consumer<MongoTreeStore> call) {
    recorder.commands.clear();
    recorder.bodies.clear();
    recorder.armed = true;
    try {
      call.accept(store);
    } finally {
      recorder.armed = false;
    }
    return List.copyOf(recorder.commands);
  }

  @Test
  void updateIsOneReadAndOneWriteWithoutJournal() {
    for (TreePattern pattern : TreePattern.values()) {
      MongoTreeStore store = open(pattern, "a(b(c d) e)");
      List<String> sent = commands(store, s -> s.update("d", Map.of("title", "D")));
      assertEquals(List.of("find", "update"), sent, pattern + ": " + sent);
      String write = recorder.bodies.get(1);
      assertEquals(false, write.contains("\"" + TreeLock.JOURNAL + "\": {"),
          pattern + ": a journal was written: " + write);
      assertEquals(Map.of("title", "D"), store.find("d").orElseThrow().attributes());
    }
  }
}
