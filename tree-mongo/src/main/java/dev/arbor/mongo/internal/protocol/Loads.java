package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.LockLostException;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * Bulk loads and grafts under a held lock, all or nothing: {@link #beginLoad} stores an undo
 * journal (delete every document marked by this load), the documents go in by fenced batches,
 * each insert command led by the load's next insert fence (which a caller who takes the lock over
 * takes first, so that a stalled loader's command stops before its first insert), and the fenced
 * release ({@link #endLoad}) or a graft's journal ({@link #commitLoad}) is the commit point.
 */
final class Loads {
  private final TreeLock facade;
  private final LockDocument lock;
  private final Fences fences;

  Loads(TreeLock facade, LockDocument lock, Fences fences) {
    this.facade = facade;
    this.lock = lock;
    this.fences = fences;
  }

  /**
   * Starts a bulk load under the hold: a journal whose only step deletes every document this load
   * inserts (they carry its mark), so that a load interrupted half-way is undone by the next
   * access. The documents then go in with {@link #loadBatch}, one fenced batch at a time.
   */
  void beginLoad(TreeLock.Hold h) {
    BsonDocument loaded = new BsonDocument(Step.MARK + ".v", new BsonInt64(h.version));
    Scope scope = lock.scope;
    Step undo = new Step.Delete(scope == null ? loaded : scope.equality().append("$and",
        new BsonArray(List.of(loaded))), true);
    String origin = undoOf(h.token);
    BsonDocument header = Journal.header(h.version, h.what, origin)
        .append("parts", new BsonInt32(0)).append("steps", new BsonArray(List.of(undo.encode())));
    // Stored only while no journal is pending: a late sending of this fence, matched by its owner
    // alone, stored the undo again over a graft's committed journal, and a caller who took the
    // graft over undid a graft that had been committed, leaving its first steps
    // (LateUndoJournalTest; LinearizabilityProcessesTest found it on nested sets).
    try {
      sendFenced(h, List.of(fences.fenceWhile(h.token, eq(LockDocument.OP, null),
          Journal.pending(header, h.version, origin))));
    } catch (MongoBulkWriteException e) {
      // an earlier sending stored it (the pending journal is this undo), or the lock was lost
      TreeLock.State s = lock.read();
      if (!h.token.equals(s.owner)) {
        throw lock.lostTo(h.what, s);
      }
      if (s.op != h.version || !origin.equals(s.opToken)) {
        throw e;
      }
      // stored by an earlier sending, whose renewal is not known to be recent: the background
      // renewal goes on as it was
    }
  }

  /**
   * The token the undo journal of a load by {@code token} is written under: not the holder's own,
   * so that a caller who takes the load over and completes the undo records it among the journals
   * done under this name, and a graft whose commit was lost does not read its own token there as
   * its commit completed (LostGraftCommitTest).
   */
  static String undoOf(String token) {
    return token + "/undo";
  }

  /**
   * The ids of the insert fences of {@code h}'s load: those it used, and the next, which a caller
   * who took the lock over may have taken ({@link #revokeInserts}). By id, so that the {@code
   * _id} index finds them on any server.
   */
  private List<BsonDocument> insertFences(TreeLock.Hold h) {
    List<BsonDocument> out = new ArrayList<>(h.insertFences + 1);
    for (int b = 0; b <= h.insertFences; b++) {
      BsonDocument id = fences.insertFence(h.token, b);
      if (!h.resentFences.contains(id)) {
        out.add(id); // a command sent again keeps its fence: its first sending may arrive
      }
    }
    return out;
  }

  /**
   * Inserts one batch of a load, marked by the caller, in one insert command led by the next insert
   * fence of this load; the lease is renewed first when a third of it has passed.
   */
  void loadBatch(TreeLock.Hold h, List<BsonDocument> documents) {
    h.renewIfDue();
    List<WriteModel<BsonDocument>> inserts = new ArrayList<>(documents.size() + 1);
    inserts.add(fences.insertFenceStatement(h.token, h.insertFences++));
    for (BsonDocument d : documents) {
      inserts.add(new InsertOneModel<>(d)); // marked by the caller
    }
    sendFenced(h, inserts);
  }

  /**
   * Sends updates of documents this load inserted earlier (a nested set's {@code right}, the rest
   * of a {@code children} array), in one update command led by a fence; each update must be
   * idempotent, as a command is sent again after a transient error.
   */
  void loadUpdates(TreeLock.Hold h, List<WriteModel<BsonDocument>> updates) {
    h.renewIfDue();
    List<WriteModel<BsonDocument>> writes = new ArrayList<>(updates.size() + 1);
    writes.add(fences.fence(h.token, null));
    writes.addAll(updates);
    sendFenced(h, writes);
  }

  /**
   * Completes a graft: its documents are in, under the load's undo journal; the journal of {@code
   * steps} (the writes of existing documents that make the new ones part of the tree) replaces the
   * undo in one fenced write, the commit point, and the steps run as a change's do. Before the
   * commit point an interrupted graft is undone by the next access; after it, completed.
   */
  TreeLock.Result commitLoad(TreeLock.Hold h, List<Step> steps) {
    lock.raw.deleteMany(lock.scoped(in("_id", insertFences(h))));
    try {
      return facade.plans.run(h.token, h.token, null, h.version, h.what, steps,
          true, true, h, true);
    } finally {
      h.close();
    }
  }

  /** Completes a load: clears its journal and its insert fences, frees the lock. */
  void endLoad(TreeLock.Hold h) {
    try {
      sendFenced(h, List.of(fences.fence(h.token, null)));
      deleteInsertFences(h);
      releaseLoad(h);
    } finally {
      h.close();
    }
  }

  /**
   * Deletes the insert fences of {@code h}'s load, which guard nothing once its last insert
   * command was answered. Best effort: one left behind is harmless (no query of nodes sees it).
   */
  private void deleteInsertFences(TreeLock.Hold h) {
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        lock.raw.deleteMany(lock.scoped(in("_id", insertFences(h))));
        return;
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e)) {
          return;
        }
      }
    }
  }

  /**
   * The fenced release of a load, its commit: after an uncertain answer (an I/O error, a
   * timeout) the lock document says what became of it: released by this holder (the load
   * stands), or taken over and its undo journal replayed (nothing of it stands).
   */
  private void releaseLoad(TreeLock.Hold h) {
    try {
      sendFenced(h, List.of(fences.fence(h.token, LockDocument.releaseUpdate())));
    } catch (LockLostException e) {
      if (!releaseLanded(h)) {
        throw e;
      }
    } catch (ChangeInterruptedException e) {
      throw new ChangeInterruptedException("Could not tell whether '" + h.what + "' on tree '"
          + lock.tree + "' was committed: its release was sent but not answered ("
          + e.getMessage() + "); read the tree", Outcome.UNKNOWN, e.getCause());
    }
  }

  /** Whether the release of {@code h}'s load landed (its fence, resent, then found it gone). */
  private boolean releaseLanded(TreeLock.Hold h) {
    TreeLock.State s = lock.read();
    String undo = undoOf(h.token);
    if (s.op == h.version && undo.equals(s.opToken)) {
      // the undo of a holder taken over
      facade.replay.awaitCompletion(h.version, undo, h.what);
      return false;
    }
    if (s.done.contains(undo)) {
      return false; // its undo was completed by the caller who took it over
    }
    if (!s.keepsDoneSince(h.version)) {
      // Its undo's record may have been pushed out by later ones (LostLoadReleaseTest), so a
      // lock document that moved on does not tell.
      throw new ChangeInterruptedException("Could not tell whether '" + h.what + "' on tree '"
          + lock.tree + "' was committed: its release's answer was lost, the lock was taken"
          + " over since, and the lock document no longer tells; read the tree",
          Outcome.UNKNOWN, null);
    }
    return s.version > h.version && !h.token.equals(s.owner);
  }

  /**
   * Abandons a load that failed: its insert commands whose answer was lost are stopped (their
   * fences taken, and the next: such a command may still arrive, and would insert its documents
   * after they were deleted, in a load told not applied; {@code AbortedGraftLateInsertTest}),
   * its documents are deleted, the lock freed.
   */
  void abortLoad(TreeLock.Hold h) {
    h.close();
    try {
      lock.raw.bulkWrite(List.of(fences.fence(h.token, null)));
      String stopper = LockDocument.newToken();
      for (BsonValue id : h.resentFences) {
        fences.takeInsertFence(id.asDocument(), stopper); // or stored by its command already
      }
      fences.revokeInserts(h.token, stopper);
      if (!h.resentFences.isEmpty()) {
        // an insert command whose answer was lost may still be running (each of the others was
        // answered: AbortedGraftLateInsertTest.aGraftRefusedForAnIdThatExists…)
        fences.awaitStartedInserts(h.loadLease);
      }
      lock.raw.deleteMany(lock.scoped(new BsonDocument(Step.MARK + ".v",
          new BsonInt64(h.version))));
      lock.raw.bulkWrite(List.of(fences.fence(h.token, LockDocument.releaseUpdate())));
    } catch (MongoException e) {
      // the journal undoes the load at the next access
    }
  }

  /**
   * Sends one batch of a load led by a fence (an update fence, or an insert fence for inserts),
   * again after a transient error. When the fence then meets a duplicate key, the lock document
   * decides: if it still names this holder, the fence was its own first attempt's, whose inserts
   * may have landed: those marked by this load are left out and the rest sent behind a new
   * insert fence. Only a lock document that names another holder means the lock was lost.
   */
  private void sendFenced(TreeLock.Hold h, List<WriteModel<BsonDocument>> writes) {
    boolean inserts = writes.get(0) instanceof InsertOneModel;
    List<WriteModel<BsonDocument>> pending = writes;
    int[] original = null; // the index in writes of each statement of pending, once rebuilt
    boolean resent = false;
    long start = lock.timing.nanoTime();
    for (;;) {
      List<TreeLock.Statement> batch = new ArrayList<>(pending.size());
      for (WriteModel<BsonDocument> w : pending) {
        // The first statement is a fence; a load's documents and late updates follow it.
        batch.add(new TreeLock.Statement(w,
            w instanceof InsertOneModel || !batch.isEmpty() ? 1 : 0));
      }
      try {
        facade.sender.send(fences.timed(h.loadLease), new TreeLock.Batch(batch));
        if (!inserts) {
          h.renewed();
        }
        return;
      } catch (MongoBulkWriteException e) {
        if (e.getWriteErrors().isEmpty()) { // a write-concern error alone: may be rolled back
          resent = true;
          keepFence(h, pending, inserts);
          retryPause(e, start);
          continue;
        }
        BulkWriteError error = e.getWriteErrors().get(0);
        boolean duplicate = MongoErrors.duplicateId(error);
        if (duplicate && (error.getIndex() == 0 || (resent && inserts))) {
          TreeLock.State s = lock.read();
          if (!h.token.equals(s.owner)) {
            throw lock.lostTo(h.what, s);
          }
          int[] sent = original == null ? identity(pending.size()) : original;
          if (inserts && (error.getIndex() == 0
              || ownInsert(h, pending.get(error.getIndex())))) {
            // Still this holder's: its earlier attempt took the fence, and maybe inserted some
            // of the documents. Send the rest behind a fresh insert fence.
            original = remaining(h, writes, sent);
            if (original.length == 0) {
              return;
            }
            pending = new ArrayList<>(original.length + 1);
            pending.add(fences.insertFenceStatement(h.token, h.insertFences++));
            for (int k : original) {
              pending.add(writes.get(k));
            }
            original = prepend(original);
            continue;
          }
        }
        if (original != null) {
          throw renumbered(e, error, original);
        }
        throw e;
      } catch (RuntimeException thrown) {
        // unanswered: the command may still arrive, or be running
        keepFence(h, pending, inserts);
        if (!(thrown instanceof MongoException e) || !MongoErrors.transientError(e)) {
          throw thrown;
        }
        resent = true;
        retryPause(e, start);
        int[] sent = original == null ? identity(pending.size()) : original;
        if (inserts && MongoErrors.timedOut(e) && sent.length > 3) {
          // Too slow for its lease: what did not land goes again in two halves, behind the next
          // fence numbers, once the fence of the command that timed out is stored.
          TreeLock.State s = lock.read();
          if (!h.token.equals(s.owner)) {
            throw lock.lostTo(h.what, s);
          }
          if (!fences.settleInsertFence(pending.get(0), h.token)) {
            throw lock.lostTo(h.what, lock.read()); // taken over since
          }
          int[] rest = remaining(h, writes, sent);
          int half = rest.length / 2;
          sendPart(h, writes, java.util.Arrays.copyOfRange(rest, 0, half));
          sendPart(h, writes, java.util.Arrays.copyOfRange(rest, half, rest.length));
          return;
        }
        if (MongoErrors.timedOut(e)) {
          outgrewLease(h); // a batch too small to halve ran out of its time limit
        }
      }
    }
  }

  /**
   * Keeps the insert fence of an insert command whose answer was lost when the load ends: the
   * command may still arrive after it ended and its nodes were deleted, and only the fence stops
   * it ({@code LateInsertCommandTest}: before, the nodes came back).
   */
  private static void keepFence(TreeLock.Hold h, List<WriteModel<BsonDocument>> pending,
      boolean inserts) {
    if (inserts && pending.get(0) instanceof InsertOneModel<BsonDocument> fence) {
      h.resentFences.add(fence.getDocument().get("_id"));
    }
  }

  /**
   * One of the load's smallest commands ran out of its time limit (a busy machine, a slow
   * server): renews the lease for twice as long, in a command of its own, so that the command
   * sent again has a time limit to match, once that renewal is answered (a renewal whose answer
   * was lost leaves the time limit as it was: the lock document may still name the shorter
   * lease). (The lock document keeps the longer lease for the rest of the load; a caller who
   * takes a stopped loader over waits out an insert command's time limit under it, {@link
   * Fences#awaitStartedInserts}.)
   *
   * @throws LockLostException if this holder no longer holds the lock
   */
  private void outgrewLease(TreeLock.Hold h) {
    long grown = lock.grown(Math.max(h.loadLease, h.askedLease));
    if (grown == h.loadLease) {
      return;
    }
    h.askedLease = grown;
    facade.log.debug("Tree '{}': a command of '{}' ran out of its time limit under a lease of {}"
        + " ms; renewing it for {} ms", lock.tree, h.what, h.loadLease, grown);
    try {
      // (this command itself is fenced: it changes nothing once another caller took the lock)
      facade.sender.send(fences.timed(grown), new TreeLock.Batch(List.of(
          new TreeLock.Statement(fences.fence(h.token, null, grown), 0))));
      // Only now: a caller who takes this loader over waits out the time limit of the lease the
      // lock document names, so no command may carry a longer one before it is stored (a
      // renewal lost on its way left the shorter lease there, and a command sent again with the
      // longer limit ran on after the load was undone: StalledLoadCommandTest).
      h.loadLease = grown;
      h.renewed();
    } catch (MongoBulkWriteException e) {
      if (!e.getWriteErrors().isEmpty() && MongoErrors.duplicateId(e.getWriteErrors().get(0))) {
        throw lock.lostTo(h.what, lock.read());
      }
      throw e;
    } catch (MongoException e) {
      if (!MongoErrors.transientError(e)) {
        throw e;
      }
      // the fence of the command sent again tells whether the lock is still held
    }
  }

  /**
   * Sends the documents {@code part} (indexes in {@code writes}) of a load batch behind a fresh
   * insert fence; a refused statement is named by its index in {@code writes}.
   */
  private void sendPart(TreeLock.Hold h, List<WriteModel<BsonDocument>> writes, int[] part) {
    if (part.length == 0) {
      return;
    }
    List<WriteModel<BsonDocument>> sub = new ArrayList<>(part.length + 1);
    sub.add(fences.insertFenceStatement(h.token, h.insertFences++));
    for (int k : part) {
      sub.add(writes.get(k));
    }
    try {
      sendFenced(h, sub);
    } catch (MongoBulkWriteException e) {
      if (e.getWriteErrors().isEmpty()) {
        throw e;
      }
      throw renumbered(e, e.getWriteErrors().get(0), prepend(part));
    }
  }

  /** Pauses before a load's batch is sent again; before its release nothing of it stands. */
  private void retryPause(MongoException e, long start) {
    lock.retryPause(e, start, cause -> new ChangeInterruptedException("Could not send a batch to"
        + " tree '" + lock.tree + "' (" + cause.getMessage() + "); nothing of the load stands:"
        + " its journal undoes it at the next access", Outcome.NOT_APPLIED, cause));
  }

  private static int[] identity(int n) {
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = i;
    }
    return out;
  }

  /** {@code indexes} without its first entry (the old fence) — of the documents, with 0 dropped. */
  private static int[] prepend(int[] documents) {
    int[] out = new int[documents.length + 1];
    out[0] = 0;
    System.arraycopy(documents, 0, out, 1, documents.length);
    return out;
  }

  /** Whether the document an insert statement inserts is stored with this load's mark. */
  private boolean ownInsert(TreeLock.Hold h, WriteModel<BsonDocument> insert) {
    return insert instanceof InsertOneModel<BsonDocument> i
        && lock.raw.find(lock.scoped(and(eq("_id", i.getDocument().get("_id")),
            eq(Step.MARK + ".v", h.version)))).first() != null;
  }

  /**
   * The indexes in {@code writes} of the documents of a load batch that are not stored yet with
   * this load's mark, among those of {@code sent} (index 0, the fence, is left out).
   */
  private int[] remaining(TreeLock.Hold h, List<WriteModel<BsonDocument>> writes, int[] sent) {
    List<BsonValue> ids = new ArrayList<>();
    for (int k : sent) {
      if (k > 0) {
        ids.add(((InsertOneModel<BsonDocument>) writes.get(k)).getDocument().get("_id"));
      }
    }
    java.util.Set<BsonValue> landed = new java.util.HashSet<>();
    for (BsonDocument d : lock.raw.find(lock.scoped(and(in("_id", ids),
            eq(Step.MARK + ".v", h.version)))).projection(Projections.include("_id"))) {
      landed.add(d.get("_id"));
    }
    List<Integer> out = new ArrayList<>();
    for (int k : sent) {
      if (k > 0 && !landed.contains(((InsertOneModel<BsonDocument>) writes.get(k)).getDocument()
          .get("_id"))) {
        out.add(k);
      }
    }
    return out.stream().mapToInt(Integer::intValue).toArray();
  }

  /** {@code e} with its error's index put back to the statement's place in the first batch. */
  private static MongoBulkWriteException renumbered(MongoBulkWriteException e,
      BulkWriteError error, int[] original) {
    int at = error.getIndex() < original.length ? original[error.getIndex()] : error.getIndex();
    return new MongoBulkWriteException(e.getWriteResult(), List.of(new BulkWriteError(
        error.getCode(), error.getMessage(), error.getDetails(), at)), e.getWriteConcernError(),
        e.getServerAddress(), e.getErrorLabels());
  }
}
