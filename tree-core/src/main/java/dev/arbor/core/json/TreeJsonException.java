package dev.arbor.core.json;

import dev.arbor.core.TreeException;
import org.jspecify.annotations.Nullable;

/**
 * Thrown when a nested-JSON tree file is malformed: a JSON syntax error, a node without an {@code
 * id}, a field of the wrong type, an unknown field, a duplicate id. The message starts with the
 * line and column of the culprit and names the node when one is known, for example {@code line 7,
 * column 15: duplicate id 'dbm'}.
 *
 * <p>A reader that throws this exception has produced no {@link dev.arbor.core.Tree}, so nothing
 * can have been written from a file that fails to parse.
 */
public class TreeJsonException extends TreeException {
  private static final long serialVersionUID = 1L;

  private final int line;
  private final int column;
  private final String reason;

  /**
   * Creates an exception for a problem at a position of the input.
   *
   * @param line the 1-based line of the culprit, or {@code -1} if unknown
   * @param column the 1-based column of the culprit, or {@code -1} if unknown
   * @param reason what is wrong, in words, without the position
   */
  public TreeJsonException(int line, int column, String reason) {
    this(line, column, reason, null);
  }

  /**
   * Creates an exception for a problem at a position of the input, caused by {@code cause}.
   *
   * @param line the 1-based line of the culprit, or {@code -1} if unknown
   * @param column the 1-based column of the culprit, or {@code -1} if unknown
   * @param reason what is wrong, in words, without the position
   * @param cause the underlying exception, or {@code null}
   */
  public TreeJsonException(int line, int column, String reason, @Nullable Throwable cause) {
    super(position(line, column) + reason, cause);
    this.line = line;
    this.column = column;
    this.reason = reason;
  }

  private static String position(int line, int column) {
    if (line < 0) {
      return "";
    }
    return column < 0 ? "line " + line + ": " : "line " + line + ", column " + column + ": ";
  }

  /** The 1-based line of the culprit, or {@code -1} if unknown. */
  public int line() {
    return line;
  }

  /** The 1-based column of the culprit, or {@code -1} if unknown. */
  public int column() {
    return column;
  }

  /** What is wrong, without the position. */
  public String reason() {
    return reason;
  }
}
