package dev.arbor.core;

/**
 * Thrown by a streaming read ({@link TreeStore#entries()}) when a change took effect while the
 * stream was being read, after some entries had been delivered: the entries delivered so far may
 * mix the tree before and after that change, so the caller discards them and reads again.
 */
public class TreeChangedException extends TreeException {
  private static final long serialVersionUID = 1L;

  /** An exception with this message. */
  public TreeChangedException(String message) {
    super(message);
  }
}
