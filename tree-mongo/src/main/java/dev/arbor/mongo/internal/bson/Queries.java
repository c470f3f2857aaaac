package dev.arbor.mongo.internal.bson;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.Outcome;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * What every store's queries and plans share: projections and filters of node documents, slices
 * of ids small enough for one statement, and the translation of driver errors into Arbor's
 * exceptions.
 */
public final class Queries {
  private Queries() {}

  /**
   * A driver error that reached a change before anything was written (a read of its planning,
   * the lock's own commands once their retries ran out) as {@link ChangeInterruptedException}
   * with outcome {@code NOT_APPLIED}: a change never throws a raw driver exception, nor the
   * driver's {@code IllegalStateException} of a closed client. Errors the protocol met while
   * writing are already told with their outcome.
   */
  public static RuntimeException unapplied(RuntimeException e, String what) {
    if (dev.arbor.mongo.internal.protocol.ReadRetry.clientClosed(e)) {
      return dev.arbor.mongo.internal.protocol.ReadRetry.closed("do '" + what + "'", e);
    }
    if (!(e instanceof MongoException m) || (e instanceof com.mongodb.MongoClientException
        && !TreeLock.transientError(m))) {
      return e; // not a driver error, or the caller's misuse of the driver (a foreign session…)
    }
    return new ChangeInterruptedException("Could not do '" + what + "': " + m.getMessage()
        + "; nothing of it was written", ChangeInterruptedException.Outcome.NOT_APPLIED, m);
  }

  /**
   * Whether a server error is {@code $graphLookup} passing its memory limit (100 MB before
   * MongoDB 8.2, whatever {@code allowDiskUse} says; it holds whole documents), or refused where
   * it cannot run (inside a transaction on a sharded collection:
   * OperationNotSupportedInTransaction, or 3904801, "Cannot run $graphLookup with a sharded foreign
   * collection in a transaction"): the stores then walk the tree level by level instead.
   */
  public static boolean graphLookupOutOfMemory(com.mongodb.MongoServerException e) {
    return e.getCode() == 40099 || e.getCode() == 292 // QueryExceededMemoryLimitNoDiskUseAllowed
        || graphLookupRefused(e)
        || String.valueOf(e.getMessage()).contains("maximum memory consumption");
  }

  /** Whether the server refused {@code $graphLookup} in a transaction on a sharded collection. */
  public static boolean graphLookupRefused(com.mongodb.MongoServerException e) {
    return e.getCode() == 263 // OperationNotSupportedInTransaction
        || e.getCode() == 3904801; // $graphLookup of a sharded collection in a transaction
  }

  public static boolean isNullOrString(@Nullable Object o) {
    return o == null || o instanceof String;
  }

  /**
   * The node id of document {@code d}, read among the nodes a call meets (by a reference, a path
   * or an interval).
   *
   * @throws TreeException naming the document if its {@code _id} is not of the tree's id type
   *     (another tool's document: no node, which {@code check()} lists), rather than a {@code
   *     ClassCastException}
   */
  public static String idOf(Document d) {
    Object id = d.get(ID);
    if (id instanceof String s) {
      return s;
    }
    String what = id instanceof MistypedId m ? m.description() + ", not "
        + MistypedId.article(m.type()) : id instanceof Document ? String.valueOf(id)
        : String.valueOf(id) + " (" + (id == null ? "null" : id.getClass().getSimpleName()) + ")";
    throw new TreeException("The document with _id " + what + " lies among the nodes this call"
        + " reads (its parent, ancestors, path, children or interval name one), but its _id is not"
        + " of the tree's id type: it is no node; check() lists it: give it an _id of the tree's"
        + " type, or keep it in another collection (a change refused for it wrote nothing)");
  }

  /**
   * Whether {@code o} is what a reference field holds in the pattern's layout: none, an id, or
   * another form of an id ({@link MistypedId}: the node is laid out in the pattern, and what
   * reads it names the value).
   */
  public static boolean isReference(@Nullable Object o) {
    return isNullOrString(o) || o instanceof MistypedId;
  }

