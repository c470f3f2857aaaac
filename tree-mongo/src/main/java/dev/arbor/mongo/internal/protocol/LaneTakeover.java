package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;

import com.mongodb.MongoException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * What a writer does with a lane it meets that is not its own ({@link Lanes}): clears the marks
 * of a lane that is over, takes over a lane whose lease expired by the server's clock (stops its
 * insert commands, completes its journal if it was committed, clears its marks), and records or
 * completes a lane whose step the server refused (the tree stuck until {@code repair()}).
 */
final class LaneTakeover {
  private final Lanes lanes;

  LaneTakeover(Lanes lanes) {
    this.lanes = lanes;
  }

  /**
   * Settles a mark met: clears it if its lane is over, takes the lane over if its lease expired
   * by the server's clock.
   *
   * @return whether anything changed (else the lane is live: back off)
   */
  boolean resolve(Lanes.Met met) {
    BsonDocument m = met.mark();
    if (m == null) {
      return true;
    }
    String t = Lanes.str(m, "t");
    if (t == null) {
      return false;
    }
    String headId = m.isString("h") ? m.getString("h").getValue() : met.id();
    BsonDocument hm = m;
    if (!headId.equals(met.id())) {
      Document head = lanes.data.find(lanes.key(eq("_id", headId)))
          .projection(Projections.include(Lanes.FIELD))
          .collation(Reads.SIMPLE).first();
      hm = head == null ? null : Lanes.markOf(head);
      if (hm == null || !t.equals(Lanes.str(hm, "t"))) {
        // its head was released or taken over and cleared: a leftover
        lanes.raw.updateOne(lanes.key(and(eq("_id", met.id()), eq(Lanes.T, t), exists(Lanes.H))),
            Updates.unset(Lanes.FIELD),
            new com.mongodb.client.model.UpdateOptions().collation(Reads.SIMPLE));
        return true;
      }
    }
    if (!hm.isDateTime("r") || !hm.isNumber("l")) {
      return false;
    }
    long r = hm.getDateTime("r").getValue();
    long l = hm.getNumber("l").longValue();
    String me = LockDocument.newToken();
    // The heir completes the lane under a longer lease than the lane had (LockDocument.grown):
    // when each heir outlives its lease on a busy machine, takeovers do not chain for ever.
    long lease = lanes.lock.grown(l);
    Bson expired = Filters.expr(new BsonDocument("$gt", new BsonArray(List.of(
        new BsonString("$$NOW"), new BsonDateTime(r + l)))));
    BsonDocument after = lanes.raw.findOneAndUpdate(lanes.key(and(eq("_id", headId), eq(Lanes.T, t),
            Filters.lt(Lanes.R, new BsonDateTime(r + 1)), eq(Lanes.L, l), expired)),
        Updates.combine(Updates.set(Lanes.O, me), Updates.currentDate(Lanes.R),
            Updates.set(Lanes.L, lease)),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(Lanes.FIELD)).collation(Reads.SIMPLE));
    if (after == null) {
      return false;
    }
    BsonDocument mark = after.getDocument(Lanes.FIELD);
    Lanes.Lane heir = lanes.new Lane(t, me, headId, lease);
    heir.renewedAt(mark.getDateTime("r").getValue());
    lanes.takeovers.incrementAndGet();
    lanes.tree.log.warn("Tree '{}': took the lock over from a change in a subtree whose lease"
        + " of {} ms expired while doing: {}", lanes.lock.tree, l,
        mark.isString("w") ? mark.getString("w").getValue() : "?");
    // The stopped lane's commands that started before its deadline may still run until their
    // time limit on MongoDB (which reads $$NOW once per command): waited out from that deadline.
    finish(heir, mark, l, r + l - mark.getDateTime("r").getValue());
    return true;
  }

  /**
   * Completes a lane taken over: stops its insert commands, replays its journal if it was
   * committed, and clears its marks. An insert command that passed its insert fence before the
   * revocation may still be running on a server that runs commands side by side: it stops at its
   * time limit, within the lease the mark held when it was taken over ({@code stoppedLease}),
   * which is waited out first ({@link Fences#awaitStartedInserts}; {@code
   * LateInsertCommandTest}). Not the heir's lease: that one is grown from the taker's own
   * configured lease, and waiting it out held a taker with the default lease of 30 s
   * for 27 s behind a lane of 100 ms.
   */
  private void finish(Lanes.Lane heir, BsonDocument mark, long stoppedLease,
      long deadlineFromNow) {
    heir.keepAlive();
    try {
      int next = revokeInserts(heir.token, heir.owner);
      if (next > 0) {
        lanes.tree.fences.awaitStartedInserts(stoppedLease);
      } else {
        lanes.tree.fences.awaitStartedCommands(deadlineFromNow, stoppedLease);
      }
      heir.insertFences = next + 1;
      complete(heir, mark);
    } finally {
      heir.stop();
    }
  }

  private void complete(Lanes.Lane heir, BsonDocument mark) {
    if (mark.isArray("j")) {
      long v = mark.getNumber("v", new BsonInt64(0)).longValue();
      List<Step> steps = new ArrayList<>();
      for (BsonValue s : mark.getArray("j")) {
        steps.add(Step.decode(s.asDocument()));
      }
      String what = mark.isString("w") ? mark.getString("w").getValue() : "a change";
      lanes.tree.log.info("Tree '{}': completing the journal of '{}' (change {}), left by a lane"
          + " that stopped", lanes.lock.tree, what, v);
      heir.version = v;
      try {
        lanes.programs.replay(heir, steps);
      } catch (LaneProgram.Completed c) {
        return; // taken over in turn: the next heir finishes
      } catch (LaneProgram.Refused r) {
        throw stuck(heir, what, r, steps.size());
      }
    }
    if (!lanes.renew(heir)) {
      return; // taken over in turn: the next heir finishes
    }
    // the version first: see LaneProtocol.read
    lanes.raw.updateOne(lanes.lock.lockKey(), Updates.combine(Lanes.bump(heir.token, null),
        Updates.unset(LockDocument.IN_FLIGHT + "." + heir.token)));
    lanes.raw.updateMany(Fences.before(lanes.key(eq(Lanes.T, heir.token)), heir.deadline()),
        Updates.unset(Lanes.FIELD), new com.mongodb.client.model.UpdateOptions()
            .collation(Reads.SIMPLE));
  }

  /**
   * A step of a lane's journal that the server refuses, after steps before it ran: the tree is
   * stuck, as it is when a step under the tree's lock is refused ({@link
   * LockDocument#stuck}). The lock document records it, naming the lane (its token and head),
   * whose marks and journal stay; nothing reads or changes the tree until {@code repair()}
   * completes the journal ({@link #completeStuck}).
   *
   * @return the exception to throw
   */
  TreeException stuck(Lanes.Lane lane, String what, LaneProgram.Refused r, int steps) {
    BsonDocument stuck = new BsonDocument("v", new BsonInt64(lane.version))
        .append("what", new BsonString(what)).append("step", new BsonInt32(r.step + 1))
        .append("steps", new BsonInt32(steps))
        .append("error", new BsonString(String.valueOf(r.cause.getMessage())))
        .append("lane", new BsonDocument("t", new BsonString(lane.token))
            .append("h", new BsonString(lane.head)));
    try {
      lanes.raw.updateOne(lanes.lock.lockKey(),
          Updates.combine(Updates.set(LockDocument.STUCK, stuck),
          Updates.inc(LockDocument.VERSION, 1L)));
    } catch (MongoException e) {
      // the lane's marks and journal stay: whoever meets them after its lease replays it and
      // records this again
    }
    lanes.tree.log.error("Tree '{}' is stuck: step {} of {} of '{}', in a lane, was refused by the"
        + " server: {}; repair() completes it once the cause is removed", lanes.lock.tree,
        r.step + 1, steps, what, r.cause.getMessage());
    return lanes.lock.stuck(stuck);
  }

  /**
   * Completes the journal of the lane a stuck tree names ({@code lane}: its token and head), as
   * {@code repair()} does holding the tree's lock: takes the lane over without waiting for its
   * lease (its writer stopped when the step was refused), replays its journal and clears its
   * marks.
   *
   * @throws TreeException if the server still refuses a step (the tree stays stuck)
   */
  void completeStuck(BsonDocument lane) {
    String t = lane.getString("t").getValue();
    String headId = lane.getString("h").getValue();
    String me = LockDocument.newToken();
    BsonDocument after = lanes.raw.findOneAndUpdate(
        lanes.key(and(eq("_id", headId), eq(Lanes.T, t))),
        Updates.combine(Updates.set(Lanes.O, me), Updates.currentDate(Lanes.R)),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(Lanes.FIELD)).collation(Reads.SIMPLE));
    if (after == null) {
      return; // completed meanwhile: its marks are gone
    }
    BsonDocument mark = after.getDocument(Lanes.FIELD);
    // the lease the mark holds (its takeover renewed it, keeping its length), which another
    // process may have set shorter than this store's
    Lanes.Lane heir = lanes.new Lane(t, me, headId,
        mark.isNumber("l") ? mark.getNumber("l").longValue() : lanes.lock.leaseMillis);
    heir.renewedAt(mark.getDateTime("r").getValue());
    lanes.takeovers.incrementAndGet();
    // its writer stopped when its step was refused: none of its commands still runs
    finish(heir, mark, heir.leaseMillis, Fences.LONG_PAST);
  }

  /**
   * Takes the next insert fence of lane {@code token}, for {@code owner}: its next insert command
   * fails. The lane's commands number their fences without gaps (a command sent again keeps its
   * number until a fence of it is known stored), so every command that has not passed its fence
   * yet fails.
   *
   * @return the number of the fence taken
   */
  int revokeInserts(String token, String owner) {
    return lanes.tree.fences.takeNextInsertFence(b -> lanes.insertFence(token, b), owner);
  }
}
