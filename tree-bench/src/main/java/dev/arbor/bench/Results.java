package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Everything one run produced: its parameters and environment, the measurements, the patterns
 * skipped and the warnings raised along the way.
 *
 * @param settings the run's parameters
 * @param started when the run started
 * @param elapsedSeconds how long it took
 * @param server what the server was
 * @param serverVersion the version it reports
 * @param embedded whether it was the embedded server
 * @param explain whether it answered explain
 * @param measured the patterns measured
 * @param skipped the patterns not measured, with the reason
 * @param measurements one per pattern, shape, size and operation or workload
 * @param warnings problems met, each naming its cell
 */
record Results(Settings settings, Instant started, double elapsedSeconds, String server,
    String serverVersion, boolean embedded, boolean explain, List<TreePattern> measured,
    Map<TreePattern, String> skipped, List<Measurement> measurements, List<String> warnings) {

  /** The names measured, in run order: operations then workloads. */
  List<String> names() {
    List<String> names = new java.util.ArrayList<>();
    for (Operation op : settings.ops()) {
      names.add(Names.of(op));
    }
    for (Workload w : settings.workloads()) {
      names.add(w.name());
    }
    return names;
  }

  /** The largest size measured. */
  int largestSize() {
    return settings.sizes().get(settings.sizes().size() - 1);
  }

  /** The measurement of a cell, or null. */
  Measurement find(TreePattern pattern, TreeSource shape, int size, String name) {
    for (Measurement m : measurements) {
      if (m.key().pattern() == pattern && m.key().shape() == shape && m.key().size() == size
          && m.key().name().equals(name)) {
        return m;
      }
    }
    return null;
  }
}
