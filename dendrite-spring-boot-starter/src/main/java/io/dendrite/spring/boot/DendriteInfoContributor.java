package io.dendrite.spring.boot;

import io.dendrite.coordination.PartitionedDendrite;
import io.dendrite.core.Dendrite;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.util.ClassUtils;

/**
 * {@code dendrite} in the info endpoint: the cache servers, and per Dendrite its deployment and the ranges this
 * process owns (the whole domain in one process; its share over many).
 */
final class DendriteInfoContributor implements InfoContributor {
  private static final boolean MANY_PROCESSES_PRESENT =
      ClassUtils.isPresent(
          "io.dendrite.coordination.PartitionedDendrite",
          DendriteInfoContributor.class.getClassLoader());

  private final Dendrites dendrites;

  DendriteInfoContributor(Dendrites dendrites) {
    this.dendrites = dendrites;
  }

  @Override
  public void contribute(Info.Builder info) {
    Map<String, Object> byRange = new LinkedHashMap<>();
    for (ManagedDendrite<?, ?> dendrite : dendrites.built()) {
      if (dendrite.isOpen()) {
        byRange.put(dendrite.rangeName(), describe(dendrite.dendrite()));
      }
    }
    info.withDetail(
        "dendrite",
        Map.of(
            "servers",
            dendrites.cache().config().servers().stream().map(Object::toString).toList(),
            "dendrites",
            byRange));
  }

  private static Map<String, Object> describe(Dendrite<?, ?> dendrite) {
    if (MANY_PROCESSES_PRESENT && ManyProcesses.is(dendrite)) {
      return Map.of("deployment", "many processes", "ownedRanges", ManyProcesses.owned(dendrite));
    }
    return Map.of("deployment", "one process", "ownedRanges", List.of(dendrite.rangeName()));
  }

  /** Loaded only when the coordination module is present. */
  private static final class ManyProcesses {
    static boolean is(Dendrite<?, ?> dendrite) {
      return dendrite instanceof PartitionedDendrite;
    }

    static List<String> owned(Dendrite<?, ?> dendrite) {
      return ((PartitionedDendrite<?, ?>) dendrite).servedRanges();
    }
  }
}
