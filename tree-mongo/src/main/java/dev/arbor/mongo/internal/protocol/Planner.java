package dev.arbor.mongo.internal.protocol;


/**
 * Plans one structural change: reads what it needs through the {@link Change} it is given and
 * adds the change's {@link Step}s to it. A planner may run more than once (again under the lock
 * when the tree changed since the version it first planned on, again in a retried transaction),
 * so it keeps no state but what it recomputes each time.
 */
@FunctionalInterface
public interface Planner {
  public void plan(Change change);
}
