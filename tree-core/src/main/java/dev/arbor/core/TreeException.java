package dev.arbor.core;

import org.jspecify.annotations.Nullable;

/**
 * Base class of the exceptions a {@link TreeStore} throws for a request the tree cannot honour.
 * When a store throws one for the request itself (an unknown or duplicate id, an invalid move),
 * the stored tree is exactly as it was before the call; {@link ChangeInterruptedException} says
 * what became of a change that could not be carried out to its end.
 */
public class TreeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Creates an exception with the given message. */
  public TreeException(String message) {
    super(message);
  }

  /** Creates an exception with the given message and cause (null: none). */
  public TreeException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
