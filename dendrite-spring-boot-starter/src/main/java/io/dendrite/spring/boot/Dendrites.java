package io.dendrite.spring.boot;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RowCodec;
import io.dendrite.iq.client.IqClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Builds the application's Dendrites with the {@code dendrite.*} settings: the cache servers, the write policy, the
 * near cache, and where their modules are present and the properties ask for them, many processes, write-back and
 * TARDIS. A Dendrite bean then binds only its range, queries and commands:
 *
 * <pre>{@code
 * @Bean
 * Dendrite<Integer, Score> scores(Dendrites dendrites, JdbcClient db) {
 *   return dendrites.build(DomainType.INTEGER, ROWS, builder -> builder
 *       .collection("scores").domain("id").range(1, 1_000_000)
 *       .query("byId", (lo, hi) -> select(db, lo, hi))
 *       .command("set", WriteCommand.putting(Score.class, ROWS, score -> update(db, score))));
 * }
 * }</pre>
 *
 * <p>The Dendrite returned is closed by the shutdown, in its own phase after the web server stopped taking requests,
 * which drains what it buffered (or hands it over) and logs the counts; Spring's destroy of the bean afterwards finds
 * it closed. The cache client and the store stay open until after every Dendrite closed: they are beans the Dendrites
 * depend on.
 */
public final class Dendrites {
  private final IqClient cache;
  private final ObjectProvider<DendriteFeature> features;
  private final ObjectProvider<DendriteCustomizer> customizers;
  private final ObjectProvider<DendriteListener> listeners;
  private final List<ManagedDendrite<?, ?>> built = new CopyOnWriteArrayList<>();

  Dendrites(
      IqClient cache,
      ObjectProvider<DendriteFeature> features,
      ObjectProvider<DendriteCustomizer> customizers,
      ObjectProvider<DendriteListener> listeners) {
    this.cache = cache;
    this.features = features;
    this.customizers = customizers;
    this.listeners = listeners;
  }

  /**
   * Builds a Dendrite of attribute type {@code type} and rows {@code rows}: the {@code dendrite.*} settings first, then
   * the {@link DendriteCustomizer}s, then {@code bindings} (the collection, the domain, the range, the queries and the
   * commands; a setting here overrides theirs).
   *
   * @throws IllegalStateException as {@link Dendrite.Builder#build()}: a required binding missing, a conflict, or the
   *     range owned elsewhere
   */
  public <K extends Comparable<? super K>, R> Dendrite<K, R> build(
      DomainType<K> type, RowCodec<K, R> rows, UnaryOperator<Dendrite.Builder<K, R>> bindings) {
    Objects.requireNonNull(bindings, "bindings");
    Dendrite.Builder<K, R> builder = Dendrite.builder(type, rows).cache(cache);
    List<BufferedWrites> buffered = new ArrayList<>();
    features.orderedStream().forEach(feature -> feature.applyTo(builder).ifPresent(buffered::add));
    customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
    ManagedDendrite<K, R> dendrite =
        new ManagedDendrite<>(bindings.apply(builder).build(), buffered);
    built.add(dendrite);
    listeners.orderedStream().forEach(listener -> listener.built(dendrite));
    return dendrite;
  }

  /** The cache client every Dendrite here uses. */
  IqClient cache() {
    return cache;
  }

  /** Every Dendrite built here, in the order built. */
  List<ManagedDendrite<?, ?>> built() {
    return List.copyOf(built);
  }

  /** Closes the Dendrites still open, the last built first; each logs what its buffered writes became. */
  void closeAll() {
    List<ManagedDendrite<?, ?>> reversed = new ArrayList<>(built);
    Collections.reverse(reversed);
    RuntimeException failed = null;
    for (ManagedDendrite<?, ?> dendrite : reversed) {
      try {
        dendrite.close();
      } catch (RuntimeException e) {
        if (failed == null) {
          failed = e;
        } else {
          failed.addSuppressed(e);
        }
      }
    }
    if (failed != null) {
      throw failed;
    }
  }
}
