package dev.arbor.bench;

import java.util.List;
import java.util.Locale;

/**
 * Inline SVG charts for the HTML report, on logarithmic value axes (the figures span several
 * orders of magnitude): grouped bars, and lines over tree sizes.
 */
final class Charts {
  /** One colour per series, colour-blind-friendly (Okabe-Ito, then Tol). */
  static final String[] COLOURS = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00",
      "#56B4E9", "#F0E442", "#000000", "#882255", "#44AA99", "#999933", "#AA4499", "#332288",
      "#88CCEE", "#117733"};

  private static final int WIDTH = 520;
  private static final int HEIGHT = 250;
  private static final int LEFT = 56;
  private static final int RIGHT = 12;
  private static final int TOP = 40;
  private static final int BOTTOM = 36;
  /** Estimated width of a legend character and the space around a legend entry, in pixels. */
  private static final double LEGEND_CHAR = 6.2;
  private static final double LEGEND_GAP = 16;

  private Charts() {}

  /**
   * A grouped bar chart: one group per {@code groups} entry, one bar per series in each.
   *
   * @param values values[group][series]; NaN for none
   * @param tooltips tooltips[group][series], shown on hover
   */
  static String bars(String title, String unit, List<String> groups, List<String> series,
      double[][] values, String[][] tooltips) {
    Scale y = Scale.of(values, TOP, HEIGHT - BOTTOM);
    StringBuilder sb = open(title);
    axis(sb, y, unit);
    double plotWidth = WIDTH - LEFT - RIGHT;
    double groupWidth = plotWidth / Math.max(1, groups.size());
    double barWidth = groupWidth * 0.8 / Math.max(1, series.size());
    for (int g = 0; g < groups.size(); g++) {
      double x0 = LEFT + g * groupWidth + groupWidth * 0.1;
      for (int s = 0; s < series.size(); s++) {
        double v = values[g][s];
        if (Double.isNaN(v)) {
          continue;
        }
        double top = y.at(v);
        sb.append(String.format(Locale.ROOT,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                + "<title>%s</title></rect>\n",
            x0 + s * barWidth, top, Math.max(1, barWidth - 1), Math.max(0.5, y.bottom - top),
            COLOURS[s % COLOURS.length], Html.escape(tooltips[g][s])));
      }
      text(sb, LEFT + g * groupWidth + groupWidth / 2, HEIGHT - BOTTOM + 14, "middle",
          groups.get(g));
    }
    legend(sb, series);
    return sb.append("</svg>").toString();
  }

  /**
   * A line chart over tree sizes (logarithmic x), one line per series.
   *
   * @param values values[series][size]; NaN for none
   */
  static String lines(String title, String unit, List<Integer> sizes, List<String> series,
      double[][] values) {
    int width = WIDTH + 150;
    Scale y = Scale.of(values, TOP, HEIGHT - BOTTOM);
    StringBuilder sb = open(title, width);
    axis(sb, y, unit, width - 150);
    double lo = Math.log10(sizes.get(0));
    double hi = Math.log10(sizes.get(sizes.size() - 1));
    double plotRight = width - 150 - RIGHT;
    java.util.function.DoubleUnaryOperator x = n -> hi == lo ? (LEFT + plotRight) / 2
        : LEFT + 10 + (Math.log10(n) - lo) / (hi - lo) * (plotRight - LEFT - 20);
    for (int size : sizes) {
      text(sb, x.applyAsDouble(size), HEIGHT - BOTTOM + 14, "middle", Format.count(size));
    }
    text(sb, (LEFT + plotRight) / 2, HEIGHT - 6, "middle", "tree size (nodes, log scale)");
    for (int s = 0; s < series.size(); s++) {
      String colour = COLOURS[s % COLOURS.length];
      StringBuilder points = new StringBuilder();
      for (int i = 0; i < sizes.size(); i++) {
        double v = values[s][i];
        if (Double.isNaN(v)) {
          continue;
        }
        double px = x.applyAsDouble(sizes.get(i));
        double py = y.at(v);
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
        sb.append(String.format(Locale.ROOT,
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s</title></circle>\n",
            px, py, colour, Html.escape(series.get(s) + " at " + Format.count(sizes.get(i))
                + ": " + Format.number(v) + " " + unit)));
      }
      sb.append("<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"").append(colour)
          .append("\" points=\"").append(points.toString().trim()).append("\"/>\n");
      double ly = TOP + s * 14;
      sb.append(String.format(Locale.ROOT,
          "<rect x=\"%d\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", width - 140,
          ly - 9, colour));
      text(sb, width - 126, ly, "start", series.get(s));
    }
    return sb.append("</svg>").toString();
  }

  private static StringBuilder open(String title) {
    return open(title, WIDTH);
  }

  private static StringBuilder open(String title, int width) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
            + " role=\"img\"><title>%s</title>\n", width, HEIGHT, width, HEIGHT,
        Html.escape(title)));
    text(sb, 8, 16, "start", title, "font-weight:bold");
    return sb;
  }

  private static void axis(StringBuilder sb, Scale y, String unit) {
    axis(sb, y, unit, WIDTH);
  }

  private static void axis(StringBuilder sb, Scale y, String unit, int width) {
    for (int e = y.minExp; e <= y.maxExp; e++) {
      double v = Math.pow(10, e);
      double py = y.at(v);
      sb.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n", LEFT,
          width - RIGHT, py, py));
      text(sb, LEFT - 4, py + 4, "end", tick(v));
    }
    sb.append(String.format(Locale.ROOT,
        "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", LEFT, width - RIGHT,
        HEIGHT - BOTTOM, HEIGHT - BOTTOM));
    text(sb, 8, 30, "start", unit + " (log scale)");
  }

  private static void legend(StringBuilder sb, List<String> series) {
    double width = 0;
    for (String name : series) {
      width += LEGEND_GAP + LEGEND_CHAR * name.length();
    }
    double x = Math.max(LEFT, WIDTH - RIGHT - width); // right-aligned, clear of the unit label
    for (int s = 0; s < series.size(); s++) {
      sb.append(String.format(Locale.ROOT,
          "<rect x=\"%.1f\" y=\"21\" width=\"10\" height=\"10\" fill=\"%s\"/>", x,
          COLOURS[s % COLOURS.length]));
      text(sb, x + 13, 30, "start", series.get(s));
      x += LEGEND_GAP + LEGEND_CHAR * series.get(s).length();
    }
    sb.append('\n');
  }

  private static String tick(double v) {
    if (v >= 1_000_000) {
      return String.format(Locale.ROOT, "%.0fM", v / 1e6);
    }
    if (v >= 1_000) {
      return String.format(Locale.ROOT, "%.0fk", v / 1e3);
    }
    if (v >= 1) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    return String.format(Locale.ROOT, "%s", Double.toString(v).replaceAll("0+$", ""));
  }

  private static void text(StringBuilder sb, double x, double y, String anchor, String s) {
    text(sb, x, y, anchor, s, null);
  }

  private static void text(StringBuilder sb, double x, double y, String anchor, String s,
      String style) {
    sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>%s"
        + "</text>\n", x, y, anchor, style == null ? "" : " style=\"" + style + "\"",
        Html.escape(s)));
  }

  /** A logarithmic scale from whole powers of ten around the data to pixel rows. */
  private static final class Scale {
    final int minExp;
    final int maxExp;
    final double top;
    final double bottom;

    private Scale(int minExp, int maxExp, double top, double bottom) {
      this.minExp = minExp;
      this.maxExp = maxExp;
      this.top = top;
      this.bottom = bottom;
    }

    static Scale of(double[][] values, double top, double bottom) {
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
        return new Scale(0, 1, top, bottom);
      }
      int lo = (int) Math.floor(Math.log10(min / 2)); // the smallest bar stays visible
      int hi = (int) Math.ceil(Math.log10(max));
      if (hi <= lo) {
        hi = lo + 1;
      }
      return new Scale(lo, hi, top, bottom);
    }

    /** The pixel row of a value; values at or below zero sit on the axis. */
    double at(double v) {
      if (!(v > 0)) {
        return bottom;
      }
      double f = (Math.log10(v) - minExp) / (maxExp - minExp);
      return bottom - f * (bottom - top);
    }
  }
}
