package dev.arbor.mongo.internal.bson;

import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;

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

  /** The encoded size of {@code d} in bytes. */
  public static int size(BsonDocument d) {
    if (d instanceof RawBsonDocument raw) {
      return raw.getByteBuffer().remaining();
    }
    BasicOutputBuffer buffer = new BasicOutputBuffer();
    try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
      new BsonDocumentCodec().encode(writer, d, EncoderContext.builder().build());
    }
    return buffer.getPosition();
  }
}
