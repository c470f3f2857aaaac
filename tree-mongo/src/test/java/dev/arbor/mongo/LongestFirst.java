package dev.arbor.mongo;

import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * The order in which the test JVM starts its classes (junit-platform.properties): the longest
 * first, then the others by name. The classes run side by side in one JVM, so a long class
 * started last would run alone at the end while the cores idle; measured on two cores, the
 * classes below each take 20-80 s there, the others a few seconds (docs/testing.md). A class
 * missing from the list only runs later; none is skipped.
 */
public final class LongestFirst implements ClassOrderer {
  static final List<String> LONGEST = List.of("FencingTest", "CutConnectionTest",
      "StalledReadTest", "ScopedFencingTest", "LinearizabilityTest", "IdTypesTest",
      "ResentStepTest", "IdTypesPropertiesTest", "LinearizabilityProcessesTest",
      "ScopedParentReferencesContractTest", "CutReadTest", "FaultInjectionTest",
      "LateDeliveryTest", "NestedSetsPropertiesTest", "ScopedArrayOfAncestorsContractTest",
      "ScopedParentReferencesGraphLookupContractTest", "StalledLoadCommandTest",
      "ScopedArrayOfAncestorsPipelineContractTest", "ConcurrencyTest", "LateInsertCommandTest",
      "ArrayOfAncestorsContractTest", "MaterializedPathsPropertiesTest", "LeaseGrowthTest",
      "ArrayOfAncestorsPipelineContractTest", "ParentReferencesContractTest");

  @Override
  public void orderClasses(ClassOrdererContext context) {
    context.getClassDescriptors().sort(Comparator
        .comparingInt((org.junit.jupiter.api.ClassDescriptor d) -> rank(d.getTestClass()))
        .thenComparing(d -> d.getTestClass().getName()));
  }

  private static int rank(Class<?> c) {
    int i = LONGEST.indexOf(c.getSimpleName());
    return i < 0 ? LONGEST.size() : i;
  }
}
