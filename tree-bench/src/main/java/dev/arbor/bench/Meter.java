package dev.arbor.bench;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;

/**
 * Counts what the benchmark's own client sends and receives, but only while armed: set-up, undo
 * and timed invocations run disarmed, so neither the counts nor the timings include the other's
 * work. When armed with capture, it also keeps a copy of each command, for {@link Explainer}.
 *
 * <p>The synchronous driver calls the listener on the thread that runs the command; one benchmark
 * thread arms and reads it, so the methods are synchronized only for safety.
 */
final class Meter implements CommandListener {
  private boolean armed;
  private boolean capture;
  private long roundTrips;
  private long docsReturned;
  private long docsWritten;
  private long bytesSent;
  private long bytesReceived;
  private long lockRoundTrips;
  private long lockDocsWritten;
  private final List<BsonDocument> commands = new ArrayList<>();
  private final Set<Integer> lockRequests = new HashSet<>();
  /** Per request: how many of its statements write the lock or journal documents. */
  private final java.util.Map<Integer, Integer> lockStatements = new java.util.HashMap<>();

  /** Starts counting from zero; with {@code capture}, also keeps the commands. */
  synchronized void arm(boolean capture) {
    armed = true;
    this.capture = capture;
    roundTrips = 0;
    docsReturned = 0;
    docsWritten = 0;
    bytesSent = 0;
    bytesReceived = 0;
    lockRoundTrips = 0;
    lockDocsWritten = 0;
    commands.clear();
    lockRequests.clear();
    lockStatements.clear();
  }

  /** Stops counting and returns what was counted since {@link #arm}. */
  synchronized Counts disarm() {
    armed = false;
    return new Counts(roundTrips, docsReturned, docsWritten, bytesSent, bytesReceived,
        lockRoundTrips, lockDocsWritten);
  }

  /** The commands captured since the last {@link #arm}{@code (true)}. */
  synchronized List<BsonDocument> commands() {
    return List.copyOf(commands);
  }

  @Override
  public synchronized void commandStarted(CommandStartedEvent event) {
    if (!armed) {
      return;
    }
    roundTrips++;
    BsonDocument command = event.getCommand();
    bytesSent += sizeOf(command);
    if (touchesOnlyLock(command)) {
      lockRoundTrips++;
      lockRequests.add(event.getRequestId());
    } else {
      int statements = lockStatements(command);
      if (statements > 0) {
        lockStatements.put(event.getRequestId(), statements);
      }
    }
    if (capture) {
      commands.add(command.clone());
    }
  }

  @Override
  public synchronized void commandSucceeded(CommandSucceededEvent event) {
    if (!armed) {
      return;
    }
    BsonDocument reply = event.getResponse();
    bytesReceived += sizeOf(reply);
    docsReturned += returned(reply);
    long written = written(event.getCommandName(), reply);
    docsWritten += written;
    if (lockRequests.remove(event.getRequestId())) {
      lockDocsWritten += written;
    }
    Integer statements = lockStatements.remove(event.getRequestId());
    if (statements != null) {
      // The protocol's statements inside a command that also writes nodes (the lead, journal
      // and release around a change's steps): each writes the lock document once.
      lockDocsWritten += Math.min(statements, written);
    }
  }

  /** How many statements of a write command address the lock or journal documents. */
  static int lockStatements(BsonDocument command) {
    String name = command.getFirstKey();
    if (!name.equals("update") && !name.equals("insert")) {
      return 0;
    }
    BsonValue list = command.get(name.equals("update") ? "updates" : "documents");
    if (!(list instanceof BsonArray a)) {
      return 0;
    }
    int n = 0;
    for (BsonValue s : a) {
      if (s.isDocument() && (name.equals("update") ? lockFilter(s.asDocument().get("q"))
          : lockId(s.asDocument().get("_id")))) {
        n++;
      }
    }
    return n;
  }

