package dev.arbor.embedded;

import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.aggregation.stage.AggregationStage;
import de.bwaldvogel.mongo.backend.aggregation.stage.UnwindStage;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The server's {@code $unwind} of a top-level array field, without its quadratic copying.
 *
 * <p>mongo-java-server's {@code UnwindStage} makes each output document with {@code
 * document.cloneDeeply()} and then sets the unwound field to the element: a document whose array
 * has n elements is copied whole n times, the array with it, so unwinding it costs n² element
 * copies. A {@code $graphLookup} of a subtree followed by {@code $unwind} (the stores' walks of
 * parent and child references) then costs the square of the subtree's size. This stage gives the
 * same documents (the same fields in the same order, the other fields deeply copied as the
 * server copies them, the element itself not copied, as the server does not copy it) but copies
 * the document without its array, once per element. Its options ({@code
 * preserveNullAndEmptyArrays}, {@code includeArrayIndex}) and its errors are the server's: the
 * server's stage is built first, and stays in place where the path is not a top-level field.
 */
final class SlimUnwind implements AggregationStage {
  private final String path;
  private final boolean preserveNullAndEmptyArrays;
  private final @Nullable String includeArrayIndex;

  private SlimUnwind(String path, boolean preserveNullAndEmptyArrays,
      @Nullable String includeArrayIndex) {
    this.path = path;
    this.preserveNullAndEmptyArrays = preserveNullAndEmptyArrays;
    this.includeArrayIndex = includeArrayIndex;
  }

  /**
   * Replaces, in {@code aggregation} built from {@code pipeline}, each server {@code $unwind} of a
   * top-level field by this stage. The k-th {@code UnwindStage} of the aggregation is the k-th
   * {@code $unwind} of the pipeline ({@code Aggregation.fromPipeline} builds one stage for each);
   * if the counts differ, nothing is replaced.
   */
  static void replaceIn(Aggregation aggregation, List<Document> pipeline) {
    List<Object> specs = pipeline.stream().filter(s -> s.containsKey("$unwind"))
        .map(s -> s.get("$unwind")).toList();
    List<AggregationStage> stages = aggregation.getStages();
    if (specs.isEmpty()
        || stages.stream().filter(s -> s instanceof UnwindStage).count() != specs.size()) {
      return;
    }
    int k = 0;
    for (int i = 0; i < stages.size(); i++) {
      if (stages.get(i) instanceof UnwindStage) {
        SlimUnwind slim = of(specs.get(k++));
        if (slim != null) {
          stages.set(i, slim);
        }
      }
    }
  }

  /**
   * This stage for the {@code $unwind} specification {@code spec} that the server accepted, or
   * null where the path is not a top-level field (or the specification is not understood): the
   * server's stage then stays.
   */
  static @Nullable SlimUnwind of(Object spec) {
    Object path;
    boolean preserve = false;
    Object index = null;
    if (spec instanceof String s) {
      path = s;
    } else if (spec instanceof Document d) {
      path = d.get("path");
      preserve = Utils.isTrue(d.get("preserveNullAndEmptyArrays"));
      index = d.get("includeArrayIndex");
    } else {
      return null;
    }
    if (!(path instanceof String p) || !p.startsWith("$") || p.length() < 2
        || p.indexOf('.') >= 0 || (index != null && !(index instanceof String))) {
      return null;
    }
    return new SlimUnwind(p.substring(1), preserve, (String) index);
  }

  @Override
  public String name() {
    return "$unwind";
  }

  @Override
  public Stream<Document> apply(Stream<Document> stream) {
    return stream.flatMap(document -> {
      Object values = Utils.getSubdocumentValue(document, path);
      if (Missing.isNullOrMissing(values)) {
        return preserveNullAndEmptyArrays ? withoutIndex(document) : withoutIndex();
      } else if (values instanceof Collection<?> collection) {
        if (collection.isEmpty() && preserveNullAndEmptyArrays) {
          Document clone = document.cloneDeeply();
          Utils.removeSubdocumentValue(clone, path);
          return withoutIndex(clone);
        }
        Document shell = new Document(document);
        shell.put(path, null); // the field keeps its place; its array is not copied
        return withIndex(collection.stream().map(value -> {
          Document clone = shell.cloneDeeply();
          Utils.changeSubdocumentValue(clone, path, value);
          return clone;
        }));
      } else {
        return withoutIndex(document);
      }
    });
  }

  private Stream<Document> withoutIndex(Document... documents) {
    if (includeArrayIndex == null) {
      return Stream.of(documents);
    }
    return Stream.of(documents).map(document -> {
      Document clone = document.cloneDeeply();
      Utils.changeSubdocumentValue(clone, includeArrayIndex, null);
      return clone;
    });
  }

  private Stream<Document> withIndex(Stream<Document> documents) {
    if (includeArrayIndex == null) {
      return documents;
    }
    AtomicLong counter = new AtomicLong();
    return documents.peek(document -> Utils.changeSubdocumentValue(document,
        includeArrayIndex, counter.getAndIncrement()));
  }
}
