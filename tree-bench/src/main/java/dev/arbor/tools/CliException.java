package dev.arbor.tools;

/** A failure to report to the user as one line on stderr, with a non-zero exit code. */
public final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A failure whose message is the line to print. */
  public CliException(String message) {
    super(message);
  }

  /** A failure whose message is the line to print, caused by {@code cause}. */
  public CliException(String message, Throwable cause) {
    super(message, cause);
  }
}
