package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoClientSettings;
import dev.arbor.mongo.internal.bson.LoadEncoder;
import dev.arbor.mongo.internal.protocol.Step;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonReader;
import org.bson.BsonWriter;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.UuidRepresentation;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * {@link LoadEncoder} writes the bytes the driver's {@code new RawBsonDocument(d, codec)} writes,
 * for every kind of value an attribute or a structural field holds, one document after another
 * through its reused buffer; and defers to a collection's own {@code Document} codec.
 */
class LoadEncoderTest {
  private static final CodecRegistry DEFAULT = MongoClientSettings.getDefaultCodecRegistry();

  static List<Document> documents() {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("a", 1);
    nested.put("b", List.of("x", Map.of("c", 2.5)));
    Document big = new Document("_id", "n2").append("blob", "y".repeat(5_000));
    return List.of(
        new Document("_id", "n0").append("parent", null).append("rank", 0L)
            .append(Step.MARK, Step.mark(7, 0)),
        big,
        new Document("_id", "n1").append("parent", "n0").append("ancestors", List.of("n0"))
            .append("rank", 1_000_000L).append("path", ",n0,").append("left", 2L)
            .append("right", 0L).append("depth", 1L).append("children", List.of())
            .append(Step.MARK, Step.mark(7, 0)).append("i", 42).append("name", "file-1.txt")
            .append("size", 7919L).append("ratio", 0.5).append("ok", true)
            .append("when", new Date(1_700_000_000_000L)).append("oid", new ObjectId(
                "0123456789abcdef01234567")).append("nested", nested)
            .append("tags", Arrays.asList("a", null, 3)).append("doc", new Document("k", "v"))
            .append("dec", new Decimal128(12345L)).append("bytes", new byte[] {1, 2, 3})
            .append("uuid", new UUID(1L, 2L)).append("ü", "ünïcode"),
        new Document("_id", "n3"));
  }

  @Test
  void writesTheBytesOfTheDriversEncodingOneDocumentAfterAnother() {
    // as a client configured with a UUID representation has it
    CodecRegistry registry = CodecRegistries.withUuidRepresentation(DEFAULT,
        UuidRepresentation.STANDARD);
    LoadEncoder encoder = new LoadEncoder(registry);
    Codec<Document> codec = registry.get(Document.class);
    for (int round = 0; round < 2; round++) {
      for (Document d : documents()) {
        RawBsonDocument expected = new RawBsonDocument(d, codec);
        RawBsonDocument actual = encoder.encode(d);
        byte[] want = Arrays.copyOf(expected.getByteBuffer().array(),
            expected.getByteBuffer().remaining());
        assertArrayEquals(want, actual.getByteBuffer().array(), d.toString());
        assertEquals(want.length, actual.getByteBuffer().array().length); // its own size
        assertEquals(expected, actual);
      }
    }
  }

  @Test
  void aValueWithNoCodecIsRefusedAndTheNextDocumentStillEncodes() {
    LoadEncoder encoder = new LoadEncoder(DEFAULT);
    assertThrows(CodecConfigurationException.class,
        () -> encoder.encode(new Document("_id", "x").append("thing", new Object())));
    Document d = new Document("_id", "y").append("n", 1);
    assertEquals(new RawBsonDocument(d, DEFAULT.get(Document.class)), encoder.encode(d));
  }

  @Test
  void aCollectionsOwnDocumentCodecEncodes() {
    Codec<Document> upper = new Codec<>() {
      private final DocumentCodec inner = new DocumentCodec();

      @Override
      public void encode(BsonWriter writer, Document value, EncoderContext context) {
        inner.encode(writer, new Document("_id", value.get("_id")).append("by", "mine"),
            context);
      }

      @Override
      public Document decode(BsonReader reader, DecoderContext context) {
        return inner.decode(reader, context);
      }

      @Override
      public Class<Document> getEncoderClass() {
        return Document.class;
      }
    };
    CodecRegistry mine = CodecRegistries.fromRegistries(CodecRegistries.fromCodecs(upper),
        DEFAULT);
    RawBsonDocument b = new LoadEncoder(mine).encode(new Document("_id", "z").append("n", 1));
    assertEquals(BsonDocument.parse("{_id: 'z', by: 'mine'}"), b);
    assertEquals("z", new DocumentCodec().decode(new BsonBinaryReader(b.getByteBuffer().asNIO()),
        DecoderContext.builder().build()).get("_id"));
  }
}
