package dev.arbor.cli;

/** A failure to report to the user as one line on stderr, with a non-zero exit code. */
final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  CliException(String message) {
    super(message);
  }

  CliException(String message, Throwable cause) {
    super(message, cause);
  }
}
