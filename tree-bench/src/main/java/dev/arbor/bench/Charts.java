package dev.arbor.bench;

import java.util.List;
import java.util.Locale;

/**
 * Inline SVG bar charts for the HTML report: one group of bars per shape, workload or size, one
 * bar per pattern, each pattern always in its own colour. Counts are drawn on a linear axis, so
 * that 3, 4 and 5 round trips look different; a figure that spans orders of magnitude (latency,
 * documents written when nested sets rewrite the tree) on a logarithmic one, which the axis says.
 * An interval, where given, is a whisker on its bar. Charts scale down to the page's width.
 */
final class Charts {
  /** One colour per pattern, in {@code TreePattern} order: Okabe-Ito, told apart by most eyes. */
  static final String[] COLOURS = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00"};

  /** How values map to heights. */
  enum Axis {
    /** From 0, evenly: differences between small counts show. */
    LINEAR,
    /** Powers of ten evenly: values spanning orders of magnitude all show. */
    LOG;

    /** Linear unless the positive values span more than a factor of {@code 50}. */
    static Axis fitting(double[][] values) {
      double min = Double.MAX_VALUE;
      double max = 0;
      for (double[] row : values) {
        for (double v : row) {
          if (v > 0 && !Double.isInfinite(v)) {
            min = Math.min(min, v);
            max = Math.max(max, v);
          }
        }
      }
      return max > 0 && max / min > 50 ? LOG : LINEAR;
    }
  }

  /** The width of a chart of its own; two side by side fit an 800-pixel page. */
  static final int WIDTH = 520;
  static final int HALF_WIDTH = 360;
  private static final int HEIGHT = 240;
  private static final int LEFT = 52;
  private static final int RIGHT = 10;
  private static final int TOP = 52;
  private static final int BOTTOM = 24;
  /** Estimated width of a legend character and the space around a legend entry, in pixels. */
  private static final double LEGEND_CHAR = 5.6;
  private static final double LEGEND_GAP = 14;

  private Charts() {}

