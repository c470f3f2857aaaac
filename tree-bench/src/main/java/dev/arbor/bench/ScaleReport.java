package dev.arbor.bench;

import static dev.arbor.bench.ScaleBench.OPS;

import dev.arbor.bench.ScaleBench.Figure;
import dev.arbor.bench.ScaleBench.Results;
import dev.arbor.bench.ScaleBench.Settings;
import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The report of a scale run ({@link ScaleBench}) as Markdown: the summary per pattern, the growth
 * exponents of time and round trips, the figures per size, what was skipped and what failed.
 */
final class ScaleReport {
  private ScaleReport() {}

  private static final List<String> READS_AND_WRITES = List.of("entries", "children",
      "ancestors", "descendants", "insert", "move", "delete");

  /** The run as Markdown: the summary per pattern, the exponents, the figures per size. */
  static String markdown(Settings s, Results r) {
    StringBuilder b = new StringBuilder();
    List<Integer> sizes = r.sizes;
    int big = sizes.get(sizes.size() - 1);
    int mid = sizes.size() >= 2 ? sizes.get(sizes.size() - 2) : big;
    b.append(String.format(Locale.ROOT, "arbor scale: sizes %s, client -Xmx%s, repeat %d;"
        + " total run time %s%n%n", sizes.stream().map(ScaleReport::size).toList(),
        s.clientHeap(), s.repeat(), duration(r.totalMillis)));
    b.append("| pattern | load / insertMany at ").append(sizes.stream().map(ScaleReport::size)
        .reduce((x, y) -> x + " / " + y).orElse("")).append(" | client heap at ")
        .append(size(mid)).append(": peak / live | at ").append(size(big))
        .append(": peak / live | load time at ").append(size(big)).append(" | run time |\n");
    b.append("|---|---|---|---|---|---|\n");
    for (TreePattern p : s.patterns()) {
      List<String> ratios = new ArrayList<>();
      for (int n : sizes) {
        double x = r.loadRatio(p, n);
        ratios.add(Double.isNaN(x) ? "–" : String.format(Locale.ROOT, "%.2f", x));
      }
      Map<Integer, Long> heap = r.heap.getOrDefault(p, Map.of());
      Map<Integer, Long> live = r.live.getOrDefault(p, Map.of());
      Figure load = r.figure(p, big, "load");
      b.append("| ").append(Names.of(p)).append(" | ").append(String.join(" / ", ratios))
          .append(" | ").append(mb(heap.get(mid))).append(" / ").append(mb(live.get(mid)))
          .append(" | ").append(mb(heap.get(big))).append(" / ").append(mb(live.get(big)))
          .append(" | ").append(load == null || load.skipped() != null ? "–"
              : duration((long) load.millis())).append(" | ")
          .append(duration(r.patternMillis.getOrDefault(p, 0L)))
          .append(r.failures.containsKey(p) ? " (failed)" : "").append(" |\n");
    }
    cpu(b, s, r, big);
    for (boolean trips : new boolean[] {false, true}) {
      b.append("\nGrowth exponent of ").append(trips ? "round trips" : "time")
          .append(" per operation from ").append(size(sizes.get(0))).append(" to ")
          .append(size(big)).append(" (slope of log ").append(trips ? "round trips" : "time")
          .append(" against log n; 0 flat, 1 linear; `(to X)`: measured up to X only)\n\n");
      b.append("| pattern | load | insertMany | ").append(String.join(" | ", READS_AND_WRITES))
          .append(" |\n|---|---|---|").append("---|".repeat(READS_AND_WRITES.size()))
          .append('\n');
      for (TreePattern p : s.patterns()) {
        b.append("| ").append(Names.of(p));
        for (String op : OPS) {
          double e = r.exponent(p, op, trips);
          int upTo = r.largestMeasured(p, op);
          b.append(" | ").append(Double.isNaN(e) ? "–" : String.format(Locale.ROOT, "%.2f", e));
          if (!Double.isNaN(e) && upTo < big) {
            b.append(" (to ").append(size(upTo)).append(')');
          }
        }
        b.append(" |\n");
      }
    }
    b.append("\nPer size: median time in ms / round trips\n\n");
    b.append("| pattern | n | ").append(String.join(" | ", OPS))
        .append(" | heap: peak / live |\n|---|---|")
        .append("---|".repeat(OPS.size() + 1)).append('\n');
    for (TreePattern p : s.patterns()) {
      for (int n : sizes) {
        b.append("| ").append(Names.of(p)).append(" | ").append(size(n));
        for (String op : OPS) {
          Figure f = r.figure(p, n, op);
          b.append(" | ").append(f == null ? "–" : f.skipped() != null ? "skipped"
              : String.format(Locale.ROOT, "%s / %d", millis(f.millis()), f.roundTrips()));
        }
        b.append(" | ").append(mb(r.heap.getOrDefault(p, Map.of()).get(n))).append(" / ")
            .append(mb(r.live.getOrDefault(p, Map.of()).get(n))).append(" |\n");
      }
    }
    for (Figure f : r.figures) {
      if (f.skipped() != null) {
        b.append("\nSkipped: ").append(Names.of(f.pattern())).append(' ').append(f.op())
            .append(" at ").append(size(f.n())).append(": ").append(f.skipped());
      }
    }
    for (Map.Entry<TreePattern, String> e : r.failures.entrySet()) {
      b.append("\nFailed: ").append(Names.of(e.getKey())).append(": ").append(e.getValue());
    }
    return b.toString().strip() + "\n";
  }

