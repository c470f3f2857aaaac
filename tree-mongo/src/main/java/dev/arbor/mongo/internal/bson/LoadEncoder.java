package dev.arbor.mongo.internal.bson;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.bson.BsonBinaryWriter;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.Codec;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;

/**
 * Encodes the documents of a load to raw BSON, byte for byte as {@code new RawBsonDocument(d,
 * codec)} does with the collection's {@link DocumentCodec}, for less of the client's work per
 * document: each value's codec is looked up once per class and load (not in the registry for
 * every value), the document is written into one buffer reused by the load, and each encoded
 * document keeps an array of its own size (not the 1 KB buffer a {@code RawBsonDocument} built
 * from a codec keeps). A collection whose {@code Document} codec is not the driver's own is
 * encoded by that codec, as before. One thread at a time: the load's builder.
 */
public final class LoadEncoder {
  private static final EncoderContext CONTEXT = EncoderContext.builder().build();

  private final Codec<Document> codec;
  private final CodecRegistry registry;
  private final boolean own;
  private final Map<Class<?>, Codec<Object>> codecs = new HashMap<>();
  private final BasicOutputBuffer buffer = new BasicOutputBuffer(512);

  public LoadEncoder(CodecRegistry registry) {
    this.registry = registry;
    this.codec = registry.get(Document.class);
    this.own = codec.getClass() == DocumentCodec.class;
  }

  /**
   * The document as raw BSON.
   *
   * @throws org.bson.codecs.configuration.CodecConfigurationException for a value with no codec
   */
  public RawBsonDocument encode(Document d) {
    if (!own) {
      return new RawBsonDocument(d, codec);
    }
    buffer.truncateToPosition(0);
    try (BsonBinaryWriter w = new BsonBinaryWriter(buffer)) {
      // as DocumentCodec.encode with a default context: the fields in order, null as null,
      // every other value by the registry's codec for its class, in a child context
      w.writeStartDocument();
      for (Map.Entry<String, Object> e : d.entrySet()) {
        w.writeName(e.getKey());
        Object v = e.getValue();
        if (v == null) {
          w.writeNull();
        } else {
          CONTEXT.encodeWithChildContext(codecFor(v.getClass()), w, v);
        }
      }
      w.writeEndDocument();
    }
    return new RawBsonDocument(Arrays.copyOf(buffer.getInternalBuffer(),
        buffer.getPosition()));
  }

  @SuppressWarnings("unchecked")
  private Codec<Object> codecFor(Class<?> type) {
    Codec<Object> c = codecs.get(type);
    if (c == null) {
      c = (Codec<Object>) registry.get(type); // throws for a class with no codec: not kept
      codecs.put(type, c);
    }
    return c;
  }
}
