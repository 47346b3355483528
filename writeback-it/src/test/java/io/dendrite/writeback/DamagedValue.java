package io.dendrite.writeback;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.engine.UndecodableValueException;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Collections;

/**
 * A buffered value no engine can decode, as a truncated value, a stray client or a later format would leave it:
 * planted over a real buffered key on its replicas, then looked for where a drain moves it aside.
 */
public final class DamagedValue {
  private static final byte[] BYTES = "not a Dendrite encoding".getBytes(StandardCharsets.UTF_8);

  private final IqClient cache;
  private final int replicas;
  private final String key;

  private DamagedValue(IqClient cache, int replicas, String key) {
    this.cache = cache;
    this.replicas = replicas;
    this.key = key;
  }

  /** Pins the damaged bytes over {@code key} on its {@code replicas} servers, as the engine pins its values. */
  public static DamagedValue plant(IqClient cache, int replicas, String key) {
    assertThat(cache.replicaPlacement().store(replicas).set(key, BYTES)).isEqualTo(Outcome.OK);
    return new DamagedValue(cache, replicas, key);
  }

  /**
   * The damaged bytes are on every replica of {@code Undecodable:<key>} and gone from {@code key}, and the engine's
   * metrics and its meter counted one value moved aside.
   */
  public void assertMovedAsideOnce(WriteBackMetrics metrics, MeterRegistry registry) {
    assertThat(
            cache
                .replicaPlacement()
                .store(replicas)
                .getEach(UndecodableValueException.QUARANTINE_PREFIX + key)
                .stream()
                .map(CacheValue::data))
        .as("the damaged bytes, on every replica of the copy")
        .containsExactlyElementsOf(Collections.nCopies(replicas, BYTES));
    assertThat(cache.replicaPlacement().store(replicas).get(key)).as("the original").isEmpty();
    assertThat(metrics.undecodableMovedAside()).isEqualTo(1);
    assertThat(registry.get("dendrite.writeback.undecodable").functionCounter().count())
        .isEqualTo(1);
  }
}
