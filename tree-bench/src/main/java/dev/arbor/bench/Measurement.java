package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.util.List;

/**
 * One row of the results: one pattern, shape, size and operation (or workload). Counts are per
 * operation: for a workload, the sequence's totals divided by its length. Nullable components are
 * null where the figure does not apply or the server cannot give it.
 *
 * @param pattern the pattern
 * @param shape where the tree comes from: a generated shape, or the tree file
 * @param size the tree size in nodes
 * @param kind {@code operation} or {@code workload}
 * @param name the operation's or workload's command-line name
 * @param subject what the operation worked on
 * @param subjectSize the nodes in the subject's subtree (1 for a leaf; a workload's length)
 * @param resultSize ids returned by a read, nodes removed by a delete
 * @param steps operations per timed invocation (1, or a workload's length)
 * @param reads of those, the ones that only read (the realised read share is reads / steps)
 * @param samples timed invocations
 * @param minMicros fastest latency per operation, in microseconds (least disturbed by other load)
 * @param medianMicros median latency per operation, in microseconds
 * @param p95Micros 95th-percentile latency per operation, in microseconds
 * @param roundTrips commands sent per operation
 * @param docsReturned documents returned per operation
 * @param docsWritten documents written per operation
 * @param bytesSent bytes sent per operation
 * @param bytesReceived bytes received per operation
 * @param lockRoundTrips of the round trips, those of the store's lock and journal protocol
 * @param lockDocsWritten of the documents written, lock and journal documents
 * @param docsExamined documents examined per operation (explain), or null
 * @param keysExamined index keys examined per operation (explain), or null
 * @param baselineQuery the hand-written query beside a read, or null
 * @param baselineMedianMicros the baseline's median latency, or null
 * @param baselineRoundTrips the baseline's commands, or null
 * @param overhead the median, over the timed invocations, of the store's latency over the
 *     baseline's timed beside it (the same read, store and baseline back to back), or null
 * @param avgDocBytes average document size of the collection after loading, or null
 * @param dataBytes total document size of the collection, or null
 * @param indexBytes total index size, or null where the server does not report it in bytes
 * @param note anything that qualifies the row (a failure, a baseline disagreeing), or empty
 * @param samplesMicros the latency per operation of each timed invocation, in microseconds
 * @param overheadRatios each timed invocation's store latency over the baseline's beside it
 * @param otherOverheadRatios the same for a store of the same collection with the other read
 *     isolation ({@code --isolated-reads}), timed in the same rounds; empty for a change
 */
record Measurement(TreePattern pattern, TreeSource shape, int size, String kind, String name,
    String subject, long subjectSize, long resultSize, int steps, int reads, int samples,
    double minMicros, double medianMicros, double p95Micros, double roundTrips, double docsReturned,
    double docsWritten, double bytesSent, double bytesReceived, double lockRoundTrips,
    double lockDocsWritten, Double docsExamined,
    Double keysExamined, String baselineQuery, Double baselineMedianMicros,
    Double baselineRoundTrips, Double overhead, Double avgDocBytes, Long dataBytes,
    Long indexBytes, String note, List<Double> samplesMicros, List<Double> overheadRatios,
    List<Double> otherOverheadRatios) {

  /** Rounds of the bootstrap that gives a median its interval. */
  static final int BOOTSTRAP_ROUNDS = 2_000;

  /** Copies the samples. */
  Measurement {
    samplesMicros = List.copyOf(samplesMicros);
    overheadRatios = List.copyOf(overheadRatios);
    otherOverheadRatios = List.copyOf(otherOverheadRatios);
  }

  /** The median of {@link #otherOverheadRatios}, or null for a change. */
  Double otherOverhead() {
    return otherOverheadRatios.isEmpty() ? null : median(otherOverheadRatios);
  }

  static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  /**
   * A 95% bootstrap interval of the median latency per operation, from the timed invocations;
   * NaNs for a failed measurement.
   */
  double[] medianInterval(long seed) {
    return samplesMicros.isEmpty() ? new double[] {Double.NaN, Double.NaN}
        : Stats.bootstrapInterval(List.of(samplesMicros), seed, BOOTSTRAP_ROUNDS);
  }

  static final String OPERATION = "operation";
  static final String WORKLOAD = "workload";

  /** Whether the measurement failed (its figures are NaN). */
  boolean failed() {
    return Double.isNaN(medianMicros);
  }

  /** Documents examined per document returned, where explain gave figures and some came back. */
  Double examinedPerReturned() {
    return docsExamined == null || docsReturned == 0 ? null : docsExamined / docsReturned;
  }
}
