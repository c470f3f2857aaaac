package dev.arbor.mongo.internal.doctor;


/**
 * A comparison of {@link Doctor}'s with the reference that failed: the check it happened in is
 * reported {@link Doctor.Status#FAILED} with this message as its detail. It keeps no stack trace
 * (the message says what differed, after which operation).
 */
final class DoctorMismatch extends RuntimeException {
  private static final long serialVersionUID = 1L;

  DoctorMismatch(String message) {
    super(message, null, false, false);
  }
}
