package io.dendrite.spring.boot;

import io.dendrite.core.Dendrite;

/**
 * Settings of the application's own for every Dendrite that {@link Dendrites} builds, applied after the {@code
 * dendrite.*} properties' and before the Dendrite's own bindings: declare one as a bean, e.g. {@code builder ->
 * builder.maxSharedFraction(0.5)}. Customizers run in their {@code @Order}.
 */
@FunctionalInterface
public interface DendriteCustomizer {
  /** Changes {@code builder}'s settings. */
  void customize(Dendrite.Builder<?, ?> builder);
}
