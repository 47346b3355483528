package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.ModuleDescriptors;
import java.lang.module.ModuleDescriptor;
import org.junit.jupiter.api.Test;

/** TARDIS exports its one API package, to everyone. */
class ModuleExportsTest {

  @Test
  void tardisExportsItsApiPackageOnly() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(Tardis.class);
    assertThat(module.name()).isEqualTo("io.dendrite.tardis");
    assertThat(module.exports())
        .singleElement()
        .satisfies(
            exported -> {
              assertThat(exported.source()).isEqualTo("io.dendrite.tardis");
              assertThat(exported.isQualified()).isFalse();
            });
  }
}
