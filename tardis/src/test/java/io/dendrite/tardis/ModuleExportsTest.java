package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** TARDIS exports its one API package, to everyone. */
class ModuleExportsTest {

  @Test
  void tardisExportsItsApiPackageOnly() throws Exception {
    ModuleDescriptor module = descriptorOf(Tardis.class);
    assertThat(module.name()).isEqualTo("io.dendrite.tardis");
    assertThat(module.exports())
        .singleElement()
        .satisfies(
            exported -> {
              assertThat(exported.source()).isEqualTo("io.dendrite.tardis");
              assertThat(exported.isQualified()).isFalse();
            });
  }

  /** The descriptor compiled beside {@code member}: in its classes directory or its jar. */
  private static ModuleDescriptor descriptorOf(Class<?> member) throws Exception {
    Path location = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
    if (Files.isDirectory(location)) {
      try (InputStream in = Files.newInputStream(location.resolve("module-info.class"))) {
        return ModuleDescriptor.read(in);
      }
    }
    try (JarFile jar = new JarFile(location.toFile());
        InputStream in = jar.getInputStream(jar.getEntry("module-info.class"))) {
      return ModuleDescriptor.read(in);
    }
  }
}
