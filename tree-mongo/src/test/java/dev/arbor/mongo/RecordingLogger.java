package dev.arbor.mongo;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** An SLF4J logger that records every line at every level, as "LEVEL message". */
final class RecordingLogger extends LegacyAbstractLogger {
  private static final long serialVersionUID = 1L;
  final List<String> lines = new CopyOnWriteArrayList<>();

  RecordingLogger() {
    this.name = "recording";
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern,
      Object[] arguments, Throwable throwable) {
    lines.add(level + " " + MessageFormatter.basicArrayFormat(pattern, arguments));
  }

  @Override
  public boolean isTraceEnabled() {
    return true;
  }

  @Override
  public boolean isDebugEnabled() {
    return true;
  }

  @Override
  public boolean isInfoEnabled() {
    return true;
  }

  @Override
  public boolean isWarnEnabled() {
    return true;
  }

  @Override
  public boolean isErrorEnabled() {
    return true;
  }
}
