package dev.arbor.bench;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A mixed workload: a fixed sequence of operations, exactly {@code readPercent}% of them reads,
 * the kinds of read and of edit drawn from the workload's weights, subjects drawn at random from
 * the tree as it evolves; the same sequence for every pattern. Reported per operation (the
 * sequence's total divided by its length).
 *
 * <p>The share of reads is exact on every shape and size: the sequence is as long as it takes for
 * the share to be a whole number of operations (20 for the built-in mixes, at most 100), the reads
 * are placed at random positions, and an edit that cannot be made where it was drawn (a move with
 * nowhere to go, a delete that would remove a whole tree) becomes an insert, still an edit.
 *
 * @param name the command-line name
 * @param description a few words saying what the mix is, with its ratio
 * @param readPercent the share of reads, 0 to 100
 * @param reads the kinds of read and their weights
 * @param writes the kinds of edit and their weights
 */
record Workload(String name, String description, int readPercent, List<Weighted> reads,
    List<Weighted> writes) {

  /** The shortest sequence; longer only when the ratio needs it (33/67: 100 operations). */
  static final int MIN_STEPS = 20;

  /** Read-heavy browsing: menus, breadcrumbs, listings; a few edits. */
  static final Workload BROWSE = new Workload("browse", "read-heavy browsing", 95,
      List.of(new Weighted(Step.CHILDREN, 35), new Weighted(Step.ANCESTORS, 30),
          new Weighted(Step.DESCENDANTS_LIMITED, 15), new Weighted(Step.DESCENDANTS, 15)),
      List.of(new Weighted(Step.INSERT, 3), new Weighted(Step.MOVE_LEAF, 1),
          new Weighted(Step.DELETE, 1)));
  /** Half reads, half edits. */
  static final Workload BALANCED = new Workload("balanced", "balanced", 50,
      List.of(new Weighted(Step.CHILDREN, 15), new Weighted(Step.ANCESTORS, 15),
          new Weighted(Step.DESCENDANTS, 10), new Weighted(Step.DESCENDANTS_LIMITED, 10)),
      List.of(new Weighted(Step.INSERT, 25), new Weighted(Step.MOVE_LEAF, 15),
          new Weighted(Step.DELETE, 10)));
  /** Reorganisation-heavy: most edits are moves of leaves and of whole subtrees. */
  static final Workload REORGANISE = new Workload("reorganise", "reorganisation-heavy", 20,
      List.of(new Weighted(Step.CHILDREN, 10), new Weighted(Step.ANCESTORS, 10)),
      List.of(new Weighted(Step.MOVE_LEAF, 30), new Weighted(Step.MOVE_SUBTREE, 25),
          new Weighted(Step.INSERT, 15), new Weighted(Step.DELETE, 10)));

  /** The built-in workloads, selected by {@code --workload}. */
  static final List<Workload> BUILT_IN = List.of(BROWSE, BALANCED, REORGANISE);

  /** The kinds of step a workload draws. */
  enum Step {
    /** Children of a random inner node. */
    CHILDREN(true),
    /** Ancestors of a random node. */
    ANCESTORS(true),
    /** Descendants of a random node whose subtree is small (2 to 50 nodes). */
    DESCENDANTS(true),
    /** Two levels of descendants of a random inner node. */
    DESCENDANTS_LIMITED(true),
    /** Insert a leaf next to or under a random node. */
    INSERT(false),
    /** Move a random leaf under a random other node. */
    MOVE_LEAF(false),
    /** Move a random subtree of 2 to 4 sqrt(N) nodes under a random node outside it. */
    MOVE_SUBTREE(false),
    /** Delete a random leaf or small subtree (at most 5 nodes). */
    DELETE(false);

    private final boolean read;

    Step(boolean read) {
      this.read = read;
    }

    /** Whether the step only reads. */
    boolean read() {
      return read;
    }
  }

  /** A step kind with its weight among the reads or among the edits. */
  record Weighted(Step step, int weight) {}

  /** Validates the components. */
  Workload {
    if (readPercent < 0 || readPercent > 100) {
      throw new IllegalArgumentException("a read share must be 0 to 100%, got " + readPercent);
    }
    reads = List.copyOf(reads);
    writes = List.copyOf(writes);
  }

  /** The description with its ratio: {@code read-heavy browsing 95/5}. */
  @Override
  public String description() {
    return description + " " + ratio();
  }

  /** The name with the ratio, for tables and charts: {@code browse 95/5}, {@code mix 70/30}. */
  String label() {
    return (name.startsWith("mix-") ? "mix" : name) + " " + ratio();
  }

  /** The ratio of reads to edits in percent: {@code 95/5}. */
  String ratio() {
    return readPercent + "/" + (100 - readPercent);
  }

  /** The number of operations in the sequence: the shortest, from 20, that holds the ratio. */
  int steps() {
    int unit = 100 / gcd(readPercent, 100);
    return unit * ((MIN_STEPS + unit - 1) / unit);
  }

  /** The number of reads in the sequence: exactly {@code readPercent}% of it. */
  int readSteps() {
    return steps() * readPercent / 100;
  }

  private static int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  /**
   * A workload of the user's ratio, with the balanced workload's kinds of read and edit.
   *
   * @param ratio {@code R/W} in percent, summing to 100, e.g. {@code 70/30}
   * @throws IllegalArgumentException naming the value and the expected form
   */
  static Workload mix(String ratio) {
    String[] parts = ratio.trim().split("/", -1);
    int reads;
    int writes;
    try {
      if (parts.length != 2) {
        throw new NumberFormatException();
      }
      reads = Integer.parseInt(parts[0].trim());
      writes = Integer.parseInt(parts[1].trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("invalid --mix '" + ratio.trim() + "' (valid: reads/edits"
          + " in percent summing to 100, like 70/30)");
    }
    if (reads < 0 || writes < 0 || reads + writes != 100) {
      throw new IllegalArgumentException("invalid --mix '" + ratio.trim() + "': the two shares"
          + " must be at least 0 and sum to 100, like 70/30");
    }
    return new Workload("mix-" + reads + "-" + writes, "your mix", reads, BALANCED.reads,
        BALANCED.writes);
  }

  /**
   * The workloads named by {@code --workload} (built-in names, {@code all}, {@code none}; default:
   * all built-in, unless {@code --mix} is given) followed by those of {@code --mix}, without
   * duplicates.
   *
   * @throws IllegalArgumentException naming an unknown workload or a malformed mix
   */
  static List<Workload> parse(List<String> names, List<String> mixes) {
    Set<Workload> chosen = new LinkedHashSet<>();
    if (names == null || names.isEmpty()) {
      if (mixes == null || mixes.isEmpty()) {
        chosen.addAll(BUILT_IN);
      }
    } else {
      for (String raw : names) {
        String value = raw.trim().toLowerCase(Locale.ROOT);
        if (value.equals("all")) {
          chosen.addAll(BUILT_IN);
        } else if (!value.equals("none")) {
          chosen.add(BUILT_IN.stream().filter(w -> w.name.equals(value)).findFirst()
              .orElseThrow(() -> new IllegalArgumentException("unknown workload '" + raw.trim()
                  + "' (valid: browse, balanced, reorganise, all, none; or --mix 70/30)")));
        }
      }
    }
    for (String mix : mixes == null ? List.<String>of() : mixes) {
      chosen.add(mix(mix));
    }
    return new ArrayList<>(chosen);
  }
}
