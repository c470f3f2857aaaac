package dev.arbor.mongo.internal.read;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * A read-only document of a few fields in two arrays, for {@link MongoTreeStore#check()}, which
 * keeps every node of a tree in memory at once: about a third of the heap of a {@link Document}
 * of the same fields (no hash table, no entry objects). Every method of {@link Document} that
 * reads its own map is overridden (the others read through them: {@code SlimDocumentTest}
 * checks them all against a {@link Document}); changing it throws. It equals a {@link Document}
 * of the same fields, but not the reverse ({@code Document.equals} compares the maps).
 */
public final class SlimDocument extends Document {
  private static final long serialVersionUID = 1L;

  private final String[] keys;
  private final @Nullable Object[] values;

  /** A document of {@code keys} and {@code values}, in that order; the arrays are kept. */
  public SlimDocument(String[] keys, @Nullable Object[] values) {
    this.keys = keys;
    this.values = values;
  }

  private int index(@Nullable Object key) {
    for (int i = 0; i < keys.length; i++) {
      if (keys[i].equals(key)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public @Nullable Object get(@Nullable Object key) {
    int i = index(key);
    return i < 0 ? null : values[i];
  }

  @Override
  public <T> @Nullable T get(Object key, Class<T> clazz) {
    return clazz.cast(get(key));
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T get(Object key, T defaultValue) {
    Object value = get(key);
    return value == null ? defaultValue : (T) value;
  }

  @Override
  public boolean containsKey(@Nullable Object key) {
    return index(key) >= 0;
  }

  @Override
  public boolean containsValue(@Nullable Object value) {
    return Arrays.asList(values).contains(value);
  }

  @Override
  public int size() {
    return keys.length;
  }

  @Override
  public boolean isEmpty() {
    return keys.length == 0;
  }

  @Override
  public Set<String> keySet() {
    return java.util.Collections.unmodifiableSet(
        new java.util.LinkedHashSet<>(Arrays.asList(keys)));
  }

  @Override
  public java.util.Collection<Object> values() {
    return java.util.Collections.unmodifiableList(Arrays.asList(values));
  }

  @Override
  public Set<Map.Entry<String, Object>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Map.Entry<String, Object>> iterator() {
        return new Iterator<>() {
          private int next;

          @Override
          public boolean hasNext() {
            return next < keys.length;
          }

          @Override
          public Map.Entry<String, Object> next() {
            if (next >= keys.length) {
              throw new NoSuchElementException();
            }
            int i = next++;
            return new AbstractMap.SimpleImmutableEntry<>(keys[i], values[i]);
          }
        };
      }

      @Override
      public int size() {
        return keys.length;
      }
    };
  }

  @Override
  public Object put(String key, Object value) {
    throw new UnsupportedOperationException("read-only");
  }

  @Override
  public Document append(String key, Object value) {
    throw new UnsupportedOperationException("read-only");
  }

  @Override
  public Object remove(Object key) {
    throw new UnsupportedOperationException("read-only");
  }

  @Override
  public void putAll(Map<? extends String, ?> map) {
    throw new UnsupportedOperationException("read-only");
  }

  @Override
  public void clear() {
    throw new UnsupportedOperationException("read-only");
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Map<?, ?> m && entrySet().equals(m.entrySet());
  }

  @Override
  public int hashCode() {
    return entrySet().hashCode();
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("Document{{");
    for (int i = 0; i < keys.length; i++) {
      s.append(i == 0 ? "" : ", ").append(keys[i]).append('=').append(values[i]);
    }
    return s.append("}}").toString();
  }
}
