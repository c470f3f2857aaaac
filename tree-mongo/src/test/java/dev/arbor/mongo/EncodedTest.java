package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.arbor.mongo.internal.bson.Encoded;
import java.util.Random;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonRegularExpression;
import org.bson.BsonSerializationException;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * {@link Encoded#size} counts the bytes the driver's binary writer writes without storing them:
 * for random documents of every BSON type, strings of one to four UTF-8 bytes a code point,
 * unpaired surrogates and nesting, it gives the size of the bytes a {@link BasicOutputBuffer}
 * holds (and of the raw document), and it refuses a key holding NUL as the buffer does.
 */
class EncodedTest {
  private static final String[] PIECES = {"a", "Z", "é", "ß", "€", "中", "😀", "\ud800",
      "\udc00x", "", "path,with,commas", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff"};

  @Test
  void theCountIsTheEncodedSizeForDocumentsOfEveryType() {
    Random r = new Random(60);
    for (int i = 0; i < 2_000; i++) {
      BsonDocument d = document(r, 0);
      int encoded = encoded(d);
      assertEquals(encoded, Encoded.size(d), d::toJson);
      assertEquals(encoded, Encoded.size(new RawBsonDocument(d, new BsonDocumentCodec())));
    }
  }

  @Test
  void aKeyHoldingNulIsRefusedAsTheBufferRefusesIt() {
    BsonDocument d = new BsonDocument("a\u0000b", new BsonInt32(1));
    assertThrows(BsonSerializationException.class, () -> encoded(d));
    assertThrows(BsonSerializationException.class, () -> Encoded.size(d));
  }

  private static int encoded(BsonDocument d) {
    BasicOutputBuffer buffer = new BasicOutputBuffer();
    try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
      new BsonDocumentCodec().encode(writer, d, EncoderContext.builder().build());
    }
    return buffer.toByteArray().length;
  }

  private static BsonDocument document(Random r, int depth) {
    BsonDocument d = new BsonDocument();
    int fields = r.nextInt(6);
    for (int i = 0; i < fields; i++) {
      d.put(text(r).replace("\u0000", "") + i, value(r, depth));
    }
    return d;
  }

  private static BsonValue value(Random r, int depth) {
    return switch (r.nextInt(depth < 3 ? 14 : 12)) {
      case 0 -> new BsonString(text(r));
      case 1 -> new BsonInt32(r.nextInt());
      case 2 -> new BsonInt64(r.nextLong());
      case 3 -> new BsonDouble(r.nextDouble());
      case 4 -> new BsonDecimal128(new Decimal128(r.nextInt()));
      case 5 -> new BsonObjectId(new ObjectId());
      case 6 -> BsonNull.VALUE;
      case 7 -> BsonBoolean.valueOf(r.nextBoolean());
      case 8 -> new BsonDateTime(r.nextLong());
      case 9 -> new BsonBinary(new byte[r.nextInt(40)]);
      case 10 -> new BsonRegularExpression(text(r), "i");
      case 11 -> new BsonTimestamp(r.nextLong());
      case 12 -> document(r, depth + 1);
      default -> {
        BsonArray a = new BsonArray();
        for (int i = r.nextInt(5); i > 0; i--) {
          a.add(value(r, depth + 1));
        }
        yield a;
      }
    };
  }

  private static String text(Random r) {
    StringBuilder b = new StringBuilder();
    for (int i = r.nextInt(8); i > 0; i--) {
      b.append(PIECES[r.nextInt(PIECES.length)]);
    }
    return b.toString();
  }
}
