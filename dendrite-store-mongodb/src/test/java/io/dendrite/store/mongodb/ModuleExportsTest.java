package io.dendrite.store.mongodb;

import static io.dendrite.testsupport.ModuleDescriptors.exportedToAll;
import static io.dendrite.testsupport.ModuleDescriptors.exportedToSome;
import static io.dendrite.testsupport.ModuleDescriptors.requiredAtRunTime;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.ModuleDescriptors;
import java.lang.module.ModuleDescriptor;
import org.junit.jupiter.api.Test;

/** The MongoDB store exports its one package and brings the MongoDB driver, not JDBC's pool. */
class ModuleExportsTest {

  @Test
  void theMongoStoreExportsItsPackageAndRequiresTheDriverButNoPool() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(MongoStore.class);
    assertThat(module.name()).isEqualTo("io.dendrite.store.mongodb");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.store.mongodb");
    assertThat(exportedToSome(module)).isEmpty();
    assertThat(requiredAtRunTime(module))
        .containsExactly(
            "io.dendrite.writeback",
            "java.base",
            "org.mongodb.bson",
            "org.mongodb.driver.core",
            "org.mongodb.driver.sync.client");
  }
}
