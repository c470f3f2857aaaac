package dev.arbor.tools;

import java.util.Locale;

/** Text for messages: one line of anything, the first line of a message, a size in bytes. */
public final class Text {
  private Text() {}

  /** Escapes line breaks and other control characters so the message stays on one line. */
  public static String oneLine(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\n') {
        sb.append("\\n");
      } else if (c == '\r') {
        sb.append("\\r");
      } else if (c == '\t') {
        sb.append("\\t");
      } else if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /** The first line of {@code s}, trimmed; empty for null. */
  public static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int newline = s.indexOf('\n');
    return (newline < 0 ? s : s.substring(0, newline)).trim();
  }

  /** A size in bytes for people: {@code 512 bytes}, {@code 1.5 MB}, {@code 120 GB}. */
  public static String bytes(long bytes) {
    if (bytes < 1000) {
      return bytes + (bytes == 1 ? " byte" : " bytes");
    }
    String[] units = {"KB", "MB", "GB", "TB", "PB", "EB"};
    double v = bytes;
    int unit = -1;
    while (v >= 999.5 && unit < units.length - 1) {
      v /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, v < 99.95 ? "%.1f %s" : "%.0f %s", v, units[unit])
        .replace(".0 ", " ");
  }
}
