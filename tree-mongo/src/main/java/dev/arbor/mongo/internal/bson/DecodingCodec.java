package dev.arbor.mongo.internal.bson;

import java.util.function.UnaryOperator;
import org.bson.BsonReader;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.bson.Document;
import org.bson.codecs.CollectibleCodec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;

/**
 * The collection's document codec with one step added after each decode: how a store reads
 * node documents as the contract names them (a scoped {@code _id} back to the node id, typed ids
 * back to their strings), while encoding stays the collection's own.
 *
 * @param codec the collection's codec
 * @param after what each decoded document becomes
 * @param source what supplies {@code after} (a {@link Scope} or {@link NodeIds}), for lookups
 */
record DecodingCodec(CollectibleCodec<Document> codec, UnaryOperator<Document> after,
    Object source) implements CollectibleCodec<Document> {
  @Override
  public Document decode(BsonReader reader, DecoderContext context) {
    return after.apply(codec.decode(reader, context));
  }

  @Override
  public void encode(BsonWriter writer, Document document, EncoderContext context) {
    codec.encode(writer, document, context);
  }

  @Override
  public Class<Document> getEncoderClass() {
    return Document.class;
  }

  @Override
  public Document generateIdIfAbsentFromDocument(Document document) {
    return codec.generateIdIfAbsentFromDocument(document);
  }

  @Override
  public boolean documentHasId(Document document) {
    return codec.documentHasId(document);
  }

  @Override
  public BsonValue getDocumentId(Document document) {
    return codec.getDocumentId(document);
  }
}
