package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.arbor.mongo.internal.protocol.Lease;
import dev.arbor.mongo.internal.protocol.LeaseScheduler;
import dev.arbor.mongo.internal.protocol.LockDocument;
import dev.arbor.mongo.internal.protocol.Timing;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * The background renewals of a {@link Lease} keep to their period on a fake clock: a held lease
 * is renewed on the server at every third of the lease, whoever renewed it last, so that a live
 * holder has two thirds of its lease of slack against a late renewal. Before the fix a renewal
 * stamped its time after its round trip and the next tick, one period after the last, found it not
 * yet due: every other tick was skipped, the server saw a renewal every two thirds of the lease
 * only, and a renewal late by a third of the lease on a loaded machine let a live holder's lease
 * expire ({@code FencingTest}'s live holders, at load 40).
 */
class LeaseRenewalTest {
  private static final long LEASE = 300;
  private static final long ROUND_TRIP = 2;

  /** A clock that moves only when told. */
  static final class FakeTiming implements Timing {
    final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    void advance(long millis) {
      nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    @Override
    public long nanoTime() {
      return nanos.get();
    }

    @Override
    public void sleep(long millis) {
      advance(millis);
    }
  }

  /** A scheduler that only remembers the renewal: the test runs its ticks. */
  static final class ManualScheduler implements LeaseScheduler {
    Runnable renewal;
    long period;

    @Override
    public java.util.concurrent.Future<?> every(long periodMillis, Runnable renewal) {
      this.renewal = renewal;
      this.period = periodMillis;
      return new CompletableFuture<>();
    }
  }

  @Test
  void backgroundRenewalsReachTheServerEveryThirdOfTheLease() {
    FakeTiming clock = new FakeTiming();
    List<Long> renewals = new ArrayList<>(); // fake times at which a renewal was sent
    CommandListener listener = new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent e) {
        if (e.getCommandName().equals("update")
            && e.getCommand().toJson().contains("$currentDate")) {
          synchronized (renewals) {
            renewals.add(TimeUnit.NANOSECONDS.toMillis(clock.nanoTime()));
          }
          clock.advance(ROUND_TRIP); // the round trip takes time too
        }
      }
    };
    try (MongoClient client = MongoTestServer.get().recordingClient(listener)) {
      MongoCollection<BsonDocument> raw = MongoTestServer.get().freshCollection(client)
          .withDocumentClass(BsonDocument.class);
      LockDocument lock = new LockDocument(raw, null, LEASE, 10_000, clock);
      String token = LockDocument.newToken();
      raw.updateOne(lock.lockKey(), lock.take(token, "test"), new UpdateOptions().upsert(true));
      ManualScheduler scheduler = new ManualScheduler();
      synchronized (renewals) {
        renewals.clear(); // the taking of the lock is not a renewal of this lease
      }
      long start = TimeUnit.NANOSECONDS.toMillis(clock.nanoTime());
      Thread holder = Thread.currentThread();
      assertTrue(holder.isAlive());
      try (Lease lease = new Lease(lock, token, "test", true, scheduler)) {
        assertEquals(LEASE / 3, scheduler.period);
        long tick = start;
        for (int i = 0; i < 12; i++) {
          tick += scheduler.period;
          clock.nanos.set(TimeUnit.MILLISECONDS.toNanos(tick)); // the timer fires on time
          scheduler.renewal.run();
        }
      }
      List<Long> sent;
      synchronized (renewals) {
        sent = new ArrayList<>(renewals);
      }
      long last = start;
      for (long at : sent) {
        assertTrue(at - last <= LEASE / 2, "the server saw no renewal from " + (last - start)
            + " to " + (at - start) + " ms of a " + LEASE + " ms lease: " + sent);
        last = at;
      }
      long end = start + 12 * scheduler.period;
      assertTrue(end - last <= LEASE / 2, "no renewal after " + (last - start) + " ms: " + sent);
      assertTrue(sent.size() >= 11, "renewals sent: " + sent);
    }
  }

  @Test
  void aTickRightAfterTheHoldersOwnRenewalSendsNone() {
    FakeTiming clock = new FakeTiming();
    List<Long> renewals = new ArrayList<>();
    CommandListener listener = new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent e) {
        if (e.getCommandName().equals("update")
            && e.getCommand().toJson().contains("$currentDate")) {
          synchronized (renewals) {
            renewals.add(TimeUnit.NANOSECONDS.toMillis(clock.nanoTime()));
          }
        }
      }
    };
    try (MongoClient client = MongoTestServer.get().recordingClient(listener)) {
      MongoCollection<BsonDocument> raw = MongoTestServer.get().freshCollection(client)
          .withDocumentClass(BsonDocument.class);
      LockDocument lock = new LockDocument(raw, null, LEASE, 10_000, clock);
      String token = LockDocument.newToken();
      raw.updateOne(lock.lockKey(), lock.take(token, "test"), new UpdateOptions().upsert(true));
      ManualScheduler scheduler = new ManualScheduler();
      try (Lease lease = new Lease(lock, token, "test", true, scheduler)) {
        synchronized (renewals) {
          renewals.clear();
        }
        clock.advance(scheduler.period - 5);
        lease.renewed(); // the holder's own fenced write renewed the lease just now
        clock.advance(5);
        scheduler.renewal.run(); // the tick: the holder renewed 5 ms ago
        synchronized (renewals) {
          assertEquals(List.of(), renewals, "a renewal right after the holder's own");
        }
        clock.advance(scheduler.period);
        scheduler.renewal.run();
        synchronized (renewals) {
          assertEquals(1, renewals.size(), "the next tick renews: " + renewals);
        }
      }
    }
  }
}
