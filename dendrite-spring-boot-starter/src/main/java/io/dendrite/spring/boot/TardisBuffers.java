package io.dendrite.spring.boot;

import io.dendrite.tardis.TardisMetrics;
import io.dendrite.tardis.TardisRanges;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A Dendrite's TARDIS, as {@link BufferedWrites}: writes buffered while the database failed them. Closing hands them
 * over as they are (recovery workers of the range's next owner apply them), so there is nothing to count after.
 */
final class TardisBuffers implements BufferedWrites {
  private final TardisRanges tardis;

  TardisBuffers(TardisRanges tardis) {
    this.tardis = tardis;
  }

  @Override
  public String kind() {
    return "tardis";
  }

  @Override
  public Object source() {
    return tardis;
  }

  @Override
  public Backlog now() {
    TardisMetrics metrics = tardis.total();
    Duration oldest =
        metrics
            .oldestBuffered()
            .map(since -> Duration.between(since, Instant.now()))
            .orElse(Duration.ZERO);
    return new Backlog(
        metrics.bufferedDocuments(),
        oldest,
        metrics.pinnedBytes(),
        metrics.recovered(),
        metrics.mode().name());
  }

  @Override
  public Optional<Backlog> afterClose() {
    return Optional.empty();
  }
}
