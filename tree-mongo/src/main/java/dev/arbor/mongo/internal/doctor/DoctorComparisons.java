package dev.arbor.mongo.internal.doctor;

import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.NodeHasChildrenException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Doctor}'s checks compare a store on the caller's server with the reference, {@link
 * InMemoryTreeStore}: the outcome of an operation (the same domain exception or none), the whole
 * tree with {@code check()}, {@code size()} and {@code roots()}, and the reads of given nodes.
 * Every difference throws a {@link DoctorMismatch} naming the operation after which it appeared.
 */
final class DoctorComparisons {
  private DoctorComparisons() {}

  /** Runs {@code run} on both stores; the outcomes must be the same exception or none. */
  static void apply(String what, Consumer<TreeStore> run, TreeStore store,
      TreeStore reference) {
    apply(what, run, run, store, reference);
  }

  /**
   * Runs {@code run} on the store and {@code onReference} on the reference; the outcomes must be
   * the same exception or none.
   */
  static void apply(String what, Consumer<TreeStore> run, Consumer<TreeStore> onReference,
      TreeStore store, TreeStore reference) {
    Class<?> expected = outcome(onReference, reference);
    Class<?> got;
    try {
      got = outcome(run, store);
    } catch (RuntimeException e) {
      throw new DoctorMismatch(what + ": " + DoctorVerdict.describe(e));
    }
    if (!Objects.equals(expected, got)) {
      throw new DoctorMismatch(what + ": " + (got == null ? "succeeded" : "threw "
          + got.getSimpleName()) + ", the reference " + (expected == null ? "succeeded"
          : "threw " + expected.getSimpleName()));
    }
  }

  /** The domain exception {@code run} threw on {@code store}, or null if it returned. */
  private static @Nullable Class<?> outcome(Consumer<TreeStore> run, TreeStore store) {
    try {
      run.accept(store);
      return null;
    } catch (NodeNotFoundException | DuplicateNodeException | InvalidMoveException
        | NodeHasChildrenException e) {
      return e.getClass();
    }
  }

  /** The trees are equal, {@code check()} finds nothing, and sizes and roots agree. */
  static void compareTrees(String after, TreeStore store, TreeStore reference) {
    Tree expected = reference.snapshot();
    Tree got = store.snapshot();
    if (!expected.equals(got)) {
      throw new DoctorMismatch("after " + after + ": the tree is " + got + ", expected "
          + expected);
    }
    List<Problem> problems = store.check();
    if (!problems.isEmpty()) {
      throw new DoctorMismatch("after " + after + ": check() found " + problems);
    }
    if (store.size() != reference.size() || !store.roots().equals(reference.roots())) {
      throw new DoctorMismatch("after " + after + ": size() or roots() differ");
    }
  }

  /**
   * The reads of each of {@code ids} the reference has agree; after {@code "every node"} also
   * {@code childNodes} and {@code subtree}.
   */
  static void compareReads(String after, TreeStore store, TreeStore reference,
      Collection<String> ids) {
    boolean all = after.equals("every node");
    for (String id : ids) {
      if (reference.find(id).isEmpty()) {
        continue;
      }
      same(after, "find(" + id + ")", reference.find(id), store.find(id));
      same(after, "children(" + id + ")", reference.children(id), store.children(id));
      same(after, "ancestors(" + id + ")", reference.ancestors(id), store.ancestors(id));
      same(after, "descendants(" + id + ")", reference.descendants(id), store.descendants(id));
      same(after, "descendants(" + id + ", 1)", reference.descendants(id, 1),
          store.descendants(id, 1));
      same(after, "depth(" + id + ")", reference.depth(id), store.depth(id));
      if (all) {
        same(after, "childNodes(" + id + ")", reference.childNodes(id), store.childNodes(id));
        same(after, "subtree(" + id + ", 2)", reference.subtree(id, 2), store.subtree(id, 2));
      }
    }
  }

  /** One read: {@code got} must equal {@code expected}. */
  static void same(String after, String read, Object expected, Object got) {
    if (!Objects.equals(expected, got)) {
      throw new DoctorMismatch("after " + after + ": " + read + " = " + got + ", expected "
          + expected);
    }
  }
}
