package io.dendrite.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;

/**
 * The module descriptors of the library modules, for the tests that pin what each exports and requires. Tests run
 * on the class path, where every class is in the unnamed module, so a descriptor is read from where a class of its
 * module was loaded: the module's classes directory or its jar.
 */
public final class ModuleDescriptors {
  private ModuleDescriptors() {}

  /**
   * The descriptor compiled beside {@code member}.
   *
   * @throws IOException when there is none (the module has no {@code module-info.java})
   */
  public static ModuleDescriptor of(Class<?> member) throws IOException {
    Path location;
    try {
      location = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IOException("where " + member.getName() + " was loaded from is not a path", e);
    }
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

  /** The packages {@code module} exports to every module, sorted. */
  public static Set<String> exportedToAll(ModuleDescriptor module) {
    Set<String> exported = new TreeSet<>();
    module.exports().stream().filter(e -> !e.isQualified()).forEach(e -> exported.add(e.source()));
    return exported;
  }

  /** The packages {@code module} exports to named modules only, with those modules. */
  public static Map<String, Set<String>> exportedToSome(ModuleDescriptor module) {
    Map<String, Set<String>> exported = new TreeMap<>();
    module.exports().stream()
        .filter(ModuleDescriptor.Exports::isQualified)
        .forEach(e -> exported.put(e.source(), e.targets()));
    return exported;
  }

  /** The modules {@code module} requires at run time: every {@code requires} but the {@code static} ones, sorted. */
  public static Set<String> requiredAtRunTime(ModuleDescriptor module) {
    Set<String> required = new TreeSet<>();
    module.requires().stream()
        .filter(r -> !r.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC))
        .forEach(r -> required.add(r.name()));
    return required;
  }
}
