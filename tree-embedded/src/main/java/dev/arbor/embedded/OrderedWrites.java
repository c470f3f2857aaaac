package dev.arbor.embedded;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.ClientRequest;
import de.bwaldvogel.mongo.wire.message.MessageHeader;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * When switched on ({@link dev.arbor.embedded.internal.OrderedBulkWrites}; off by default), ordered
 * {@code update} and {@code insert} commands run as MongoDB runs them: their statements in turn,
 * stopping at the first that fails. The manual's {@code update} command: "ordered: If true, then
 * when an update statement fails, return without performing the remaining update statements";
 * its {@code insert} command likewise, and its output's {@code n} is "the number of documents
 * inserted".
 *
 * <p>mongo-java-server {@value ServerAdapter#PINNED_VERSION} goes on with the statements of an
 * update command after a failed one ({@code AbstractMongoDatabase.commandUpdate} ignores {@code
 * ordered}); its inserts already stop at the first error when ordered, but it answers {@code n}
 * as the number of documents sent; its deletes do not fail. Arbor's tests use the switch to run
 * the path Arbor takes on MongoDB ({@code OrderedExecution}) against a server that really stops.
 *
 * <p>An ordered update command of more than one statement goes to the server one statement at a
 * time, each as an update command of its own on the same connection; the answers are summed into
 * one as MongoDB gives it: {@code n} (matched plus upserted), {@code nModified}, {@code upserted}
 * and {@code writeErrors} with the index each statement had in the command. (Statements of other
 * connections may run between two of them, as on MongoDB, where only each statement is atomic.)
 * An answer that is not a write result (a command error) is returned as the server gives it. An
 * ordered insert command's {@code n} is corrected to the documents before its first error.
 *
 * <p><b>Time limits.</b> While the switch is on, a command's {@code maxTimeMS} is honoured as
 * MongoDB honours it ({@link #handle}): the time counts from the command's arrival, waiting for
 * other commands included; a statement, or a command of another kind, that would start after it
 * does not run, and the command fails with {@code MaxTimeMSExpired} (code 50), what ran before it
 * staying (MongoDB fails the whole write command on an interruption, and keeps the statements
 * that ran). mongo-java-server ignores {@code maxTimeMS}. To count the waits, the server runs one
 * statement or command at a time while the switch is on (each statement of a split command in
 * turn, so that others may run between two of them). A statement that started in time runs to
 * its end, which MongoDB may interrupt; so here a command can only run later than on MongoDB, not
 * earlier.
 *
 * <p><b>{@code $$NOW}.</b> While the switch is on, an update or delete command reads {@code $$NOW}
 * once, as it arrives, for all its statements, as MongoDB does ({@link #frozenNow}): a statement
 * bounded by a deadline through {@code $$NOW} is then bounded only by when its command started.
 */
final class OrderedWrites {
  /**
   * {@code MongoMessage(Channel, MessageHeader, Document)} and {@code getChannel()}, reached
   * reflectively: netty's {@code Channel} is on the runtime class path only.
   */
  private static final Constructor<?> MESSAGE;

  private static final Method CHANNEL;

  static {
    try {
      Method channel = ClientRequest.class.getMethod("getChannel");
      MESSAGE = MongoMessage.class.getConstructor(channel.getReturnType(), MessageHeader.class,
          Document.class);
      CHANNEL = channel;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("mongo-java-server " + ServerAdapter.PINNED_VERSION
          + " assumed: MongoMessage(Channel, MessageHeader, Document) not found", e);
    }
  }

  /** Whether ordered writes stop at their first error; off: the server's own behaviour. */
  volatile boolean stopAtFirstError;

  /** Held while a statement or a command runs, while the switch is on. */
  private final Object running = new Object();

  /**
   * The answer to {@code message}, {@code server} running it (or each of its statements): as the
   * server gives it while the switch is off, else as MongoDB would, time limit included.
   */
  Document handle(MongoMessage message, Function<MongoMessage, Document> server) {
    if (!stopAtFirstError) {
      return server.apply(message);
    }
    Limit limit = new Limit(System.nanoTime(), message.getDocument().get("maxTimeMS")
        instanceof Number n ? n.longValue() : 0);
    Document frozen = frozenNow(message.getDocument(), Instant.now());
    if (frozen != message.getDocument()) {
      message = alone(message, frozen);
    }
    Function<MongoMessage, Document> timed = m -> {
      synchronized (running) {
        return limit.expired() ? limit.error() : server.apply(m);
      }
    };
    Document answer = answer(message, timed);
    return answer != null ? answer : timed.apply(message);
  }

  /**
   * {@code command} with {@code $$NOW} read once, as it arrives, if it is an update or a delete:
   * MongoDB applies one {@code $$NOW} to every statement of a write command (its {@code
   * performUpdates} and {@code performDeletes} generate "the runtime constants" once: "these
   * constants are applied to each update in the batch"), where mongo-java-server reads the clock
   * at each evaluation. Replaced in each statement's filter and in a pipeline update, never inside
   * a {@code $literal} (a value, not a variable), nor in an update's operators (values too).
   *
   * @return {@code command} itself when there is nothing to replace
   */
  static Document frozenNow(Document command, Instant now) {
    if (command.isEmpty()) {
      return command;
    }
    String name = command.keySet().iterator().next();
    String list = name.equalsIgnoreCase("update") ? "updates"
        : name.equalsIgnoreCase("delete") ? "deletes" : null;
    if (list == null || !(command.get(list) instanceof List<?> statements)) {
      return command;
    }
    List<Object> replaced = new ArrayList<>(statements.size());
    boolean changed = false;
    for (Object statement : statements) {
      if (!(statement instanceof Document d)) {
        replaced.add(statement);
        continue;
      }
      Document out = new Document();
      for (String key : d.keySet()) {
        Object v = d.get(key);
        out.put(key, key.equals("q") || (key.equals("u") && v instanceof List<?>)
            ? replaceNow(v, now) : v);
      }
      changed |= !out.equals(d);
      replaced.add(out);
    }
    if (!changed) {
      return command;
    }
    Document copy = new Document();
    for (String key : command.keySet()) {
      copy.put(key, key.equals(list) ? replaced : command.get(key));
    }
    return copy;
  }

  private static Object replaceNow(Object v, Instant now) {
    if ("$$NOW".equals(v)) {
      return now;
    }
    if (v instanceof Document d) {
      if (d.containsKey("$literal")) {
        return d;
      }
      Document out = new Document();
      for (String key : d.keySet()) {
        out.put(key, replaceNow(d.get(key), now));
      }
      return out;
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>(l.size());
      for (Object x : l) {
        out.add(replaceNow(x, now));
      }
      return out;
    }
    return v;
  }

  /** A command's time limit: {@code millis} from {@code arrived} (nano time); 0: none. */
  private record Limit(long arrived, long millis) {
    boolean expired() {
      return millis > 0 && System.nanoTime() - arrived >= millis * 1_000_000L;
    }

    /** MongoDB's answer to a command that ran out of its time limit. */
    Document error() {
      Document d = new Document();
      d.put("ok", 0.0);
      d.put("errmsg", "operation exceeded time limit");
      d.put("code", 50);
      d.put("codeName", "MaxTimeMSExpired");
      return d;
    }
  }

  /**
   * The answer to {@code message} if it is an ordered write this class answers (the switch is
   * on: see {@link #handle}), the server (given {@code server}) running its statements; else
   * null, and the server answers it as usual.
   */
  private @Nullable Document answer(MongoMessage message,
      Function<MongoMessage, Document> server) {
    Document command = message.getDocument();
    if (command.isEmpty() || Boolean.FALSE.equals(command.get("ordered"))) {
      return null; // MongoDB's default is ordered: only an explicit false goes on after errors
    }
    String name = command.keySet().iterator().next();
    if (name.equalsIgnoreCase("update") && command.get("updates") instanceof List<?> updates
        && updates.size() > 1) {
      return update(message, command, updates, server);
    }
    if (name.equalsIgnoreCase("insert") && command.get("documents") instanceof List<?> docs) {
      Document ordered = command;
      if (!command.containsKey("ordered")) {
        ordered = new Document(command); // mongo-java-server takes a missing one for false
        ordered.put("ordered", true);
      }
      Document answer = server.apply(ordered == command ? message : alone(message, ordered));
      if (answer.get("writeErrors") instanceof List<?> errors && !errors.isEmpty()
          && errors.get(0) instanceof Document first && first.get("index") instanceof Number at
          && answer.get("n") instanceof Number) {
        answer.put("n", Math.min(docs.size(), at.intValue())); // those before the first error
      }
      return answer;
    }
    return null;
  }

  /** A message on the connection of {@code message}, carrying {@code command}. */
  private static MongoMessage alone(MongoMessage message, Document command) {
    try {
      return (MongoMessage) MESSAGE.newInstance(CHANNEL.invoke(message), message.getHeader(),
          command);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Document update(MongoMessage message, Document command, List<?> updates,
      Function<MongoMessage, Document> server) {
    long n = 0;
    long modified = 0;
    List<Document> upserted = new ArrayList<>();
    List<Document> errors = new ArrayList<>();
    Document last = new Document();
    for (int i = 0; i < updates.size() && errors.isEmpty(); i++) {
      Document one = new Document();
      for (String key : command.keySet()) {
        one.put(key, key.equals("updates") ? List.of(updates.get(i)) : command.get(key));
      }
      Document answer = server.apply(alone(message, one));
      if (!(answer.get("n") instanceof Number count)) {
        return answer; // not a write result: a command error, answered as the server gives it
      }
      last = answer;
      n += count.longValue();
      if (answer.get("nModified") instanceof Number m) {
        modified += m.longValue();
      }
      if (answer.get("upserted") instanceof List<?> ups) {
        for (Object u : ups) {
          Document d = new Document((Document) u);
          d.put("index", i);
          upserted.add(d);
        }
      }
      if (answer.get("writeErrors") instanceof List<?> errs) {
        for (Object e : errs) {
          Document d = new Document((Document) e);
          d.put("index", i);
          errors.add(d);
        }
      }
    }
    Document response = new Document();
    response.put("n", (int) n);
    response.put("nModified", (int) modified);
    if (!upserted.isEmpty()) {
      response.put("upserted", upserted);
    }
    if (!errors.isEmpty()) {
      response.put("writeErrors", errors);
    }
    for (String key : last.keySet()) {
      if (!response.containsKey(key) && !key.equals("writeErrors") && !key.equals("upserted")) {
        response.put(key, last.get(key)); // ok, and whatever else the server answers
      }
    }
    return response;
  }
}
