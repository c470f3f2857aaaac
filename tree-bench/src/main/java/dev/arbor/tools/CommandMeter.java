package dev.arbor.tools;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonArray;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;

/**
 * The one meter on a client's commands ({@link ServerConnection} adds it to every client it
 * makes). It always counts the commands sent ({@link #roundTrips()}); beyond that it does only
 * what it was made for, so that a timed command pays for nothing it does not need:
 *
 * <ul>
 *   <li>{@link Tally#DOCUMENTS}: running totals of the documents the server reports inserted and
 *       returns in cursor batches, for the command line's progress;
 *   <li>{@link Tally#COMMAND_TIMES}: per command name, how many were sent and the time from
 *       sending to the reply, for the scale benchmark's account of where a load's time went;
 *   <li>always available, but only while {@linkplain #arm armed}: the {@link Counts} of one
 *       invocation (round trips, documents, bytes, and the share of the store's lock and journal
 *       protocol), and with capture a copy of each command, for {@code arbor bench}. Set-up, undo
 *       and timed invocations run disarmed, so neither the counts nor the timings include the
 *       other's work.
 * </ul>
 *
 * <p>Thread-safe: the synchronous driver calls the listener on the thread that runs the command,
 * and several threads may share a client.
 */
public final class CommandMeter implements CommandListener {
  /** What a meter counts beyond the commands sent and the armed windows. */
  public enum Tally {
    /** Totals of the documents inserted and returned. */
    DOCUMENTS,
    /** Per command name: the number sent and their time to the reply. */
    COMMAND_TIMES
  }

  private final boolean documents;
  private final boolean times;
  private final AtomicLong started = new AtomicLong();
  private final AtomicLong inserted = new AtomicLong();
  private final AtomicLong returnedTotal = new AtomicLong();
  /** Per command name: the number sent and their time from sending to the reply, in ns. */
  private final Map<String, long[]> byCommand = new TreeMap<>();

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
  private final Map<Integer, Integer> lockStatements = new HashMap<>();

  /** A meter counting the commands sent, the armed windows, and {@code tallies}. */
  public CommandMeter(Tally... tallies) {
    Set<Tally> t = tallies.length == 0 ? EnumSet.noneOf(Tally.class) : EnumSet.of(tallies[0],
        tallies);
    this.documents = t.contains(Tally.DOCUMENTS);
    this.times = t.contains(Tally.COMMAND_TIMES);
  }

  /** The commands sent so far, by any thread, armed or not. */
  public long roundTrips() {
    return started.get();
  }

  /** Documents the server has reported inserted so far ({@link Tally#DOCUMENTS}, else 0). */
  public long documentsInserted() {
    return inserted.get();
  }

  /** Documents the server has returned in cursor batches so far ({@link Tally#DOCUMENTS}). */
  public long documentsReturned() {
    return returnedTotal.get();
  }

  /** Forgets the times per command ({@link Tally#COMMAND_TIMES}). */
  public synchronized void resetTimes() {
    byCommand.clear();
  }

  /**
   * The time spent waiting for replies per command since {@link #resetTimes} ({@link
   * Tally#COMMAND_TIMES}), and what is left of {@code totalMillis} (the client's own work): {@code
   * insert 3 x 120 ms, client 15 ms}.
   */
  public synchronized String times(double totalMillis) {
    StringBuilder b = new StringBuilder();
    long waited = 0;
    for (Map.Entry<String, long[]> e : byCommand.entrySet()) {
      b.append(String.format(Locale.ROOT, "%s %d x %.0f ms, ", e.getKey(), e.getValue()[0],
          e.getValue()[1] / 1e6));
      waited += e.getValue()[1];
    }
    return b.append(String.format(Locale.ROOT, "client %.0f ms", totalMillis - waited / 1e6))
        .toString();
  }

  /** Starts counting an invocation from zero; with {@code capture}, also keeps the commands. */
  public synchronized void arm(boolean capture) {
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
  public synchronized Counts disarm() {
    armed = false;
    return new Counts(roundTrips, docsReturned, docsWritten, bytesSent, bytesReceived,
        lockRoundTrips, lockDocsWritten);
  }

  /** The commands captured since the last {@link #arm}{@code (true)}. */
  public synchronized List<BsonDocument> commands() {
    return List.copyOf(commands);
  }

  @Override
  public void commandStarted(CommandStartedEvent event) {
    started.incrementAndGet();
    if (armed()) {
      armedStarted(event);
    }
  }

  private synchronized boolean armed() {
    return armed;
  }

  private synchronized void armedStarted(CommandStartedEvent event) {
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
  public void commandSucceeded(CommandSucceededEvent event) {
    if (times) {
      time(event.getCommandName(), event.getElapsedTime(TimeUnit.NANOSECONDS));
    }
    if (documents) {
      BsonDocument reply = event.getResponse();
      if (event.getCommandName().equals("insert") && reply.isNumber("n")) {
        inserted.addAndGet(reply.getNumber("n").longValue());
      }
      if (reply.isDocument("cursor")) {
        BsonDocument cursor = reply.getDocument("cursor");
        for (String batch : List.of("firstBatch", "nextBatch")) {
          if (cursor.isArray(batch)) {
            returnedTotal.addAndGet(cursor.getArray(batch).size());
          }
        }
      }
    }
    if (armed()) {
      armedSucceeded(event);
    }
  }

  private synchronized void armedSucceeded(CommandSucceededEvent event) {
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

  /** A failed command still counts as a round trip (counted when it started); nothing came back. */
  @Override
  public void commandFailed(CommandFailedEvent event) {
    if (times) {
      time(event.getCommandName(), event.getElapsedTime(TimeUnit.NANOSECONDS));
    }
  }

  private synchronized void time(String command, long nanos) {
    long[] a = byCommand.computeIfAbsent(command, k -> new long[2]);
    a[0]++;
    a[1] += nanos;
  }

  /** How many statements of a write command address the lock or journal documents. */
  public static int lockStatements(BsonDocument command) {
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
  public static boolean touchesOnlyLock(BsonDocument command) {
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
        && !in.isEmpty() && in.stream().allMatch(CommandMeter::lockId)) {
      return true;
    }
    BsonValue and = f.get("$and");
    return and instanceof BsonArray a && a.stream().anyMatch(CommandMeter::lockFilter);
  }

  private static boolean lockId(BsonValue id) {
    return id != null && id.isDocument() && id.asDocument().containsKey("arbor");
  }

  /** The documents a reply hands back: cursor batches, or a findAndModify value. */
  public static long returned(BsonDocument reply) {
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
  public static long written(String commandName, BsonDocument reply) {
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
  public static long sizeOf(BsonDocument d) {
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
