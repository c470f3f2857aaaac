package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoClientException;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.codecs.pojo.PojoCodecProvider;
import org.bson.codecs.pojo.annotations.BsonId;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Nodes as the application's records and POJOs, for every pattern. */
class TypedTreeTest {

  /** A nested record, a list, an instant and a nullable field. */
  public record Price(long cents, String currency) {}

  public record Product(@BsonId String id, String title, List<String> tags, Price price,
      Instant added, String note) {}

  /** A record that declares a field the parent-reference pattern keeps for the structure. */
  public record WithParent(@BsonId String id, String parent) {}

  /** A record whose id is not a string. */
  public record NumberedNode(@BsonId int id, String title) {}

  /** A POJO, as the driver's automatic PojoCodecProvider reads and writes it. */
  public static final class Folder {
    private String id;
    private String name;
    private int size;

    public Folder() {}

    Folder(String id, String name, int size) {
      this.id = id;
      this.name = name;
      this.size = size;
    }

    public String getId() {
      return id;
    }

    public void setId(String id) {
      this.id = id;
    }

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public int getSize() {
      return size;
    }

    public void setSize(int size) {
      this.size = size;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Folder f && Objects.equals(id, f.id) && Objects.equals(name, f.name)
          && size == f.size;
    }

    @Override
    public int hashCode() {
      return Objects.hash(id, name, size);
    }

    @Override
    public String toString() {
      return "Folder[" + id + ", " + name + ", " + size + "]";
    }
  }

  private static final Instant T0 = Instant.parse("2026-01-02T03:04:05Z");

  private static Product product(String id, long cents) {
    return new Product(id, "The " + id, List.of(id.toLowerCase(), "shop"),
        new Price(cents, "EUR"), T0.plusSeconds(cents), cents % 2 == 0 ? null : "odd");
  }

