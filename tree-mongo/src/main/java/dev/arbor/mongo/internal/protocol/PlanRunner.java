package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoException;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Runs a change's plan as one program of statements: the lead (the claim of an optimistic change,
 * or a fence), the journal (unless the plan is one step that writes one document), the steps, and
 * the release; the fence that stores the journal is the change's commit point. The program is
 * sent by an {@link Execution}; the insert fences it used are swept afterwards, a few dozen at a
 * time.
 */
final class PlanRunner {
  private final TreeLock facade;
  private final LockDocument lock;
  private final Fences fences;
  private final Journal journal;
  private final SpentFences spentFences;

  PlanRunner(TreeLock facade, LockDocument lock, Fences fences, Journal journal) {
    this.facade = facade;
    this.lock = lock;
    this.fences = fences;
    this.journal = journal;
    this.spentFences = new SpentFences(lock);
  }

  /** Whether a plan needs no journal: one step that writes one document. */
  static boolean atomic(List<Step> steps) {
    if (steps.size() != 1) {
      return false;
    }
    Step s = steps.get(0);
    return s instanceof Step.Insert || (s instanceof Step.Update u && !u.multi())
        || (s instanceof Step.Delete d && !d.multi());
  }

  TreeLock.Result run(String token, String origin, TreeLock.@Nullable Quiet claim, long v,
      String what, List<Step> steps, boolean journal, boolean release,
      TreeLock.@Nullable Hold hold) {
    return run(token, origin, claim, v, what, steps, journal, release, hold, false);
  }

  /**
   * @param token the token of the acquisition that writes
   * @param origin the token of the change's writer, which its journal names: {@code token}, or
   *     for a replay the token of the holder that stopped
   * @param journal whether to write a journal (false for a replay: it runs one already stored)
   * @param release whether the program ends with the release (false for a replay: it ends by
   *     recording the journal completed, and its holder goes on)
   * @param alwaysJournal whether to write a journal even for a plan that is {@linkplain #atomic
   *     atomic} (a graft's commit)
   */
  TreeLock.Result run(String token, String origin, TreeLock.@Nullable Quiet claim, long v,
      String what, List<Step> steps, boolean journal, boolean release,
      TreeLock.@Nullable Hold hold, boolean alwaysJournal) {
    // A replay (journal false, release false) runs a journal that is already stored.
    boolean writeJournal = journal && (alwaysJournal || !atomic(steps));
    boolean journaled = writeJournal || !release;
    List<TreeLock.Statement> program = new ArrayList<>();
    List<BsonDocument> parts = new ArrayList<>();
    BsonDocument header = null;
    if (writeJournal) {
      Journal.Written written = this.journal.write(v, what, origin, steps);
      header = written.header();
      parts = written.parts();
    }
    boolean inline = writeJournal && parts.isEmpty();
    Bson lead = inline ? Journal.pending(header, v, origin) : null;
    program.add(new TreeLock.Statement(claim != null
        ? fences.claim(claim, token, v, what, lead) : fences.fence(token, lead), 0));
    for (BsonDocument part : parts) {
      program.add(new TreeLock.Statement(this.journal.partStatement(part), 0));
    }
    if (writeJournal && !inline) {
      program.add(new TreeLock.Statement(fences.fence(token, Journal.pending(header, v, origin)),
          0));
    }
    int commitPoint = writeJournal ? program.size() - 1 : journaled ? 0 : program.size();
    boolean orderedServer = facade.ordered();
    for (int k = 0; k < steps.size(); k++) {
      Step step = steps.get(k);
      program.add(new TreeLock.Statement(!orderedServer && step instanceof Step.Insert i
          ? i.insertModel(v, k + 1, journaled ? null : origin)
          : step.model(v, k + 1, journaled ? null : origin), k + 1));
    }
    // A replay records the change it completed, so that its first holder, if it lost the answer
    // to its commit, can tell that it is done.
    // On a server that stops at the first error, a journaled change's release travels with its
    // commit (and steps) in one command; if that command's answer is lost, the command sent again
    // meets its lead's duplicate key, the lock being free already, and neither the lock's version
    // nor its pending journal tells the writer whether its change landed. So that release records
    // the writer's token among those done, as a replay does.
    program.add(new TreeLock.Statement(!release ? fences.completion(token, v, origin)
        : fences.fence(token, journaled && orderedServer
            ? Journal.releasedBy(origin) : LockDocument.releaseUpdate()), 0));
    Execution x = Execution.of(facade, token, origin, claim, v, what, steps, program,
        commitPoint, journaled, hold);
    x.freeOnFailure = journal && !alwaysJournal;
    long deleted;
    try {
      deleted = x.execute();
    } catch (Execution.Completed c) {
      deleted = -1; // completed by another caller: the count is not known here
    } catch (MongoException e) {
      throw x.failed(e);
    }
    if (!x.fences.isEmpty() && !x.resent) {
      // Every command these fences guarded was answered (none was resent after an I/O error),
      // so none can still arrive: they guard nothing now, and go in the next sweep.
      spentFences.add(x.fences);
    }
    if (!parts.isEmpty()) {
      this.journal.deleteParts(parts);
    }
    return new TreeLock.Result(v, deleted);
  }
}
