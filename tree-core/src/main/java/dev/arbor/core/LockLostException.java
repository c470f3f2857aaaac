package dev.arbor.core;

/**
 * Thrown when a writer lost the tree's lock before its change was committed: it stalled (a pause,
 * a slow network) for longer than its lease, another caller took the lock over, and the writer
 * stopped before its next write. Nothing of the change was written; the tree is exactly what the
 * other writers made of it, and the call may be repeated.
 */
public class LockLostException extends ChangeInterruptedException {
  private static final long serialVersionUID = 1L;

  /** Creates an exception with the given message. */
  public LockLostException(String message) {
    super(message, Outcome.NOT_APPLIED, null);
  }
}
