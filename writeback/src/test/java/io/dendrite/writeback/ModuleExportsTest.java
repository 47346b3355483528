package io.dendrite.writeback;

import static io.dendrite.testsupport.ModuleDescriptors.exportedToAll;
import static io.dendrite.testsupport.ModuleDescriptors.exportedToSome;
import static io.dendrite.testsupport.ModuleDescriptors.requiredAtRunTime;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.consistency.History;
import io.dendrite.core.Dendrite;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.server.IqServer;
import io.dendrite.testsupport.ModuleDescriptors;
import io.dendrite.writeback.document.DocumentWriteBack;
import java.lang.module.ModuleDescriptor;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Each library module exports its API packages and nothing else. Checked here for the libraries write-back stands on
 * (the IQ client, and the IQ server at test scope) and for write-back itself; the modules above it (the stores,
 * TARDIS) check their own.
 */
class ModuleExportsTest {

  @Test
  void theLeaseClientExportsItsApiAndTheWireProtocolOnlyToTheServer() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(IqClient.class);
    assertThat(module.name()).isEqualTo("io.dendrite.iq.client");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.iq.client");
    assertThat(exportedToSome(module))
        .isEqualTo(Map.of("io.dendrite.iq.protocol", Set.of("io.dendrite.iq.server")));
  }

  @Test
  void theLeaseServerExportsItsApi() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(IqServer.class);
    assertThat(module.name()).isEqualTo("io.dendrite.iq.server");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.iq.server");
    assertThat(exportedToSome(module)).isEmpty();
  }

  @Test
  void coreExportsItsApiAndItsIntervalIndexOnlyToWriteBack() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(Dendrite.class);
    assertThat(module.name()).isEqualTo("io.dendrite.core");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.core");
    assertThat(exportedToSome(module))
        .isEqualTo(Map.of("io.dendrite.core.interval", Set.of("io.dendrite.writeback")));
  }

  @Test
  void writeBackExportsItsEnginesAndWhatTheyShareWithUsersAndItsKernelOnlyToTardis()
      throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(DocumentWriteBack.class);
    assertThat(module.name()).isEqualTo("io.dendrite.writeback");
    assertThat(exportedToAll(module))
        .containsExactly(
            "io.dendrite.writeback",
            "io.dendrite.writeback.change",
            "io.dendrite.writeback.document",
            "io.dendrite.writeback.engine",
            "io.dendrite.writeback.session",
            "io.dendrite.writeback.store");
    assertThat(exportedToSome(module))
        .isEqualTo(Map.of("io.dendrite.writeback.kernel", Set.of("io.dendrite.tardis")));
  }

  @Test
  void writeBackNeedsNoDatabaseDriverNoPoolAndMicrometerOnlyWhenPresent() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(DocumentWriteBack.class);
    assertThat(requiredAtRunTime(module))
        .containsExactly(
            "com.github.benmanes.caffeine",
            "io.dendrite.core",
            "java.base",
            "java.sql",
            "org.mongodb.bson",
            "org.slf4j");
    assertThat(module.requires())
        .filteredOn(required -> required.name().equals("micrometer.core"))
        .singleElement()
        .satisfies(
            micrometer ->
                assertThat(micrometer.modifiers())
                    .containsExactly(ModuleDescriptor.Requires.Modifier.STATIC));
  }

  @Test
  void theConsistencyCheckerExportsItsOnePackage() throws Exception {
    ModuleDescriptor module = ModuleDescriptors.of(History.class);
    assertThat(module.name()).isEqualTo("io.dendrite.consistency");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.consistency");
  }
}
