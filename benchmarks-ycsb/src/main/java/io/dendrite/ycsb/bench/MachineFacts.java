package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** What a reader needs to know about the machine to judge the numbers; Linux details when /proc has them. */
public final class MachineFacts {

  private MachineFacts() {}

  public static List<String> collect() {
    List<String> facts = new ArrayList<>();
    facts.add(
        "CPU: "
            + procLine("/proc/cpuinfo", "model name").orElse("unknown")
            + ", "
            + Runtime.getRuntime().availableProcessors()
            + " cores available to the JVM");
    procLine("/proc/meminfo", "MemTotal").ifPresent(m -> facts.add("Memory: " + m));
    facts.add(
        "OS: "
            + System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + " "
            + System.getProperty("os.arch"));
    facts.add(
        "JDK: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    facts.add(
        String.format(
            Locale.ROOT,
            "Load average (1 min) when the report was written: %.2f",
            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
    return facts;
  }

  private static java.util.Optional<String> procLine(String file, String key) {
    try {
      return Files.readAllLines(Path.of(file)).stream()
          .filter(l -> l.startsWith(key))
          .map(l -> l.substring(l.indexOf(':') + 1).strip())
          .findFirst();
    } catch (IOException | RuntimeException e) {
      return java.util.Optional.empty();
    }
  }
}
