package dev.arbor.core;

import java.util.List;

/**
 * Shared fixtures for store tests: the manual's category tree with its expected reads, and ids
 * chosen to break naive string handling.
 */
public final class Fixtures {
  private Fixtures() {}

  /**
   * The category tree of the MongoDB manual (section 4.2), siblings in the order that gives the
   * manual's nested-set numbers (Books 1–12, Programming 2–11, Languages 3–4, Databases 5–10,
   * MongoDB 6–7, dbm 8–9).
   */
  public static final String CATEGORIES = "Books(Programming(Languages Databases(MongoDB dbm)))";

  /** The manual's category tree as a value. */
  public static Tree categories() {
    return Tree.parse(CATEGORIES);
  }

  /**
   * Ids that break naive implementations: path delimiters, escapes, regex and query operators,
   * dots, white space, unicode and look-alikes of reserved words.
   */
  public static final List<String> HOSTILE_IDS =
      List.of(
          ",",
          ",,",
          "a,b",
          "\\",
          "\\,",
          "a\\,b,",
          ".",
          "a.b",
          "$",
          "$where",
          "$gt",
          "$$ROOT",
          "$literal",
          "ends\\",
          "-",
          "a-b",
          "^.*$",
          "(?i)x",
          "[a-z]+",
          "|",
          "*",
          " ",
          " padded ",
          "tab\there",
          "line\nbreak",
          "null",
          "0",
          "-1",
          "_id",
          "{}",
          "\"q\"",
          "日本語",
          "ümlaut",
          "🌳 tree",
          "a/b/c",
          "\u0000nul",
          "\uffff");

  /**
   * Position number {@code kind} (0 to 5: firstRoot, lastRoot, firstChildOf, lastChildOf, before,
   * after) relative to {@code anchor}, for generated operations.
   */
  public static Position position(int kind, String anchor) {
    return switch (kind) {
      case 0 -> Position.firstRoot();
      case 1 -> Position.lastRoot();
      case 2 -> Position.firstChildOf(anchor);
      case 3 -> Position.lastChildOf(anchor);
      case 4 -> Position.before(anchor);
      default -> Position.after(anchor);
    };
  }

  /** Writes the tree with inserts (not {@link TreeStore#load}), appending each node in preorder. */
  public static void insertAll(TreeStore store, Tree tree) {
    for (Node e : tree.entries()) {
      store.insert(
          e.id(),
          e.parentId() == null ? Position.lastRoot() : Position.lastChildOf(e.parentId()),
          e.attributes());
    }
  }
}