  /**
   * Where the time of the load and of its raw inserts went at size {@code big}: the median run's
   * time and the CPU the client and the server spent meanwhile (a client busier than the raw
   * inserts' competes with the server for the machine's cores).
   */
  private static void cpu(StringBuilder b, Settings s, Results r, int big) {
    if (r.cpu.isEmpty()) {
      return;
    }
    b.append("\nLoad and raw insertMany at ").append(size(big)).append(": median time, the"
        + " CPU time of the client and of the server meanwhile, and the ratios of CPU times"
        + " insertMany / load: the server's, and the client's and server's together\n\n");
    b.append("| pattern | insertMany | its CPU: client / server | load | its CPU: client /"
        + " server | server CPU ratio | total CPU ratio |\n|---|---|---|---|---|---|---|\n");
    for (TreePattern p : s.patterns()) {
      Map<String, double[]> c = r.cpu.getOrDefault(p, Map.of()).getOrDefault(big, Map.of());
      b.append("| ").append(Names.of(p));
      for (String op : List.of("insertMany", "load")) {
        Figure f = r.figure(p, big, op);
        double[] x = c.get(op);
        b.append(" | ").append(f == null || f.skipped() != null ? "–"
            : duration((long) f.millis())).append(" | ").append(x == null ? "–"
            : cpuMs(x[0]) + " / " + cpuMs(x[1]));
      }
      double[] raw = c.get("insertMany");
      double[] load = c.get("load");
      boolean known = raw != null && load != null && raw[1] > 0 && load[1] > 0;
      b.append(" | ").append(known ? String.format(Locale.ROOT, "%.2f", raw[1] / load[1]) : "–")
          .append(" | ").append(known && raw[0] >= 0 && load[0] >= 0 ? String.format(
              Locale.ROOT, "%.2f", (raw[0] + raw[1]) / (load[0] + load[1])) : "–");
      b.append(" |\n");
    }
  }

  private static String cpuMs(double ms) {
    return ms < 0 ? "?" : duration((long) ms);
  }

  static String size(int n) {
    if (n >= 1_000_000 && n % 1_000_000 == 0) {
      return n / 1_000_000 + "M";
    }
    if (n >= 1_000 && n % 1_000 == 0) {
      return n / 1_000 + "k";
    }
    return String.valueOf(n);
  }

  private static String mb(Long bytes) {
    return bytes == null ? "–" : String.format(Locale.ROOT, "%.0f MB", bytes / 1048576.0);
  }

  private static String millis(double ms) {
    return ms >= 100 ? String.format(Locale.ROOT, "%.0f", ms)
        : String.format(Locale.ROOT, "%.2g", ms);
  }

  private static String duration(long ms) {
    if (ms < 1_000) {
      return ms + " ms";
    }
    if (ms < 120_000) {
      return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
    return String.format(Locale.ROOT, "%d min %02d s", ms / 60_000, ms / 1000 % 60);
  }
}
