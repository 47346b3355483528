package io.dendrite.spring.boot;

/** Told of each Dendrite {@link Dendrites} built: the meters bind it. */
interface DendriteListener {
  void built(ManagedDendrite<?, ?> dendrite);
}
