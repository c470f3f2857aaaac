package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.mongodb.client.MongoCollection;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.Document;
import org.h2.mvstore.type.ObjectDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link KeyValueType} orders keys exactly as H2's {@link ObjectDataType} does (by their Java
 * serializations), so that a data directory's unique indexes keep their order whichever of the
 * two opens them; and the H2 adapter's unique indexes use it.
 */
class KeyValueTypeTest {
  @TempDir
  Path dir;

  private static final ObjectDataType SERVER = new ObjectDataType();
  private static final KeyValueType FAST = new KeyValueType();

  private static void sameOrder(Object a, Object b) {
    assertEquals(Integer.signum(SERVER.compare(a, b)), Integer.signum(FAST.compare(a, b)),
        () -> a + " against " + b);
  }

  /** A random string of up to {@code max} characters drawn from every range UTF-8 encodes apart. */
  private static String randomString(Random random, int max) {
    char[] pool = {'a', 'b', 'z', 'A', '0', '-', '/', '\u0000', '\u0001', '\u007f', '\u0080',
        '\u00e9', '\u07ff', '\u0800', '\u3042', '\ud83c', '\udf33', '\uffff'};
    int n = random.nextInt(max + 1);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append(random.nextInt(4) == 0 ? pool[random.nextInt(pool.length)]
          : (char) ('a' + random.nextInt(3)));
    }
    return b.toString();
  }

  @Test
  void oneStringKeysAreOrderedAsTheirSerializations() {
    Random random = new Random(27);
    List<String> strings = new ArrayList<>(List.of("", "a", "b", "aa", "ab", "node-10",
        "node-9", "node-100", "\u0000", "\u0080", "\u00e9", "\u0800", "\ud83c\udf33"));
    for (int i = 0; i < 250; i++) {
      strings.add(randomString(random, i % 3 == 0 ? 40 : 6));
    }
    for (String s : strings) {
      for (String t : strings) {
        sameOrder(new KeyValue(s), new KeyValue(t));
      }
    }
  }

  @Test
  void stringsPastTwoByteLengthsAndOtherKeysAreTheServersComparison() {
    String longest = "\u00e9".repeat(0xFFFF / 2); // 65 534 bytes: still a two-byte length
    String past = "\u00e9".repeat(0xFFFF / 2 + 1); // 65 536 bytes: a long string
    assertNull(KeyValueType.modifiedUtf8(past));
    List<Object> keys = List.of(new KeyValue(longest), new KeyValue(past), new KeyValue("a"),
        new KeyValue(past + "a"), new KeyValue(1.0), new KeyValue(2L), new KeyValue("a", "b"),
        new KeyValue(Missing.getInstance()), new KeyValue(new de.bwaldvogel.mongo.bson.Document(
            "arbor", "lock")), "a plain string", 7);
    for (Object a : keys) {
      for (Object b : keys) {
        sameOrder(a, b);
      }
    }
  }

  @Test
  void modifiedUtf8IsWriteUtfs() throws IOException {
    Random random = new Random(6);
    for (int i = 0; i < 500; i++) {
      String s = randomString(random, 30);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      new DataOutputStream(bytes).writeUTF(s);
      byte[] written = bytes.toByteArray();
      assertEquals(-1, java.util.Arrays.mismatch(java.util.Arrays.copyOfRange(written, 2,
          written.length), KeyValueType.modifiedUtf8(s)), s);
    }
  }

  @Test
  void theH2AdaptersUniqueIndexesUseItAndFindTheirKeysAfterARestart() {
    List<String> ids = new ArrayList<>();
    Random random = new Random(3);
    for (int i = 0; i < 1_000; i++) {
      ids.add("n-" + randomString(random, 8) + "-" + i);
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      MongoCollection<Document> c = mongo.client().getDatabase("d").getCollection("c");
      c.insertMany(ids.stream().map(id -> new Document("_id", id)).toList());
      assertInstanceOf(KeyValueType.class,
          mongo.store().openMap("d.c" + H2ServerAdapter.INDEX_INFIX + "_id_").getKeyType());
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      MongoCollection<Document> c = mongo.client().getDatabase("d").getCollection("c");
      // each id looked up in the index ($in asks it for every value)
      assertEquals(ids.size(), c.countDocuments(new Document("_id", new Document("$in", ids))));
      for (String id : ids.subList(0, 20)) {
        assertEquals(1, c.countDocuments(new Document("_id", id)), id);
      }
      assertEquals(ids.size(), c.countDocuments());
    }
  }
}
