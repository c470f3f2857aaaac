package dev.arbor.core;

import static java.util.Objects.requireNonNull;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when a structural change could not be carried out to its end by the caller, for a reason
 * other than the request itself (an I/O error, a lost lock); {@link #outcome()} says what became of
 * the change. Whatever the outcome, the stored tree is never left half-changed: it is the tree
 * before the change, or the tree after it.
 *
 * <p>What to do: {@link Outcome#NOT_APPLIED} — nothing was written, the call may be repeated;
 * {@link Outcome#COMMITTED} — the change is in the tree or will be completed by the next access to
 * it, do not repeat it; {@link Outcome#UNKNOWN} — the request that commits the change was sent but
 * its answer was lost, so the change is either not applied or committed: read the tree to find out.
 */
public class ChangeInterruptedException extends TreeException {
  private static final long serialVersionUID = 1L;

  /** What became of the interrupted change. */
  public enum Outcome {
    /** Nothing of the change was written; the tree is as before the call. */
    NOT_APPLIED,
    /**
     * The change was committed: it has been completed, or will be completed by the next access to
     * the tree (its journal is stored with the tree).
     */
    COMMITTED,
    /** Either {@link #NOT_APPLIED} or {@link #COMMITTED}; the answer that would tell was lost. */
    UNKNOWN
  }

  private final Outcome outcome;

  /** Creates an exception for a change with the given outcome and cause (null: none). */
  public ChangeInterruptedException(String message, Outcome outcome,
      @Nullable Throwable cause) {
    super(message + " [" + requireNonNull(outcome, "outcome") + "]", cause);
    this.outcome = outcome;
  }

  /** What became of the change. */
  public Outcome outcome() {
    return outcome;
  }
}