  /**
   * Whether a command reads or writes only the store's lock and journal documents, whose ids are
   * documents with an {@code arbor} field ({@code {_id: {arbor: "lock"}}}) where node ids are
   * strings: every statement's filter names such an id (or {@code _id.arbor}), or every inserted
   * document has one.
   */
  static boolean touchesOnlyLock(BsonDocument command) {
    String name = command.getFirstKey();
    switch (name) {
      case "find", "count" -> {
        return lockFilter(command.get("filter", command.get("query")));
      }
      case "findAndModify" -> {
        return lockFilter(command.get("query"));
      }
      case "update", "delete" -> {
        BsonValue list = command.get(name.equals("update") ? "updates" : "deletes");
        return list instanceof BsonArray a && !a.isEmpty() && a.stream().allMatch(
            s -> s.isDocument() && lockFilter(s.asDocument().get("q")));
      }
      case "insert" -> {
        BsonValue docs = command.get("documents");
        return docs instanceof BsonArray a && !a.isEmpty() && a.stream().allMatch(
            d -> d.isDocument() && lockId(d.asDocument().get("_id")));
      }
      default -> {
        return false;
      }
    }
  }

  private static boolean lockFilter(BsonValue filter) {
    if (filter == null || !filter.isDocument()) {
      return false;
    }
    BsonDocument f = filter.asDocument();
    if (f.containsKey("_id.arbor") || lockId(f.get("_id"))) {
      return true;
    }
    BsonValue id = f.get("_id");
    if (id != null && id.isDocument() && id.asDocument().get("$in") instanceof BsonArray in
        && !in.isEmpty() && in.stream().allMatch(Meter::lockId)) {
      return true;
    }
    BsonValue and = f.get("$and");
    return and instanceof BsonArray a && a.stream().anyMatch(Meter::lockFilter);
  }

  private static boolean lockId(BsonValue id) {
    return id != null && id.isDocument() && id.asDocument().containsKey("arbor");
  }

  @Override
  public void commandFailed(CommandFailedEvent event) {
    // A failed command still counts as a round trip (counted when it started); nothing came back.
  }

  /** The documents a reply hands back: cursor batches, or a findAndModify value. */
  static long returned(BsonDocument reply) {
    BsonValue cursor = reply.get("cursor");
    if (cursor != null && cursor.isDocument()) {
      for (String batch : new String[] {"firstBatch", "nextBatch"}) {
        BsonValue docs = cursor.asDocument().get(batch);
        if (docs != null && docs.isArray()) {
          return docs.asArray().size();
        }
      }
    }
    BsonValue value = reply.get("value");
    return value != null && value.isDocument() ? 1 : 0;
  }

  /**
   * The documents a write changed, as its reply reports them: {@code n} for insert and delete,
   * {@code nModified} plus upserts for update, 1 for a findAndModify that found or upserted.
   */
  static long written(String commandName, BsonDocument reply) {
    switch (commandName) {
      case "insert", "delete" -> {
        return number(reply, "n");
      }
      case "update" -> {
        BsonValue upserted = reply.get("upserted");
        long upserts = upserted instanceof BsonArray a ? a.size() : 0;
        return (reply.containsKey("nModified") ? number(reply, "nModified") : number(reply, "n"))
            + upserts;
      }
      case "findAndModify" -> {
        BsonValue last = reply.get("lastErrorObject");
        return last != null && last.isDocument() ? number(last.asDocument(), "n") : 0;
      }
      default -> {
        return 0;
      }
    }
  }

  private static long number(BsonDocument d, String key) {
    BsonValue v = d.get(key);
    return v != null && v.isNumber() ? v.asNumber().longValue() : 0;
  }

  /** The BSON size of a document, without re-encoding it when its bytes are at hand. */
  static long sizeOf(BsonDocument d) {
    if (d instanceof RawBsonDocument raw) {
      return raw.getByteBuffer().remaining();
    }
    BasicOutputBuffer buffer = new BasicOutputBuffer();
    try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
      new BsonDocumentCodec().encode(writer, d, EncoderContext.builder().build());
    }
    return buffer.getPosition();
  }
}
