package dev.arbor.mongo.internal.doctor;

import dev.arbor.mongo.Doctor;
import org.jspecify.annotations.Nullable;

/**
 * How one check of {@link Doctor} ended, before it is timed into a {@link Doctor.Capability}:
 * passed with what was run, not offered with the reason, or failed with what went wrong, on one
 * line.
 *
 * @param status how it ended
 * @param detail what was run, why it failed, or why the server does not offer it
 */
public record DoctorVerdict(Doctor.Status status, String detail) {
  /** Used, and every comparison passed; {@code detail} says what was run. */
  static DoctorVerdict passed(String detail) {
    return new DoctorVerdict(Doctor.Status.PASSED, detail);
  }

  /** Not offered by the server; {@code why} says what it lacks. */
  public static DoctorVerdict notOffered(String why) {
    return new DoctorVerdict(Doctor.Status.NOT_OFFERED, why);
  }

  /**
   * Failed with {@code e}: a {@link DoctorMismatch}'s message, or any other exception's class and
   * first line, on one line of at most 300 characters.
   */
  public static DoctorVerdict failed(RuntimeException e) {
    return new DoctorVerdict(Doctor.Status.FAILED,
        oneLine(e instanceof DoctorMismatch ? e.getMessage() : describe(e)));
  }

  /** An exception's simple class name and first line (a command error: its message and code). */
  static String describe(Throwable e) {
    String message = e.getMessage();
    if (e instanceof com.mongodb.MongoCommandException c) {
      message = c.getErrorMessage() + " (code " + c.getErrorCode() + ")";
    }
    return e.getClass().getSimpleName() + ": " + firstLine(message);
  }

  private static String firstLine(@Nullable String s) {
    if (s == null) {
      return "";
    }
    int newline = s.indexOf('\n');
    return newline < 0 ? s : s.substring(0, newline);
  }

  private static String oneLine(@Nullable String s) {
    String line = String.valueOf(s).replace("\r", "\\r").replace("\n", "\\n");
    return line.length() > 300 ? line.substring(0, 300) + "..." : line;
  }
}
