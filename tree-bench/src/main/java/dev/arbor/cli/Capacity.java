package dev.arbor.cli;

import dev.arbor.tools.Text;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * How much a load may store where a connection's data lives, checked by {@code arbor import}
 * before it writes anything, against the total of the documents its first pass over the file
 * measured (in encoded BSON, {@link dev.arbor.mongo.TreePattern#measure}):
 *
 * <ul>
 *   <li>a data directory ({@code --data-dir}): a quarter ({@value #DISK_SHARE}) of the usable
 *       space of the directory's file system. The H2 file holds the documents Java-serialized,
 *       larger than their BSON, and keeps old pages until it is compacted, so a load takes a
 *       multiple of its BSON on disk while it runs;
 *   <li>the temporary in-memory server (neither {@code --uri} nor {@code --data-dir}): the JVM's
 *       largest heap ({@code -Xmx}), which must hold {@value #HEAP_PER_BYTE} bytes per byte of
 *       BSON plus {@value #HEAP_PER_NODE} bytes per node. Measured on the embedded server after
 *       a load (heap in use after a collection, its documents and indexes): about 1.5 KB per node
 *       for small documents (100 001 nodes of about 125 bytes of BSON: 150 MB of heap in every
 *       pattern, its maps, entries and strings), 6 bytes per byte for arrays of short strings (a
 *       3 000-level chain as an array of ancestors: 74 MB of BSON, 442 MB of heap) and 1.6 for
 *       long strings (the same chain's materialized paths: 32 MB, 50 MB);
 *   <li>a server ({@code --uri}): Arbor cannot see its disk, so a load of more than {@value
 *       #SERVER_UNCONFIRMED} bytes (1 GB) is done only when the command line confirms it ({@code
 *       --accept-size}).
 * </ul>
 *
 * <p>The limits are the components of an instance: {@link #ofThisMachine()} reads the file system
 * and the JVM; a test gives its own to {@link Arbor#commandLine(java.io.InputStream,
 * java.io.OutputStream, java.io.OutputStream, Capacity)}, so that a refusal is tested without a
 * full disk.
 *
 * @param usableSpace the usable bytes of a directory's file system
 * @param maxHeap the JVM's largest heap in bytes
 * @param serverUnconfirmed the bytes a load into a server stores without confirmation
 */
record Capacity(ToLongFunction<Path> usableSpace, LongSupplier maxHeap, long serverUnconfirmed) {
  /** The share of a data directory's free disk a load may take: one in this many bytes. */
  static final int DISK_SHARE = 4;
  /** Heap per byte of BSON in the in-memory server (arrays of short strings; less for others). */
  static final int HEAP_PER_BYTE = 6;
  /** Heap per node in the in-memory server: its document's maps, entries and index entries. */
  static final int HEAP_PER_NODE = 1536;
  /** The bytes of documents a load into a server stores without {@code --accept-size}. */
  static final long SERVER_UNCONFIRMED = 1L << 30;

  /** The limits of this machine: its file systems, this JVM's {@code -Xmx}, and 1 GB. */
  static Capacity ofThisMachine() {
    return new Capacity(Capacity::usableSpaceOf, () -> Runtime.getRuntime().maxMemory(),
        SERVER_UNCONFIRMED);
  }

  Capacity {
    java.util.Objects.requireNonNull(usableSpace, "usableSpace");
    java.util.Objects.requireNonNull(maxHeap, "maxHeap");
  }

  /** This capacity with another usable space of a directory's file system. */
  Capacity withUsableSpace(ToLongFunction<Path> space) {
    return new Capacity(space, maxHeap, serverUnconfirmed);
  }

  /** This capacity with another largest heap. */
  Capacity withMaxHeap(long bytes) {
    return new Capacity(usableSpace, () -> bytes, serverUnconfirmed);
  }

  /** This capacity with another threshold of a load into a server. */
  Capacity withServerUnconfirmed(long bytes) {
    return new Capacity(usableSpace, maxHeap, bytes);
  }

  /**
   * Why a load of {@code nodes} nodes whose documents total {@code bytes} does not fit where
   * {@code connection} keeps its data, as a clause following "would store about N", or null if
   * it fits.
   */
  String excess(Connection connection, long bytes, long nodes) {
    if (!connection.embedded()) {
      long limit = serverUnconfirmed;
      return bytes <= limit ? null
          : "more than the " + Text.bytes(limit) + " a load into a server stores unconfirmed";
    }
    Path dir = connection.dataDir();
    if (dir != null) {
      long free = usableSpace.applyAsLong(dir);
      long limit = free / DISK_SHARE;
      return bytes <= limit ? null
          : "more than the data directory " + dir + " can take: a quarter of the "
              + Text.bytes(free)
              + " free on its disk (" + Text.bytes(limit) + ")";
    }
    long heap = maxHeap.getAsLong();
    long needed = saturated(bytes, nodes);
    return needed <= heap ? null
        : "which the temporary in-memory server would hold in about " + Text.bytes(needed)
            + " of heap (" + HEAP_PER_BYTE + " bytes per byte, " + Text.bytes(HEAP_PER_NODE)
            + " per node), more than this JVM's " + Text.bytes(heap) + " (java -Xmx)";
  }

  /** {@code HEAP_PER_BYTE * bytes + HEAP_PER_NODE * nodes}, at most {@link Long#MAX_VALUE}. */
  private static long saturated(long bytes, long nodes) {
    try {
      return Math.addExact(Math.multiplyExact(bytes, (long) HEAP_PER_BYTE),
          Math.multiplyExact(nodes, (long) HEAP_PER_NODE));
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /** The usable bytes of the file system of {@code dir}, or of its nearest existing parent. */
  private static long usableSpaceOf(Path dir) {
    Path p = dir.toAbsolutePath();
    while (p != null && !Files.exists(p)) {
      p = p.getParent();
    }
    try {
      return Files.getFileStore(p == null ? dir : p).getUsableSpace();
    } catch (IOException e) {
      return Long.MAX_VALUE; // cannot tell: the load itself reports a full disk
    }
  }

  /**
   * {@code bytes} in binary units, as MongoDB's 16 MB and java's {@code -Xmx64m} count them (1 KB
   * = 1 024 bytes, 1 MB = 1 024 KB, ...), to three significant digits: {@code 812 bytes}, {@code
   * 1.1 MB}, {@code 35.2 GB}, {@code 612 MB}.
   */

}
