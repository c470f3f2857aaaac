package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.util.List;

/**
 * One row of the results: one pattern, shape, size and operation (or workload), its figures
 * grouped by meaning. Counts are per operation: for a workload, the sequence's totals divided by
 * its length. Nullable components of the groups are null where the figure does not apply or the
 * server cannot give it.
 *
 * <pre>
 * Measurement
 *   key       pattern, shape, size, kind, name           which cell
 *   work      subject, its size, result size, steps      what one invocation did
 *   latency   samples, min, median, p95 (µs per op)      how long it took
 *   traffic   round trips, documents, bytes, lock share  what it cost on the wire
 *   explain   documents and keys examined                what the server scanned
 *   baseline  hand-written query, its latency, ratios    what it is compared with
 *   stored    document and index sizes                   what the tree takes
 *   note      a failure, a baseline disagreeing, or ""
 * </pre>
 *
 * @param key which cell this is
 * @param work what one invocation did
 * @param latency how long it took
 * @param traffic what it cost on the wire, per operation
 * @param explain what the server examined, per operation
 * @param baseline the hand-written query it is compared with
 * @param stored the sizes of the collection after loading
 * @param note anything that qualifies the row (a failure, a baseline disagreeing), or empty
 */
record Measurement(Key key, Work work, Latency latency, Traffic traffic, Explain explain,
    Baseline baseline, Stored stored, String note) {

  /** Rounds of the bootstrap that gives a median its interval. */
  static final int BOOTSTRAP_ROUNDS = 2_000;

  static final String OPERATION = "operation";
  static final String WORKLOAD = "workload";

  /**
   * Which cell a measurement is.
   *
   * @param pattern the pattern
   * @param shape where the tree comes from: a generated shape, or the tree file
   * @param size the tree size in nodes
   * @param kind {@link #OPERATION} or {@link #WORKLOAD}
   * @param name the operation's or workload's command-line name
   */
  record Key(TreePattern pattern, TreeSource shape, int size, String kind, String name) {}

  /**
   * What one invocation did.
   *
   * @param subject what the operation worked on
   * @param subjectSize the nodes in the subject's subtree (1 for a leaf; a workload's length)
   * @param resultSize ids returned by a read, nodes removed by a delete
   * @param steps operations per timed invocation (1, or a workload's length)
   * @param reads of those, the ones that only read (the realised read share is reads / steps)
   */
  record Work(String subject, long subjectSize, long resultSize, int steps, int reads) {}

  /**
   * How long an operation took, in microseconds per operation; NaN for a failed measurement.
   *
   * @param samples timed invocations
   * @param minMicros fastest latency (least disturbed by other load)
   * @param medianMicros median latency
   * @param p95Micros 95th-percentile latency
   * @param samplesMicros the latency of each timed invocation
   */
  record Latency(int samples, double minMicros, double medianMicros, double p95Micros,
      List<Double> samplesMicros) {
    /** Copies the samples. */
    Latency {
      samplesMicros = List.copyOf(samplesMicros);
    }

    /**
     * A 95% bootstrap interval of the median latency, from the timed invocations; NaNs for a
     * failed measurement.
     */
    double[] medianInterval(long seed) {
      return samplesMicros.isEmpty() ? new double[] {Double.NaN, Double.NaN}
          : Stats.bootstrapInterval(List.of(samplesMicros), seed, BOOTSTRAP_ROUNDS);
    }
  }

  /**
   * What an operation cost on the wire, per operation (the counted invocation's {@link
   * dev.arbor.tools.Counts} divided by its steps); NaN for a failed measurement.
   *
   * @param roundTrips commands sent
   * @param docsReturned documents returned
   * @param docsWritten documents written
   * @param bytesSent bytes sent
   * @param bytesReceived bytes received
   * @param lockRoundTrips of the round trips, those of the store's lock and journal protocol
   * @param lockDocsWritten of the documents written, lock and journal documents
   */
  record Traffic(double roundTrips, double docsReturned, double docsWritten, double bytesSent,
      double bytesReceived, double lockRoundTrips, double lockDocsWritten) {}

  /**
   * What the server examined per operation, from {@code explain}; both null where the server
   * has no explain.
   *
   * @param docsExamined documents examined, or null
   * @param keysExamined index keys examined, or null
   */
  record Explain(Double docsExamined, Double keysExamined) {
    static final Explain NONE = new Explain(null, null);
  }

  /**
   * The hand-written query timed beside a read (or raw inserts beside a load); all null, and
   * the ratios empty, for a change.
   *
   * @param query the hand-written query, or null
   * @param medianMicros its median latency, or null
   * @param roundTrips its commands, or null
   * @param overhead the median, over the timed invocations, of the store's latency over the
   *     baseline's timed beside it (the same read, store and baseline back to back), or null
   * @param overheadRatios each timed invocation's store latency over the baseline's beside it
   * @param otherOverheadRatios the same for a store of the same collection with the other read
   *     isolation ({@code --isolated-reads}), timed in the same rounds; empty for a change
   */
  record Baseline(String query, Double medianMicros, Double roundTrips, Double overhead,
      List<Double> overheadRatios, List<Double> otherOverheadRatios) {
    static final Baseline NONE = new Baseline(null, null, null, null, List.of(), List.of());

    /** Copies the ratios. */
    Baseline {
      overheadRatios = List.copyOf(overheadRatios);
      otherOverheadRatios = List.copyOf(otherOverheadRatios);
    }

    /** The median of {@link #otherOverheadRatios}, or null for a change. */
    Double otherOverhead() {
      return otherOverheadRatios.isEmpty() ? null : median(otherOverheadRatios);
    }
  }

  /**
   * The sizes of the collection after loading, each null where the server does not say.
   *
   * @param avgDocBytes average document size
   * @param dataBytes total document size
   * @param indexBytes total index size (only where the server reports it in bytes)
   */
  record Stored(Double avgDocBytes, Long dataBytes, Long indexBytes) {
    static final Stored UNKNOWN = new Stored(null, null, null);

    /** The figures of a server's storage statistics, or unknown without them. */
    static Stored of(Server.Storage s) {
      return s == null ? UNKNOWN : new Stored(s.avgDocBytes(), s.dataBytes(), s.indexBytes());
    }
  }

  static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  /** Whether the measurement failed (its figures are NaN). */
  boolean failed() {
    return Double.isNaN(latency.medianMicros());
  }

  /** Documents examined per document returned, where explain gave figures and some came back. */
  Double examinedPerReturned() {
    return explain.docsExamined() == null || traffic.docsReturned() == 0 ? null
        : explain.docsExamined() / traffic.docsReturned();
  }
}
