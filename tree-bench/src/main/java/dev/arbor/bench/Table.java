package dev.arbor.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * A table of strings, rendered as aligned text for the console, as Markdown or as HTML. The first
 * columns (labels) are left-aligned, the others right-aligned (they hold numbers).
 */
final class Table {
  private final List<String> header;
  private final int labels;
  private final List<List<String>> rows = new ArrayList<>();

  /** A table whose first column holds labels. */
  Table(List<String> header) {
    this(header, 1);
  }

  /** A table whose first {@code labels} columns hold labels. */
  Table(List<String> header, int labels) {
    this.header = List.copyOf(header);
    this.labels = labels;
  }

  Table add(List<String> row) {
    if (row.size() != header.size()) {
      throw new IllegalArgumentException("row of " + row.size() + " cells in a table of "
          + header.size() + " columns: " + row);
    }
    rows.add(List.copyOf(row));
    return this;
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  String text() {
    int[] widths = new int[header.size()];
    for (List<String> r : allRows()) {
      for (int i = 0; i < r.size(); i++) {
        widths[i] = Math.max(widths[i], r.get(i).length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (List<String> r : allRows()) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < r.size(); i++) {
        if (i > 0) {
          line.append("  ");
        }
        line.append(i < labels ? Format.left(r.get(i), widths[i])
            : Format.right(r.get(i), widths[i]));
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
    return sb.toString();
  }

  String markdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("| ").append(String.join(" | ", escapeAll(header, true))).append(" |\n|");
    for (int i = 0; i < header.size(); i++) {
      sb.append(i < labels ? " --- |" : " ---: |");
    }
    sb.append('\n');
    for (List<String> r : rows) {
      sb.append("| ").append(String.join(" | ", escapeAll(r, true))).append(" |\n");
    }
    return sb.toString();
  }

  String html() {
    StringBuilder sb = new StringBuilder("<table>\n<thead><tr>");
    for (String h : header) {
      sb.append("<th>").append(Html.escape(h)).append("</th>");
    }
    sb.append("</tr></thead>\n<tbody>\n");
    for (List<String> r : rows) {
      sb.append("<tr>");
      for (int i = 0; i < r.size(); i++) {
        sb.append(i < labels ? "<td>" : "<td class=\"n\">").append(Html.escape(r.get(i)))
            .append("</td>");
      }
      sb.append("</tr>\n");
    }
    return sb.append("</tbody>\n</table>\n").toString();
  }

  private List<List<String>> allRows() {
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    return all;
  }

  private static List<String> escapeAll(List<String> cells, boolean markdown) {
    List<String> out = new ArrayList<>();
    for (String c : cells) {
      out.add(markdown ? c.replace("|", "\\|") : c);
    }
    return out;
  }
}