  private static MongoCollection<Product> products() {
    return MongoTestServer.get().freshCollection().withDocumentClass(Product.class);
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void recordsGoInAndComeBackAsTheyWere(TreePattern pattern) {
    TypedTree<Product> shop = pattern.openTyped(products());
    Product books = product("Books", 0);
    Product db = product("Databases", 1);
    Product mongo = product("MongoDB", 3500);
    Product dbm = product("dbm", 500);
    shop.insert(books, Position.lastRoot());
    shop.insert(db, Position.lastChildOf("Books"));
    shop.insert(mongo, Position.lastChildOf("Databases"));
    shop.insert(dbm, Position.lastChildOf("Databases"));

    assertEquals(Optional.of(mongo), shop.find("MongoDB"));
    assertEquals(Optional.empty(), shop.find("nothing"));
    assertEquals(List.of(mongo, dbm), shop.childNodes("Databases"));
    assertEquals(List.of(books, db), shop.ancestorNodes("dbm"));
    assertEquals(List.of(db, mongo, dbm), shop.descendantNodes("Books", Integer.MAX_VALUE, null));
    assertEquals(List.of(db), shop.descendantNodes("Books", 1, null));
    assertEquals(List.of(db, dbm), shop.descendantNodes("Books", Integer.MAX_VALUE,
        Filters.lt("price.cents", 1000)));
    assertEquals(List.of(dbm), shop.childNodes("Databases", "MongoDB", 10, null));
    assertEquals(List.of(mongo), shop.childNodes("Databases", null, 1, null));

    Product renamed = new Product("Databases", "Storage", List.of(), new Price(2, "USD"), T0,
        null);
    shop.update(renamed);
    // The record codec writes no null component: the note the node had stays.
    assertEquals(Optional.of(new Product("Databases", "Storage", List.of(), new Price(2, "USD"),
        T0, "odd")), shop.find("Databases"));
    shop.tree().update("Databases", java.util.Collections.singletonMap("note", null));
    assertEquals(Optional.of(renamed), shop.find("Databases"));
    assertEquals(List.of(books, renamed), shop.ancestorNodes("MongoDB"));

    // The structure by id, through the store the view decodes for.
    shop.tree().move("Databases", Position.firstRoot());
    assertEquals(List.of(renamed), shop.ancestorNodes("dbm"));
    assertEquals(Tree.parse("Databases(MongoDB dbm) Books").ids(), shop.tree().snapshot().ids());
    assertEquals(List.of(), shop.tree().check());
    assertEquals(Product.class, shop.documentClass());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void pojosThroughTheDriversPojoCodec(TreePattern pattern) {
    CodecRegistry pojos = CodecRegistries.fromRegistries(
        MongoClientSettings.getDefaultCodecRegistry(),
        CodecRegistries.fromProviders(PojoCodecProvider.builder().automatic(true).build()));
    MongoCollection<Folder> folders = MongoTestServer.get().freshCollection()
        .withCodecRegistry(pojos).withDocumentClass(Folder.class);
    TypedTree<Folder> fs = pattern.openTyped(folders);
    fs.insert(new Folder("/", "root", 0), Position.lastRoot());
    fs.insert(new Folder("/usr", "usr", 10), Position.lastChildOf("/"));
    fs.insert(new Folder("/etc", "etc", 3), Position.before("/usr"));
    assertEquals(List.of(new Folder("/etc", "etc", 3), new Folder("/usr", "usr", 10)),
        fs.childNodes("/"));
    assertEquals(List.of(new Folder("/", "root", 0)), fs.ancestorNodes("/usr"));
    assertEquals(Map.of("name", "usr", "size", 10), fs.tree().find("/usr").orElseThrow()
        .attributes());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void theIdStoreAndTheTypedViewShareOneTree(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTree tree = pattern.open(c);
    tree.insert("Books", Position.lastRoot(), Map.of("title", "The Books", "tags", List.of(),
        "stock", 7)); // an attribute the record does not declare
    TypedTree<Product> view = tree.withDocumentClass(Product.class);
    Product p = view.find("Books").orElseThrow();
    assertEquals(new Product("Books", "The Books", List.of(), null, null, null), p);
    view.update(product("Books", 2));
    assertEquals(7, tree.find("Books").orElseThrow().attributes().get("stock"),
        "attributes the type does not write are kept");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void badNodesAreRefusedNamingWhyAndNothingIsWritten(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TypedTree<Product> shop = pattern.openTyped(c.withDocumentClass(Product.class));
    shop.insert(product("Books", 0), Position.lastRoot());
    List<Document> before = c.find().into(new ArrayList<>());

    IllegalArgumentException noStringId = assertThrows(IllegalArgumentException.class,
        () -> pattern.openTyped(c.withDocumentClass(NumberedNode.class))
            .insert(new NumberedNode(7, "seven"), Position.lastRoot()));
    assertTrue(noStringId.getMessage().contains("string _id"), noStringId.getMessage());
    assertTrue(noStringId.getMessage().contains("{\"_id\": 7}"), noStringId.getMessage());

    if (pattern.reservedNames().contains("parent")) {
      IllegalArgumentException reserved = assertThrows(IllegalArgumentException.class,
          () -> pattern.openTyped(c.withDocumentClass(WithParent.class))
              .insert(new WithParent("x", "Books"), Position.lastChildOf("Books")));
      assertTrue(reserved.getMessage().contains("'x'"), reserved.getMessage());
      assertTrue(reserved.getMessage().contains("parent"), reserved.getMessage());
    }
    assertThrows(NodeNotFoundException.class, () -> shop.update(product("nothing", 1)));
    assertThrows(NodeNotFoundException.class, () -> shop.childNodes("nothing"));
    assertThrows(IllegalArgumentException.class,
        () -> pattern.openTyped(c.withDocumentClass(Thread.class)));
    assertEquals(before, c.find().into(new ArrayList<>()), "nothing written");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aSessionViewReadsAndWritesInTheSession(TreePattern pattern) {
    MongoCollection<Product> c = products();
    TypedTree<Product> shop = pattern.openTyped(c);
    try (ClientSession session = MongoTestServer.get().client().startSession()) {
      TypedTree<Product> inSession = shop.withSession(session);
      if (!sessions()) {
        // The embedded server has none: that the call fails proves it went through the session.
        MongoClientException e = assertThrows(MongoClientException.class,
            () -> inSession.insert(product("Books", 0), Position.lastRoot()));
        assertTrue(e.getMessage().contains("session"), e.getMessage());
        assertEquals(0, c.countDocuments(Filters.eq("_id", "Books")));
        return;
      }
      inSession.insert(product("Books", 0), Position.lastRoot());
      assertEquals(Optional.of(product("Books", 0)), inSession.find("Books"));
    }
    assertEquals(Optional.of(product("Books", 0)), shop.find("Books"));
  }

  private static boolean sessions() {
    try (ClientSession session = MongoTestServer.get().client().startSession()) {
      MongoTestServer.get().freshCollection().find(session).first();
      return true;
    } catch (MongoClientException e) {
      return false;
    }
  }
}
