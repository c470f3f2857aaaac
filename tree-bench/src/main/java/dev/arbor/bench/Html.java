package dev.arbor.bench;

import java.util.List;

/** Renders a report's blocks as one self-contained HTML page: inline CSS and SVG, no scripts. */
final class Html {
  private static final String STYLE = """
      body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1em auto;
        max-width:1100px;padding:0 1em;color:#222;overflow-wrap:anywhere}
      h1{margin:.3em 0}p,ul{margin:.4em 0}
      .wide{overflow-x:auto;max-width:100%}
      h1{font-size:1.5em}h2{margin:1.2em 0 .4em;border-bottom:1px solid #ddd;padding-bottom:.2em}
      table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}
      th,td{border:1px solid #ddd;padding:3px 8px}th{background:#f4f4f4;text-align:left}
      td.n{text-align:right;font-variant-numeric:tabular-nums}
      .note{background:#fff8e1;border-left:4px solid #f0b400;padding:.5em 1em}
      .charts{display:flex;flex-wrap:wrap;gap:.6em}
      svg{background:#fff;border:1px solid #eee;max-width:100%;height:auto}
      svg text{font:11px system-ui,sans-serif;fill:#333}
      code{background:#f4f4f4;padding:0 3px}
      """;

  private Html() {}

  static String escape(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '&' -> sb.append("&amp;");
        case '"' -> sb.append("&quot;");
        case '\'' -> sb.append("&#39;");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }

  static String render(String title, List<Report.Block> blocks) {
    StringBuilder sb = new StringBuilder();
    sb.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<title>").append(escape(title)).append("</title>\n<style>\n").append(STYLE)
        .append("</style>\n</head>\n<body>\n");
    boolean inCharts = false;
    for (Report.Block b : blocks) {
      boolean chart = b instanceof Report.Chart;
      if (chart && !inCharts) {
        sb.append("<div class=\"charts\">\n");
      } else if (!chart && inCharts) {
        sb.append("</div>\n");
      }
      inCharts = chart;
      if (b instanceof Report.Heading h) {
        sb.append("<h").append(h.level()).append('>').append(escape(h.text())).append("</h")
            .append(h.level()).append(">\n");
      } else if (b instanceof Report.Text t) {
        sb.append(t.note() ? "<p class=\"note\">" : "<p>").append(escape(t.text()))
            .append("</p>\n");
      } else if (b instanceof Report.Bullets l) {
        sb.append("<ul>\n");
        for (String item : l.items()) {
          sb.append("<li>").append(escape(item)).append("</li>\n");
        }
        sb.append("</ul>\n");
      } else if (b instanceof Report.TableBlock t) {
        sb.append("<div class=\"wide\">").append(t.table().html()).append("</div>\n");
      } else if (b instanceof Report.Chart c) {
        sb.append(c.svg()).append('\n');
      } else if (b instanceof Report.Code c) {
        sb.append("<pre><code>").append(escape(c.text())).append("</code></pre>\n");
      }
    }
    if (inCharts) {
      sb.append("</div>\n");
    }
    return sb.append("</body>\n</html>\n").toString();
  }
}
