package dev.arbor.bench;

import java.util.Locale;

/** Number formats shared by the console and the reports. */
final class Format {
  private Format() {}

  /** An integer with spaces between thousands: {@code 10 000}. */
  static String count(long n) {
    String digits = Long.toString(Math.abs(n));
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < digits.length(); i++) {
      if (i > 0 && (digits.length() - i) % 3 == 0) {
        sb.append(' ');
      }
      sb.append(digits.charAt(i));
    }
    return (n < 0 ? "-" : "") + sb;
  }

  /** A count that may be fractional (a per-operation average): one decimal below 100. */
  static String number(double x) {
    if (Double.isNaN(x)) {
      return "-";
    }
    if (x == Math.rint(x) || Math.abs(x) >= 100) {
      return count(Math.round(x));
    }
    return String.format(Locale.ROOT, "%.1f", x);
  }

  /** A number or a range of numbers: {@code 1} or {@code 1-201}. */
  static String range(double low, double high) {
    if (Double.isNaN(low)) {
      return "-";
    }
    String a = number(low);
    String b = number(high);
    return a.equals(b) ? a : a + "-" + b;
  }

  /** A latency given in microseconds, in a readable unit: {@code 850 us}, {@code 12.3 ms}. */
  static String micros(double us) {
    if (Double.isNaN(us)) {
      return "-";
    }
    if (us < 1_000) {
      return String.format(Locale.ROOT, "%.0f us", us);
    }
    if (us < 1_000_000) {
      return String.format(Locale.ROOT, us < 10_000 ? "%.2f ms" : "%.1f ms", us / 1e3);
    }
    return String.format(Locale.ROOT, "%.2f s", us / 1e6);
  }

  /** Milliseconds with up to three significant decimals, for tables of latencies. */
  static String millis(double us) {
    if (Double.isNaN(us)) {
      return "-";
    }
    double ms = us / 1e3;
    if (ms >= 100) {
      return String.format(Locale.ROOT, "%.0f", ms);
    }
    if (ms >= 10) {
      return String.format(Locale.ROOT, "%.1f", ms);
    }
    if (ms >= 1) {
      return String.format(Locale.ROOT, "%.2f", ms);
    }
    return String.format(Locale.ROOT, "%.3f", ms);
  }

  /** A ratio: {@code 1.00}, {@code 2.4}, {@code 310}. */
  static String ratio(double r) {
    if (Double.isNaN(r)) {
      return "-";
    }
    if (r >= 100) {
      return String.format(Locale.ROOT, "%.0f", r);
    }
    return String.format(Locale.ROOT, r >= 10 ? "%.1f" : "%.2f", r);
  }

  /** A growth exponent: {@code 0.98}; {@code -} when it could not be fitted. */
  static String exponent(double b) {
    return Double.isNaN(b) ? "-" : String.format(Locale.ROOT, "%.2f", b);
  }

  /** A duration in seconds as {@code 2m31s} or {@code 12.3s}. */
  static String duration(double seconds) {
    if (seconds < 60) {
      return String.format(Locale.ROOT, "%.1fs", seconds);
    }
    long s = Math.round(seconds);
    return (s / 60) + "m" + String.format(Locale.ROOT, "%02d", s % 60) + "s";
  }

  /** Pads or truncates to a width, left-aligned. */
  static String left(String s, int width) {
    return s.length() >= width ? s : s + " ".repeat(width - s.length());
  }

  /** Pads to a width, right-aligned. */
  static String right(String s, int width) {
    return s.length() >= width ? s : " ".repeat(width - s.length()) + s;
  }
}
