package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.internal.read.SlimDocument;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** {@link SlimDocument} reads as the {@link Document} of the same fields, by every getter. */
class SlimDocumentTest {
  @Test
  void readsAsTheDocumentOfTheSameFields() {
    Document full = new Document("_id", "n1").append("parent", "n0")
        .append("children", List.of("a", "b")).append("rank", 5L).append("depth", 3)
        .append("ok", true).append("none", null);
    List<String> keys = new ArrayList<>(full.keySet());
    SlimDocument slim = new SlimDocument(keys.toArray(new String[0]),
        full.values().toArray());
    assertEquals(slim, full); // (Document.equals reads the other's own map: not the reverse)
    assertEquals(full.hashCode(), slim.hashCode());
    assertEquals(full.toString(), slim.toString());
    assertEquals(List.copyOf(full.keySet()), List.copyOf(slim.keySet()));
    assertEquals(new ArrayList<>(full.values()), new ArrayList<>(slim.values()));
    assertEquals(new ArrayList<>(full.entrySet()), new ArrayList<>(slim.entrySet()));
    assertEquals(full.size(), slim.size());
    assertFalse(slim.isEmpty());
    assertEquals(full.getString("parent"), slim.getString("parent"));
    assertEquals(full.getList("children", String.class), slim.getList("children", String.class));
    assertEquals(List.of(), slim.getList("missing", String.class, List.of()));
    assertEquals(full.getLong("rank"), slim.getLong("rank"));
    assertEquals(full.getInteger("depth"), slim.getInteger("depth"));
    assertEquals(full.getInteger("missing", 7), slim.getInteger("missing", 7));
    assertEquals(full.getBoolean("ok"), slim.getBoolean("ok"));
    assertEquals(full.get("rank", Long.class), slim.get("rank", Long.class));
    assertEquals(full.get("missing", "d"), slim.get("missing", "d"));
    assertTrue(slim.containsKey("none"));
    assertEquals(full.get("none"), slim.get("none"));
    assertTrue(slim.containsValue(5L));
    assertThrows(UnsupportedOperationException.class, () -> slim.put("x", 1));
    assertThrows(UnsupportedOperationException.class, () -> slim.append("x", 1));
    assertThrows(UnsupportedOperationException.class, () -> slim.remove("parent"));
    assertThrows(UnsupportedOperationException.class, () -> slim.putAll(Map.of("x", 1)));
    assertThrows(UnsupportedOperationException.class, slim::clear);
  }
}