  /**
   * A grouped bar chart.
   *
   * @param width the chart's width in pixels ({@link #WIDTH} or {@link #HALF_WIDTH})
   * @param groups the groups, left to right
   * @param series the bars of each group (pattern names)
   * @param colours the colour of each series
   * @param values values[group][series]; NaN for none
   * @param low the low ends of intervals, [group][series], or null for none
   * @param high their high ends, or null
   * @param tooltips tooltips[group][series], shown on hover
   */
  static String bars(String title, String unit, Axis axis, int width, List<String> groups,
      List<String> series, List<String> colours, double[][] values, double[][] low,
      double[][] high, String[][] tooltips) {
    double[][] extent = high != null ? high : values;
    Scale y = axis == Axis.LOG ? Scale.log(extent, TOP, HEIGHT - BOTTOM)
        : Scale.linear(extent, TOP, HEIGHT - BOTTOM);
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
            + " role=\"img\"><title>%s</title>\n", width, HEIGHT, width, HEIGHT,
        Html.escape(title)));
    text(sb, 6, 14, "start", title, "font-weight:bold");
    text(sb, 6, 28, "start", unit + (axis == Axis.LOG ? " (log scale)" : ""), null);
    for (double v : y.ticks()) {
      double py = y.at(v);
      sb.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n", LEFT,
          width - RIGHT, py, py));
      text(sb, LEFT - 4, py + 4, "end", tick(v), null);
    }
    sb.append(String.format(Locale.ROOT,
        "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", LEFT, width - RIGHT,
        HEIGHT - BOTTOM, HEIGHT - BOTTOM));
    double groupWidth = (double) (width - LEFT - RIGHT) / Math.max(1, groups.size());
    double barWidth = groupWidth * 0.8 / Math.max(1, series.size());
    for (int g = 0; g < groups.size(); g++) {
      double x0 = LEFT + g * groupWidth + groupWidth * 0.1;
      for (int s = 0; s < series.size(); s++) {
        double v = values[g][s];
        if (Double.isNaN(v)) {
          continue;
        }
        double top = y.at(v);
        double x = x0 + s * barWidth;
        sb.append(String.format(Locale.ROOT,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                + "<title>%s</title></rect>\n",
            x, top, Math.max(1, barWidth - 1), Math.max(0.5, y.bottom - top), colours.get(s),
            Html.escape(tooltips[g][s])));
        if (low != null && high != null && !Double.isNaN(low[g][s])) {
          double mid = x + (barWidth - 1) / 2;
          double a = y.at(low[g][s]);
          double b = y.at(high[g][s]);
          sb.append(String.format(Locale.ROOT, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f"
              + " %.1fH%.1f\" stroke=\"#222\" fill=\"none\"/>\n", mid, a, b, mid - 3, a, mid + 3,
              mid - 3, b, mid + 3));
        }
      }
      text(sb, LEFT + g * groupWidth + groupWidth / 2, HEIGHT - BOTTOM + 14, "middle",
          groups.get(g), null);
    }
    legend(sb, series, colours, width);
    return sb.append("</svg>").toString();
  }

  /** The legend on one row under the unit, right-aligned, or from the left edge if it must. */
  private static void legend(StringBuilder sb, List<String> series, List<String> colours,
      int width) {
    double total = 0;
    for (String name : series) {
      total += LEGEND_GAP + LEGEND_CHAR * name.length();
    }
    double x = Math.max(6, width - RIGHT - total);
    for (int s = 0; s < series.size(); s++) {
      sb.append(String.format(Locale.ROOT,
          "<rect x=\"%.1f\" y=\"33\" width=\"9\" height=\"9\" fill=\"%s\"/>", x,
          colours.get(s)));
      text(sb, x + 12, 41, "start", series.get(s), "font-size:10px");
      x += LEGEND_GAP + LEGEND_CHAR * series.get(s).length();
    }
    sb.append('\n');
  }

  private static String tick(double v) {
    if (v >= 1_000_000) {
      return String.format(Locale.ROOT, "%.0fM", v / 1e6);
    }
    if (v >= 10_000) {
      return String.format(Locale.ROOT, "%.0fk", v / 1e3);
    }
    if (v == Math.rint(v)) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    return String.format(Locale.ROOT, "%s", Double.toString(v).replaceAll("0+$", ""));
  }

  private static void text(StringBuilder sb, double x, double y, String anchor, String s,
      String style) {
    sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>%s"
        + "</text>\n", x, y, anchor, style == null ? "" : " style=\"" + style + "\"",
        Html.escape(s)));
  }

  /** Values to pixel rows: linear from 0 to a round maximum, or powers of ten. */
  private static final class Scale {
    final boolean log;
    final double min;
    final double max;
    final double step;
    final double top;
    final double bottom;

    private Scale(boolean log, double min, double max, double step, double top, double bottom) {
      this.log = log;
      this.min = min;
      this.max = max;
      this.step = step;
      this.top = top;
      this.bottom = bottom;
    }

    static Scale linear(double[][] values, double top, double bottom) {
      double max = 0;
      for (double[] row : values) {
        for (double v : row) {
          if (!Double.isNaN(v) && !Double.isInfinite(v)) {
            max = Math.max(max, v);
          }
        }
      }
      if (max == 0) {
        max = 1;
      }
      double raw = max / 5;
      double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
      double step = magnitude * (raw <= magnitude ? 1 : raw <= 2 * magnitude ? 2
          : raw <= 5 * magnitude ? 5 : 10);
      return new Scale(false, 0, step * Math.ceil(max / step), step, top, bottom);
    }

    static Scale log(double[][] values, double top, double bottom) {
      double min = Double.MAX_VALUE;
      double max = 0;
      for (double[] row : values) {
        for (double v : row) {
          if (v > 0 && !Double.isInfinite(v)) {
            min = Math.min(min, v);
            max = Math.max(max, v);
          }
        }
      }
      if (max == 0) {
        return new Scale(true, 0, 1, 1, top, bottom);
      }
      int lo = (int) Math.floor(Math.log10(min / 2)); // the smallest bar stays visible
      int hi = (int) Math.ceil(Math.log10(max));
      return new Scale(true, lo, Math.max(hi, lo + 1), 1, top, bottom);
    }

    double[] ticks() {
      int n = (int) Math.round((max - min) / step);
      double[] ticks = new double[n + 1];
      for (int i = 0; i <= n; i++) {
        ticks[i] = log ? Math.pow(10, min + i) : min + i * step;
      }
      return ticks;
    }

    /** The pixel row of a value; values at or below the axis's start sit on it. */
    double at(double v) {
      double f;
      if (log) {
        f = v > 0 ? (Math.log10(v) - min) / (max - min) : 0;
      } else {
        f = v / max;
      }
      f = Math.max(0, Math.min(1, f));
      return bottom - f * (bottom - top);
    }
  }
}
