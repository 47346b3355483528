package io.dendrite.coordination;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import java.util.List;
import java.util.Map;

/** The scores of an in-memory table, as the tests of deployments and forwarding build them. */
final class InMemoryScores {
  private InMemoryScores() {}

  /**
   * A write-through Dendrite of {@code table}'s scores/id in [0, {@code max}], with the query "range" and the command
   * "set": the settings every process of a test's service shares (its deployment is the test's).
   */
  static Dendrite.Builder<Integer, Scores.Score> dendrite(
      IqClient cache, Map<Integer, Scores.Score> table, int max) {
    return Dendrite.builder(DomainType.INTEGER, Scores.CODEC)
        .collection("scores")
        .domain("id")
        .range(0, max)
        .cache(cache)
        .writePolicy(WritePolicy.WRITE_THROUGH)
        .query(
            "range",
            (lower, upper) ->
                List.copyOf(PartitionedDendriteInputIT.subMap(table, lower, upper).values()))
        .command("set", new InMemorySet(table));
  }
}
