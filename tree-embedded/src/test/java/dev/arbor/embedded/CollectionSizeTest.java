package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/**
 * The in-memory server measures a collection's size when asked, not at every write: {@code
 * collStats} still answers the encoded size of its documents (the benchmark reports it), after
 * inserts, updates that grow and shrink documents, and deletes.
 */
class CollectionSizeTest {
  @Test
  void collStatsAnswersTheEncodedSizeOfTheDocumentsAfterEveryKindOfWrite() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = mongo.client().getDatabase("d").getCollection("c");
      c.insertMany(List.of(new Document("_id", "a").append("n", 1),
          new Document("_id", "b").append("tags", List.of("x", "y")),
          new Document("_id", "c").append("sub", new Document("k", "v"))));
      assertEquals(encoded(c), size(mongo), "after inserts");
      c.updateOne(Filters.eq("_id", "a"), Updates.set("long", "a longer value than before"));
      c.updateOne(Filters.eq("_id", "b"), Updates.unset("tags"));
      c.updateMany(Filters.exists("sub"), Updates.inc("sub.n", 2L));
      assertEquals(encoded(c), size(mongo), "after updates");
      c.deleteOne(Filters.eq("_id", "c"));
      assertEquals(encoded(c), size(mongo), "after a delete");
      c.deleteMany(new Document());
      assertEquals(0, size(mongo), "empty");
    }
  }

  private static long encoded(MongoCollection<Document> c) {
    long sum = 0;
    for (BsonDocument d : c.find(BsonDocument.class)) {
      sum += new RawBsonDocument(d, new BsonDocumentCodec()).getByteBuffer().remaining();
    }
    return sum;
  }

  private static long size(EmbeddedMongo mongo) {
    return ((Number) mongo.client().getDatabase("d").runCommand(new Document("collStats", "c"))
        .get("size")).longValue();
  }
}
