package io.dendrite.writeback.document;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqException;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** What the data store must hold after every acknowledged write is applied once, by the in-memory semantics. */
final class DocumentModel {
  private final Map<EntityKey, Optional<Map<String, Object>>> documents = new LinkedHashMap<>();

  /** Documents whose last write failed without saying whether it took effect: the state if it did. */
  private final Map<EntityKey, Optional<Map<String, Object>>> ifLastWriteTookEffect =
      new LinkedHashMap<>();

  /** Writes through the engine and, once acknowledged, into the model. */
  void write(DocumentWriteBack writeBack, EntityKey key, ChangeSequence changes) {
    writeBack.write(key, changes);
    record(key, changes);
  }

  /**
   * Writes through the engine unless an earlier write of the document ended with an unknown outcome; a write the
   * engine reports as not done because its commit lapsed on some replicas (under load, past the lease lifetime) is
   * recorded as unknown ({@link #recordUnknown}). Returns whether it was acknowledged.
   */
  boolean tryWrite(DocumentWriteBack writeBack, EntityKey key, ChangeSequence changes) {
    synchronized (this) {
      if (ifLastWriteTookEffect.containsKey(key)) {
        return false;
      }
    }
    try {
      writeBack.write(key, changes);
    } catch (IqException e) {
      if (e.getMessage() == null || !e.getMessage().contains("was applied on some replicas")) {
        throw e;
      }
      recordUnknown(key, changes);
      return false;
    }
    record(key, changes);
    return true;
  }

  /** Documents whose last write's outcome is unknown. */
  synchronized int unknownCount() {
    return ifLastWriteTookEffect.size();
  }

  /** Whether {@code stored} is what the store may hold for {@code key}. */
  synchronized boolean matches(EntityKey key, Optional<Map<String, Object>> stored) {
    return stored.equals(expected(key))
        || (ifLastWriteTookEffect.containsKey(key)
            && stored.equals(ifLastWriteTookEffect.get(key)));
  }

  /** Records a write acknowledged elsewhere (another thread or process), in the order it was acknowledged. */
  synchronized void record(EntityKey key, ChangeSequence changes) {
    documents.put(key, changes.applyTo(documents.getOrDefault(key, Optional.empty())));
  }

  /**
   * Records a write that failed without saying whether it took effect (the engine reported it as not done, e.g. a
   * commit that lapsed on some replicas): the store may then hold the document either way. The writer must not
   * write the document again.
   */
  synchronized void recordUnknown(EntityKey key, ChangeSequence changes) {
    ifLastWriteTookEffect.put(key, changes.applyTo(documents.getOrDefault(key, Optional.empty())));
  }

  synchronized Optional<Map<String, Object>> expected(EntityKey key) {
    return documents.getOrDefault(key, Optional.empty());
  }

  synchronized void assertStoreMatches(DataStore store) {
    documents.forEach(
        (key, fields) -> {
          Optional<Map<String, Object>> stored = store.read(key).map(Entity::fields);
          if (ifLastWriteTookEffect.containsKey(key)) {
            assertThat(stored)
                .as("document %s, whose last write's outcome is unknown", key)
                .isIn(fields, ifLastWriteTookEffect.get(key));
          } else {
            assertThat(stored).as("document %s", key).isEqualTo(fields);
          }
        });
  }
}
