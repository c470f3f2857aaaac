package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.h2.mvstore.type.ObjectDataType;
import org.junit.jupiter.api.Test;

/**
 * Why a data directory stores a document whose {@code _id} is a document (the lock protocol's
 * own, a scoped tree's nodes) under a fresh copy of it. The server's map of documents compares
 * its keys by their Java serialization, which holds a hash table's capacity; an upsert stored its
 * document under the server's clone of the {@code _id} (a table sized to its entries), which
 * serializes otherwise than the same key read back from the file. After saves had written the
 * map's pages and read them back, the position the {@code _id} index held was no longer found:
 * an update of the lock document met a null document ("Cannot invoke Document.cloneDeeply()"),
 * and {@code arbor import --data-dir} of 20 000 children at {@code -Xmx128m} failed with it
 * (found by a user trial; {@code DataDirWideImportTest} in tree-bench runs that import, which
 * fails without the fresh copy).
 */
class DocumentIdsTest {
  @Test
  void theServersCloneOfADocumentSerializesOtherwiseThanTheDocument() {
    de.bwaldvogel.mongo.bson.Document id = new de.bwaldvogel.mongo.bson.Document("arbor", "lock");
    assertEquals(id, id.cloneDeeply());
    assertNotEquals(0, new ObjectDataType().compare(id.cloneDeeply(), id), "the cause");
    assertEquals(0, new ObjectDataType().compare(H2ServerAdapter.IndexedCollection.fresh(
        id.cloneDeeply()), id));
    de.bwaldvogel.mongo.bson.Document scoped = new de.bwaldvogel.mongo.bson.Document("s",
        new de.bwaldvogel.mongo.bson.Document("org", "acme")).append("id", "n1");
    assertEquals(0, new ObjectDataType().compare(H2ServerAdapter.IndexedCollection.fresh(
        scoped.cloneDeeply()), scoped));
  }
}
