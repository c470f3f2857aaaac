package dev.arbor.mongo;

import com.mongodb.client.ClientSession;
import dev.arbor.core.Position;
import java.util.List;
import java.util.Optional;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A tree whose nodes are the application's own type {@code T} (a record or a POJO) instead of
 * ids and attribute maps, encoded and decoded by the driver's codecs: the codec registry of the
 * collection it was opened on ({@link TreePattern#openTyped}) or of the store it views ({@link
 * MongoTree#withDocumentClass}).
 *
 * <pre>{@code
 * record Category(@BsonId String id, String title, List<String> tags) {}
 *
 * TypedTree<Category> categories = TreePattern.ARRAY_OF_ANCESTORS.openTyped(
 *     database.getCollection("categories", Category.class));
 * categories.insert(new Category("Books", "Books", List.of()), Position.lastRoot());
 * categories.insert(new Category("Databases", "Databases", List.of("tech")),
 *     Position.lastChildOf("Books"));
 * List<Category> crumbs = categories.ancestorNodes("Databases");   // [Category[id=Books, ...]]
 * categories.tree().move("Databases", Position.firstRoot());     // structure: by id
 * }</pre>
 *
 * <p><b>How a {@code T} maps to a node.</b> The codec writes {@code T} as a document: its {@code
 * _id} (a record component or POJO property annotated {@code @BsonId}, or a POJO property named
 * {@code id}) must be a string and is the node's id; every other field it writes is an attribute
 * of the node. The pattern's structural fields ({@link TreePattern#reservedNames()}) are the
 * tree's, not the type's: a type with such a field is refused when a node is written, with an
 * {@link IllegalArgumentException} naming the node and the field, before anything is written.
 * Reading decodes the node's id and attributes into a {@code T}; attributes the type does not
 * declare are skipped by the driver's record and POJO codecs, and a field with no attribute gets
 * the codec's default (null for a record component).
 *
 * <p>Every operation is the {@link MongoTree}'s of the same name: the same all-or-nothing
 * changes, isolated reads, round trips and exceptions ({@link dev.arbor.core.NodeNotFoundException}
 * for an unknown id, and so on). The structure (moves, deletes, counts, checks) is reached by id
 * through {@link #tree()}.
 *
 * <p>Thread safety: as the {@link MongoTree} it views.
 *
 * @param <T> the application's node type
 */
public interface TypedTree<T> {

  /** The store this view decodes for: moves, deletes, counts, id reads, {@code check()}. */
  MongoTree tree();

  /** The node type. */
  Class<T> documentClass();

  /**
   * Inserts {@code node} at {@code position}: its id is the string {@code _id} the codec writes,
   * its attributes the other fields.
   *
   * @throws IllegalArgumentException if the codec writes no string {@code _id}, or a field the
   *     pattern keeps for the structure
   * @throws dev.arbor.core.DuplicateNodeException if the id exists
   * @throws dev.arbor.core.NodeNotFoundException if the position's anchor does not exist
   */
  void insert(T node, Position position);

  /**
   * Sets every field the codec writes for {@code node} on the node of the same id, as {@link
   * dev.arbor.core.TreeStore#update} does; attributes the codec does not write are kept, the
   * structure never changes. One document written. The driver's record and POJO codecs write no
   * null field by default, so a null leaves the attribute as it was: to remove one, {@code
   * tree().update(id, map)} with a null value.
   *
   * @throws IllegalArgumentException as {@link #insert}
   * @throws dev.arbor.core.NodeNotFoundException if no node has the id
   */
  void update(T node);

  /** The node {@code id} as a {@code T}, or empty if there is none. */
  Optional<T> find(String id);

  /** The children of {@code id}, in sibling order. See {@link MongoTree#childNodes(String)}. */
  List<T> childNodes(String id);

  /**
   * One page of the children of {@code id} matching {@code filter}, following the child {@code
   * after}. See {@link MongoTree#childNodes(String, String, int, Bson)}.
   */
  List<T> childNodes(String id, @Nullable String after, int limit, @Nullable Bson filter);

  /** The ancestors of {@code id}, from its root down to its parent: a breadcrumb. */
  List<T> ancestorNodes(String id);

  /**
   * The descendants of {@code id} down to {@code maxDepth} levels matching {@code filter}, in
   * preorder. See {@link MongoTree#descendantNodes(String, int, Bson)}.
   */
  List<T> descendantNodes(String id, int maxDepth, @Nullable Bson filter);

  /**
   * A view whose every operation runs in {@code session}, joining its transaction. See {@link
   * MongoTree#withSession}.
   */
  TypedTree<T> withSession(ClientSession session);
}
