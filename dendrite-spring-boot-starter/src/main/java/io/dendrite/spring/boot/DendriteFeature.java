package io.dendrite.spring.boot;

import io.dendrite.core.Dendrite;
import java.util.Optional;

/**
 * One optional module's setting of every Dendrite {@link Dendrites} builds (the deployment over many processes,
 * write-back, TARDIS), declared as a bean by a configuration that runs only when the module is on the class path.
 */
interface DendriteFeature {
  /** Sets the feature on {@code builder}; what it will keep buffered, if anything. */
  Optional<BufferedWrites> applyTo(Dendrite.Builder<?, ?> builder);
}
