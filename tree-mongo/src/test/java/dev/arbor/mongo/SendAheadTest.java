package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.internal.protocol.SendAhead;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The sending thread of streamed loads: one command in flight, in order, failures not lost. */
class SendAheadTest {
  @Test
  void commandsRunOneAtATimeInTheOrderGiven() {
    List<Integer> order = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger running = new AtomicInteger();
    AtomicBoolean overlapped = new AtomicBoolean();
    try (SendAhead ahead = new SendAhead("test-send")) {
      for (int i = 0; i < 200; i++) {
        int n = i;
        ahead.send(() -> {
          if (running.incrementAndGet() > 1) {
            overlapped.set(true);
          }
          order.add(n);
          running.decrementAndGet();
        });
      }
      ahead.await();
    }
    assertEquals(200, order.size());
    for (int i = 0; i < 200; i++) {
      assertEquals(i, order.get(i));
    }
    assertTrue(!overlapped.get(), "two commands ran at once");
  }

  @Test
  void theCallerGoesOnWhileACommandIsInFlight() throws InterruptedException {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    try (SendAhead ahead = new SendAhead("test-send")) {
      ahead.send(() -> {
        started.countDown();
        await(release);
      });
      // send returned while the command waits: the caller builds the next batch meanwhile
      assertTrue(started.await(10, TimeUnit.SECONDS));
      release.countDown();
      ahead.await();
    }
  }

  @Test
  void aFailureIsThrownByTheNextSendAsItWasThrown() {
    IllegalStateException failure = new IllegalStateException("lock lost");
    AtomicBoolean ranAfter = new AtomicBoolean();
    try (SendAhead ahead = new SendAhead("test-send")) {
      ahead.send(() -> {
        throw failure;
      });
      assertSame(failure, assertThrows(IllegalStateException.class,
          () -> ahead.send(() -> ranAfter.set(true))));
      assertTrue(!ranAfter.get(), "a command ran after a failed one");
      ahead.send(() -> {
        throw new AssertionError("an error");
      });
      assertThrows(AssertionError.class, ahead::await);
      ahead.await(); // thrown once
    }
  }

  @Test
  void closeWaitsForTheCommandInFlightAndIgnoresItsFailure() {
    AtomicBoolean done = new AtomicBoolean();
    SendAhead ahead = new SendAhead("test-send");
    ahead.send(() -> {
      sleep(200);
      done.set(true);
      throw new IllegalStateException("late failure");
    });
    ahead.close(); // a load is undone only once nothing of it is on its way
    assertTrue(done.get());
  }

  @Test
  void anInterruptedWaitStillWaitsForTheCommand() {
    AtomicBoolean done = new AtomicBoolean();
    try (SendAhead ahead = new SendAhead("test-send")) {
      ahead.send(() -> {
        sleep(200);
        done.set(true);
      });
      Thread.currentThread().interrupt();
      ahead.await();
      assertTrue(done.get());
      assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
    }
  }

  @Test
  void inlineCommandsRunInTheCallingThreadAfterThoseInFlight() {
    List<String> threads = Collections.synchronizedList(new ArrayList<>());
    try (SendAhead ahead = new SendAhead("test-send")) {
      ahead.send(() -> {
        sleep(100);
        threads.add(Thread.currentThread().getName());
      });
      ahead.inline();
      ahead.send(() -> threads.add(Thread.currentThread().getName()));
    }
    assertEquals(List.of("test-send", Thread.currentThread().getName()), threads);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
