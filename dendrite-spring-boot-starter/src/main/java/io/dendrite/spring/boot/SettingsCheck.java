package io.dendrite.spring.boot;

import io.dendrite.core.WritePolicy;
import java.time.Duration;
import org.springframework.util.ClassUtils;

/**
 * The checks of {@code dendrite.*} that no single setter makes: values Dendrite would refuse only when the first
 * Dendrite is built, combinations that conflict, and modules a property asks for but the class path lacks. Each
 * failure names the property.
 */
final class SettingsCheck {
  /** R when {@code dendrite.replicas} is unset: the engines' default. */
  private static final int DEFAULT_REPLICAS = 2;

  private SettingsCheck() {}

  static void check(DendriteProperties properties, int servers, ClassLoader classes) {
    boolean writeBack = properties.writePolicy() == WritePolicy.WRITE_BACK;
    boolean tardis = properties.tardis().enabled();
    requireModule(
        writeBack,
        classes,
        "io.dendrite.writeback.WriteBack",
        "dendrite.write-policy",
        "write-back",
        "dendrite-writeback");
    requireModule(
        tardis,
        classes,
        "io.dendrite.tardis.TardisRanges",
        "dendrite.tardis.enabled",
        true,
        "dendrite-tardis");
    requireModule(
        properties.processes().zookeeper() != null,
        classes,
        "io.dendrite.coordination.ManyProcesses",
        "dendrite.processes.zookeeper",
        properties.processes().zookeeper(),
        "dendrite-coordination");
    if (tardis && writeBack) {
      throw PropertyCheck.invalid(
          "dendrite.tardis.enabled",
          true,
          "TARDIS is for write-around and write-through: write-back (dendrite.write-policy) keeps writes"
              + " buffered through a database outage already");
    }
    Integer replicas = properties.replicas();
    if (replicas != null && (replicas < 1 || replicas > servers)) {
      throw PropertyCheck.invalid(
          "dendrite.replicas", replicas, "must be between 1 and the " + servers + " cache servers");
    }
    if ((writeBack || tardis) && replicas == null && servers < DEFAULT_REPLICAS) {
      throw PropertyCheck.invalid(
          "dendrite.replicas",
          null,
          "buffered writes are pinned on 2 cache servers by default, and dendrite.cache.servers lists "
              + servers
              + ": add a server, or set dendrite.replicas=1 (a lost server then loses its buffered writes)");
    }
    if (properties.nearCache().maxSize().isNegative()) {
      throw PropertyCheck.invalid(
          "dendrite.near-cache.max-size",
          properties.nearCache().maxSize(),
          "must be 0 (off) or more");
    }
    notNegative("dendrite.write-back.drain-delay", properties.writeBack().drainDelay());
    notNegative("dendrite.write-back.drain-on-close", properties.writeBack().drainOnClose());
    notNegative(
        "dendrite.health.max-buffered-write-age", properties.health().maxBufferedWriteAge());
  }

  private static void requireModule(
      boolean asked,
      ClassLoader classes,
      String className,
      String property,
      Object value,
      String artifact) {
    if (asked && !ClassUtils.isPresent(className, classes)) {
      throw PropertyCheck.invalid(
          property, value, "needs io.dendrite:" + artifact + " on the class path");
    }
  }

  private static void notNegative(String property, Duration value) {
    if (value.isNegative()) {
      throw PropertyCheck.invalid(property, value, "must not be negative");
    }
  }
}
