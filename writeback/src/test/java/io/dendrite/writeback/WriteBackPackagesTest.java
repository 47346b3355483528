package io.dendrite.writeback;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import io.dendrite.writeback.cyclecontrol.above.Above;
import io.dendrite.writeback.cyclecontrol.below.Below;
import org.junit.jupiter.api.Test;

/**
 * The write-back packages depend on each other one way, read from the compiled classes (ArchUnit): {@code change},
 * {@code store} &lt;- {@code engine} &lt;- {@code kernel} &lt;- {@code document}, {@code session} &lt;- the root
 * package. A cycle among them (the root package once held types the engines used while it used the engines) fails
 * here, as the negative control shows on two packages that use each other.
 */
class WriteBackPackagesTest {
  private static final String ROOT = "io.dendrite.writeback";

  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(ROOT);

  /** One slice per package, the root package included (a {@code ROOT.(*)} pattern would leave it out). */
  private static final SliceAssignment PACKAGES =
      new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
          return javaClass.getPackageName().startsWith(ROOT)
              ? SliceIdentifier.of(javaClass.getPackageName())
              : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
          return "the packages of " + ROOT;
        }
      };

  private static final ArchRule NO_CYCLES =
      slices().assignedFrom(PACKAGES).should().beFreeOfCycles();

  @Test
  void thePackagesAreFreeOfCycles() {
    NO_CYCLES.check(MAIN);
  }

  @Test
  void eachPackageUsesOnlyThoseBelowIt() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("root")
        .definedBy(ROOT)
        .layer("engines")
        .definedBy(ROOT + ".document", ROOT + ".session")
        .layer("kernel")
        .definedBy(ROOT + ".kernel")
        .layer("engine")
        .definedBy(ROOT + ".engine")
        .layer("store")
        .definedBy(ROOT + ".store")
        .layer("change")
        .definedBy(ROOT + ".change")
        .whereLayer("root")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("engines")
        .mayOnlyBeAccessedByLayers("root")
        .whereLayer("kernel")
        .mayOnlyBeAccessedByLayers("engines", "root")
        .whereLayer("engine")
        .mayOnlyBeAccessedByLayers("kernel", "engines", "root")
        .whereLayer("store")
        .mayOnlyBeAccessedByLayers("kernel", "engines", "root")
        .whereLayer("change")
        .mayOnlyBeAccessedByLayers("store", "engine", "kernel", "engines", "root")
        .check(MAIN);
  }

  /** Negative control: the rule sees a cycle between two packages, so its passing above means something. */
  @Test
  void theCycleRuleCatchesTwoPackagesThatUseEachOther() {
    JavaClasses cycle = new ClassFileImporter().importClasses(Above.class, Below.class);

    assertThat(NO_CYCLES.evaluate(cycle).hasViolation()).isTrue();
  }
}