  /** {@code siblings} with {@code id} replaced by {@code children}, in order. */
  public static List<String> lifted(List<String> siblings, String id, List<String> children) {
    List<String> out = new ArrayList<>(siblings);
    int at = out.indexOf(id);
    out.remove(at);
    out.addAll(at, children);
    return out;
  }

  /**
   * The number of documents {@code filter} selects, in one count; when there are none, checks
   * that {@code id} exists (one more query).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public static long countOrRequire(Reads r, Bson filter, String id) {
    long n = r.count(filter);
    if (n == 0) {
      r.require(id, fields(ID));
    }
    return n;
  }

  /** Projection of {@code _id} and the given fields. */
  public static Bson fields(String... names) {
    return Projections.include(names);
  }

  /** Translates a duplicate-key error on {@code _id} into {@link DuplicateNodeException}. */
  public static RuntimeException translate(RuntimeException e, @Nullable String id) {
    if (e instanceof MongoWriteException w
        && w.getError().getCategory() == ErrorCategory.DUPLICATE_KEY && id != null) {
      return new DuplicateNodeException(id);
    }
    if (e instanceof MongoBulkWriteException b && id != null && !b.getWriteErrors().isEmpty()
        && ErrorCategory.fromErrorCode(b.getWriteErrors().get(0).getCode())
            == ErrorCategory.DUPLICATE_KEY) {
      return new DuplicateNodeException(id);
    }
    if (e instanceof MongoException m && id == null
        && ErrorCategory.fromErrorCode(m.getCode()) == ErrorCategory.DUPLICATE_KEY) {
      return new TreeException("A write met a duplicate _id: " + m.getMessage(), m);
    }
    return e;
  }

  /**
   * The ids of a query's results, in order; a document whose {@code _id} is no string (read as
   * the store's ids are) is no node of the store and is left out, as the whole-tree reads leave
   * it out ({@code check()} names it): a tree stored with another id type, in the same
   * collection, answered a query on a field such as a rank with a {@link ClassCastException}.
   */
  public static List<String> ids(Iterable<Document> docs) {
    List<String> out = new ArrayList<>();
    for (Document d : docs) {
      if (d.get(ID) instanceof String id) {
        out.add(id);
      }
    }
    return out;
  }

  /** Plans deletes of the documents of {@code ids}, in slices small enough for one statement. */
  public static void deleteAll(Change c, List<String> ids) {
    if (ids.size() == 1) {
      c.deleteOne(eq(MongoTreeStore.ID, ids.get(0))); // a leaf: one document
      return;
    }
    for (List<String> slice : slices(ids)) {
      c.deleteMany(in(MongoTreeStore.ID, slice));
    }
  }

  /**
   * {@code ids} in slices small enough for one {@code $in} statement: at most 1 MB of encoded ids
   * (and 20 000 ids) each.
   */
  public static List<List<String>> slices(List<String> ids) {
    List<List<String>> out = new ArrayList<>();
    int start = 0;
    long bytes = 0;
    for (int i = 0; i < ids.size(); i++) {
      long size = ids.get(i).length() * 3L + 16;
      if (i > start && (i - start == 20_000 || bytes + size > 1_000_000)) {
        out.add(ids.subList(start, i));
        start = i;
        bytes = 0;
      }
      bytes += size;
    }
    if (start < ids.size()) {
      out.add(ids.subList(start, ids.size()));
    }
    return out;
  }

  public static void checkMaxDepth(int maxDepth) {
    if (maxDepth < 0) {
      throw new IllegalArgumentException("maxDepth < 0: " + maxDepth);
    }
  }

  /** A filter that matches no document, for probes that must not write anything. */
  public static Bson nothing() {
    return Filters.exists(MongoTreeStore.ID, false);
  }

  /** The sibling group whose {@code field} equals {@code value} (null: the roots). */
  public static Bson group(String field, @Nullable Object value) {
    return value == null ? isNull(field) : eq(field, value);
  }

  /** Documents whose {@code field} is null or missing, lock and journal excluded. */
  public static Bson isNull(String field) {
    return Filters.and(eq(field, null), NODES);
  }
}
