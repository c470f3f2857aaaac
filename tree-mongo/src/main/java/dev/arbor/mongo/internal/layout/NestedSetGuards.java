package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.MongoTreeStore.ID;

import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * What a nested-set change can tell about the numbering from the documents its first read
 * returns anyway (the subject's, the anchor's, the first root's, for a new last root the last
 * one's), before anything is written: a change shifts every number to the right of its place,
 * so one that starts from broken numbers spreads them.
 *
 * <p>Each document read must hold an interval: numeric {@code left} and {@code right}, {@code
 * left} at least 1 and below {@code right}, and an odd {@code right - left} (each node takes two
 * numbers, and each descendant two more: an even difference leaves a number unused inside the
 * interval or shares one with another node). Any two of them must share no number and either
 * nest or lie apart. And when nodes exist, one of them has {@code left} 1. A document not read
 * is not judged: two siblings that overlap are seen only by a change that reads both.
 */
final class NestedSetGuards {
  private final String leftField;
  private final String rightField;

  NestedSetGuards(String leftField, String rightField) {
    this.leftField = leftField;
    this.rightField = rightField;
  }

  /**
   * Refuses {@code change} when the documents it read ({@code read}, nulls skipped, a document
   * read twice counted once) show broken numbers.
   *
   * @param firstAsked whether the read asked for the documents whose {@code left} is 1 (all of
   *     them are then in {@code read}): if it did and found none while it found nodes, the
   *     numbering does not start at 1
   * @throws TreeException naming the node (or both nodes) and what is wrong, saying that nothing
   *     was written and pointing at {@code check()} and {@code repair()}
   */
  void refuseBroken(String change, Collection<? extends @Nullable Document> read,
      boolean firstAsked) {
    Map<Object, Document> byId = new LinkedHashMap<>();
    for (Document d : read) {
      if (d != null) {
        byId.putIfAbsent(d.get(ID), d);
      }
    }
    List<Document> docs = new ArrayList<>(byId.values());
    boolean first = false;
    for (Document d : docs) {
      String wrong = wrongInterval(d);
      if (wrong != null) {
        throw refused(change, wrong);
      }
      first |= left(d) == 1;
    }
    for (int i = 0; i < docs.size(); i++) {
      for (int j = i + 1; j < docs.size(); j++) {
        String wrong = wrongPair(docs.get(i), docs.get(j));
        if (wrong != null) {
          throw refused(change, wrong);
        }
      }
    }
    if (firstAsked && !first && !docs.isEmpty()) {
      Document d = docs.get(0);
      throw refused(change, "no node has " + leftField + " 1, where the numbering starts, but '"
          + d.get(ID) + "' " + shown(d) + " exists: the numbers leave a gap before it");
    }
  }

  /** What is wrong with the interval of {@code d} alone, or null. */
  private @Nullable String wrongInterval(Document d) {
    if (!(d.get(leftField) instanceof Number) || !(d.get(rightField) instanceof Number)) {
      return "node '" + d.get(ID) + "' has " + leftField + " " + d.get(leftField) + " and "
          + rightField + " " + d.get(rightField) + ", not two numbers";
    }
    long left = left(d);
    long right = right(d);
    if (left < 1) {
      return "node '" + d.get(ID) + "' has " + leftField + " " + left + ": the numbers start at 1";
    }
    if (left >= right) {
      return "node '" + d.get(ID) + "' has " + leftField + " " + left + " and " + rightField + " "
          + right + ": " + leftField + " must be below " + rightField;
    }
    if ((right - left) % 2 == 0) {
      return "node '" + d.get(ID) + "' has the interval " + shown(d) + ", " + (right - left + 1)
          + " numbers where each node takes two: a number inside it is unused (a gap) or"
          + " another node's";
    }
    return null;
  }

  /** What is wrong with two intervals, each sound alone, together; or null. */
  private @Nullable String wrongPair(Document a, Document b) {
    long al = left(a);
    long ar = right(a);
    long bl = left(b);
    long br = right(b);
    for (long v : new long[] {al, ar}) {
      if (v == bl || v == br) {
        return "nodes '" + a.get(ID) + "' " + shown(a) + " and '" + b.get(ID) + "' " + shown(b)
            + " share the number " + v;
      }
    }
    boolean apart = ar < bl || br < al;
    boolean nested = al < bl && br < ar || bl < al && ar < br;
    if (!apart && !nested) {
      return "the intervals of '" + a.get(ID) + "' " + shown(a) + " and '" + b.get(ID) + "' "
          + shown(b) + " overlap: neither holds the other";
    }
    return null;
  }

  private TreeException refused(String change, String wrong) {
    return new TreeException("Cannot " + change + ": " + wrong + ". The nested-set numbers are"
        + " broken, and the change would shift them and spread the damage: run check(), which"
        + " lists the problems, then repair(), which renumbers intervals that nest (overlapping"
        + " ones are left to you). Nothing was written.");
  }

  private String shown(Document d) {
    return "[" + d.get(leftField) + ", " + d.get(rightField) + "]";
  }

  private long left(Document d) {
    return NestedSetLayout.num(d, leftField);
  }

  private long right(Document d) {
    return NestedSetLayout.num(d, rightField);
  }
}
