package io.dendrite.store.mysql;

import static io.dendrite.testsupport.ModuleDescriptors.exportedToAll;
import static io.dendrite.testsupport.ModuleDescriptors.exportedToSome;
import static io.dendrite.testsupport.ModuleDescriptors.requiredAtRunTime;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.ModuleDescriptors;
import java.lang.module.ModuleDescriptor;
import org.junit.jupiter.api.Test;

/** The MySQL store exports its one package and brings a pool, not the MongoDB driver. */
class ModuleExportsTest {

  @Test
  void theMySqlStoreExportsItsPackageAndRequiresThePoolButNoMongoDb() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(MySqlStore.class);
    assertThat(module.name()).isEqualTo("io.dendrite.store.mysql");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.store.mysql");
    assertThat(exportedToSome(module)).isEmpty();
    assertThat(requiredAtRunTime(module))
        .containsExactly("com.zaxxer.hikari", "io.dendrite.writeback", "java.base");
  }
}
