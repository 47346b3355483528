package io.dendrite.writeback;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.consistency.History;
import io.dendrite.core.Dendrite;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.server.IqServer;
import io.dendrite.writeback.document.WriteBack;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * Each library module exports its API packages and nothing else. Tests run on the class path, where every class is
 * in the unnamed module, so the descriptors are read from where each module's classes were loaded. Checked here,
 * in the module that depends on all the others (the IQ server at test scope).
 */
class ModuleExportsTest {

  @Test
  void theLeaseClientExportsItsApiAndTheWireProtocolOnlyToTheServer() throws Exception {
    ModuleDescriptor module = descriptorOf(IqClient.class);
    assertThat(module.name()).isEqualTo("io.dendrite.iq.client");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.iq.client");
    assertThat(exportedToSome(module))
        .isEqualTo(Map.of("io.dendrite.iq.protocol", Set.of("io.dendrite.iq.server")));
  }

  @Test
  void theLeaseServerExportsItsApi() throws Exception {
    ModuleDescriptor module = descriptorOf(IqServer.class);
    assertThat(module.name()).isEqualTo("io.dendrite.iq.server");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.iq.server");
    assertThat(exportedToSome(module)).isEmpty();
  }

  @Test
  void coreExportsItsApiAndItsIntervalIndexOnlyToWriteBack() throws Exception {
    ModuleDescriptor module = descriptorOf(Dendrite.class);
    assertThat(module.name()).isEqualTo("io.dendrite.core");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.core");
    assertThat(exportedToSome(module))
        .isEqualTo(Map.of("io.dendrite.core.interval", Set.of("io.dendrite.writeback")));
  }

  @Test
  void writeBackExportsOnePackagePerEngineAndTheirSharedPlumbingOnlyToTardis() throws Exception {
    ModuleDescriptor module = descriptorOf(WriteBack.class);
    assertThat(module.name()).isEqualTo("io.dendrite.writeback");
    assertThat(exportedToAll(module))
        .containsExactly(
            "io.dendrite.writeback",
            "io.dendrite.writeback.change",
            "io.dendrite.writeback.document",
            "io.dendrite.writeback.range",
            "io.dendrite.writeback.session",
            "io.dendrite.writeback.store");
    assertThat(exportedToSome(module))
        .isEqualTo(Map.of("io.dendrite.writeback.internal", Set.of("io.dendrite.tardis")));
  }

  @Test
  void theConsistencyCheckerExportsItsOnePackage() throws Exception {
    ModuleDescriptor module = descriptorOf(History.class);
    assertThat(module.name()).isEqualTo("io.dendrite.consistency");
    assertThat(exportedToAll(module)).containsExactly("io.dendrite.consistency");
  }

  /** The descriptor compiled beside {@code member}: in its classes directory or its jar. */
  private static ModuleDescriptor descriptorOf(Class<?> member) throws Exception {
    Path location = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
    if (Files.isDirectory(location)) {
      try (InputStream in = Files.newInputStream(location.resolve("module-info.class"))) {
        return ModuleDescriptor.read(in);
      }
    }
    try (JarFile jar = new JarFile(location.toFile())) {
      var entry = jar.getEntry("module-info.class");
      if (entry == null) {
        throw new IOException("no module descriptor in " + location);
      }
      try (InputStream in = jar.getInputStream(entry)) {
        return ModuleDescriptor.read(in);
      }
    }
  }

  private static Set<String> exportedToAll(ModuleDescriptor module) {
    Set<String> exported = new TreeSet<>();
    module.exports().stream().filter(e -> !e.isQualified()).forEach(e -> exported.add(e.source()));
    return exported;
  }

  private static Map<String, Set<String>> exportedToSome(ModuleDescriptor module) {
    Map<String, Set<String>> exported = new TreeMap<>();
    module.exports().stream()
        .filter(ModuleDescriptor.Exports::isQualified)
        .forEach(e -> exported.put(e.source(), e.targets()));
    return exported;
  }
}
