package dev.arbor.embedded;

import de.bwaldvogel.mongo.bson.Document;
import java.lang.reflect.Method;
import org.jspecify.annotations.Nullable;

/**
 * The encoded size of a document of mongo-java-server, as the server itself measures it: its
 * package-private {@code Utils.calculateSize}, reached once by reflection (the server has no
 * public way to it). {@link MemoryServerAdapter#checkAssumptions} fails loudly, before a server
 * starts, if an upgrade removes it.
 */
final class DocumentSizes {
  private static final @Nullable Method CALCULATE_SIZE = find();

  private DocumentSizes() {}

  private static @Nullable Method find() {
    try {
      Method m = Class.forName("de.bwaldvogel.mongo.backend.Utils")
          .getDeclaredMethod("calculateSize", Document.class);
      m.setAccessible(true);
      return m.getReturnType() == int.class ? m : null;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** Fails, naming it, if the server's own measure is not there. */
  static void checkAssumption() {
    ServerAdapter.check(CALCULATE_SIZE != null, "Utils.calculateSize(Document) returns an int");
  }

  /** The size of {@code document} encoded as BSON, in bytes. */
  static int of(Document document) {
    try {
      return (Integer) CALCULATE_SIZE.invoke(null, document);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("mongo-java-server could not measure a document", e);
    }
  }
}
