package dev.arbor.embedded;

import de.bwaldvogel.mongo.backend.KeyValue;
import org.h2.mvstore.type.ObjectDataType;
import org.jspecify.annotations.Nullable;

/**
 * The key type of the H2 maps that hold the unique indexes of a data directory ({@code _id}
 * among them): H2's {@link ObjectDataType}, the type the server's H2 backend opens them with, in
 * all but the cost of its comparison.
 *
 * <p>A {@link KeyValue} is not {@link Comparable}, so {@code ObjectDataType} orders two of them by
 * their Java serializations, compared as unsigned bytes: each comparison of a search in the map's
 * B-tree serializes both keys, a new {@code ObjectOutputStream} each time. In an import into a
 * data directory that was most of the time (measured: 40% of the CPU of a 60 000-node import).
 * This type gives the same order without serializing where both keys are one string each, the
 * keys of string ids: the serializations of two such keys differ only in the string, written as
 * its length in modified UTF-8 (two bytes, big-endian, for up to 65 535 bytes) and then those
 * bytes, so their order is the order of the lengths, then of the bytes. Any other pair is
 * compared by {@code ObjectDataType} itself. Keys are written and read as {@code ObjectDataType}
 * writes and reads them: files are the same either way, and a map keeps its order whichever of
 * the two types opens it ({@code KeyValueTypeTest} compares the two orders).
 */
final class KeyValueType extends ObjectDataType {
  /** The longest string in modified UTF-8 that serialization writes with a two-byte length. */
  private static final int SHORT_STRING_BYTES = 0xFFFF;

  @Override
  public int compare(Object a, Object b) {
    if (a instanceof KeyValue x && b instanceof KeyValue y && x.size() == 1 && y.size() == 1
        && x.get(0) instanceof String s && y.get(0) instanceof String t) {
      byte[] u = modifiedUtf8(s);
      byte[] v = modifiedUtf8(t);
      if (u != null && v != null) {
        if (u.length != v.length) {
          return u.length < v.length ? -1 : 1;
        }
        return ObjectDataType.compareNotNull(u, v);
      }
    }
    return super.compare(a, b);
  }

  /**
   * {@code s} in modified UTF-8, as {@code DataOutput.writeUTF} writes it, or null if it is
   * longer than {@value #SHORT_STRING_BYTES} bytes.
   */
  static byte @Nullable [] modifiedUtf8(String s) {
    int n = s.length();
    int bytes = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      bytes += c >= 1 && c <= 0x7F ? 1 : c <= 0x7FF ? 2 : 3;
    }
    if (bytes > SHORT_STRING_BYTES) {
      return null;
    }
    byte[] out = new byte[bytes];
    int j = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 1 && c <= 0x7F) {
        out[j++] = (byte) c;
      } else if (c <= 0x7FF) {
        out[j++] = (byte) (0xC0 | (c >> 6));
        out[j++] = (byte) (0x80 | (c & 0x3F));
      } else {
        out[j++] = (byte) (0xE0 | (c >> 12));
        out[j++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        out[j++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return out;
  }
}
