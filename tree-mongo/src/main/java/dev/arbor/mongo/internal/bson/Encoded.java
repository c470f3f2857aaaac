package dev.arbor.mongo.internal.bson;

import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.bson.io.OutputBuffer;

/**
 * Sizes measured in encoded BSON, the unit of MongoDB's limits (16 MB per document, 48 MB per
 * message), never estimated from JSON text (BSON is several times larger for arrays of numbers).
 */
public final class Encoded {
  /** MongoDB's largest document, in bytes. */
  public static final int MAX_DOCUMENT = 16 * 1024 * 1024;
  /** The largest step Arbor plans: leaves room for the command around it and for the journal. */
  public static final int MAX_STEP = 8 * 1024 * 1024;
  /** The largest batch of statements Arbor sends in one command. */
  public static final int MAX_BATCH = 8 * 1024 * 1024;
  /** The most statements Arbor sends in one command. */
  public static final int MAX_BATCH_COUNT = 10_000;

  private Encoded() {}

  /**
   * The encoded size of {@code d} in bytes: the driver's binary writer writing into an output
   * that counts the bytes instead of storing them ({@link Counting}).
   */
  public static int size(BsonDocument d) {
    if (d instanceof RawBsonDocument raw) {
      return raw.getByteBuffer().remaining();
    }
    Counting counted = new Counting();
    try (BsonBinaryWriter writer = new BsonBinaryWriter(counted)) {
      new BsonDocumentCodec().encode(writer, d, EncoderContext.builder().build());
    }
    return counted.getPosition();
  }

  /**
   * A {@link org.bson.io.BsonOutput} that counts what is written: a string as the length of its
   * UTF-8 encoding, as {@code OutputBuffer} writes it (a code point at a time, an unpaired
   * surrogate in three bytes), a C string refused with its NUL character as there. A {@link
   * BasicOutputBuffer} wrote each byte of each string in turn, growing its array as it went: in
   * a profile of tree-mongo's suite, about 3% of the samples (every insert and update measures
   * its document). {@code EncodedTest} holds it to the buffer's sizes.
   */
  static final class Counting extends OutputBuffer {
    private int position;

    @Override
    public void writeBytes(byte[] bytes, int offset, int length) {
      position += length;
    }

    @Override
    public void writeByte(int value) {
      position++;
    }

    @Override
    protected void write(int absolutePosition, int value) {
      // a length written back: the count does not change
    }

    @Override
    public void writeInt32(int value) {
      position += 4;
    }

    @Override
    public void writeInt64(long value) {
      position += 8;
    }

    @Override
    public void writeDouble(double value) {
      position += 8;
    }

    @Override
    public void writeObjectId(org.bson.types.ObjectId value) {
      position += 12;
    }

    @Override
    public void writeString(String value) {
      position += 4 + utf8(value, false) + 1;
    }

    @Override
    public void writeCString(String value) {
      position += utf8(value, true) + 1;
    }

    @Override
    protected int writeCharacters(String str, boolean checkForNullCharacters) {
      int n = utf8(str, checkForNullCharacters) + 1;
      position += n;
      return n;
    }

    private static int utf8(String s, boolean refuseNul) {
      int n = 0;
      for (int i = 0; i < s.length();) {
        int c = s.codePointAt(i);
        if (refuseNul && c == 0) {
          throw new org.bson.BsonSerializationException(String.format("BSON cstring '%s' is not"
              + " valid because it contains a null character at index %d", s, i));
        }
        n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        i += Character.charCount(c);
      }
      return n;
    }

    @Override
    public int getPosition() {
      return position;
    }

    @Override
    public int getSize() {
      return position;
    }

    @Override
    public void truncateToPosition(int newPosition) {
      position = newPosition;
    }

    @Override
    public int pipe(java.io.OutputStream out) {
      throw new UnsupportedOperationException("a count has no bytes");
    }

    @Override
    public java.util.List<org.bson.ByteBuf> getByteBuffers() {
      throw new UnsupportedOperationException("a count has no bytes");
    }
  }
}
