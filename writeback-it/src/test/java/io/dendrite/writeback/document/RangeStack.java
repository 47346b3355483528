package io.dendrite.writeback.document;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RangeCache;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.store.DataStore;
import java.util.List;
import java.util.function.UnaryOperator;

/** One process's write-back stack over the table {@code t}: engine, range write-back and a WRITE_BACK Dendrite. */
final class RangeStack implements AutoCloseable {
  static final long MAX_ID = 999;

  /** Every write of the stack's Dendrite: rows' inserts, updates and deletes. */
  static final DocumentCommand<Long, RangeRow> WRITES =
      DocumentCommand.updating(RangeRow::cacheUpdateOf);

  final DataStore store;
  final DocumentWriteBack writeBack;
  final RangeWriteBack<Long> buffer;
  final RangeCache<Long, RangeRow> dendrite;

  RangeStack(
      IqClient cache,
      DataStore store,
      UnaryOperator<DocumentWriteBack.Builder> engine,
      UnaryOperator<RangeWriteBack.Builder<Long>> range,
      UnaryOperator<Dendrite.Builder<Long, RangeRow>> settings) {
    this.store = store;
    this.writeBack =
        engine.apply(DocumentWriteBack.builder().replicas(1).cache(cache).store(store)).build();
    this.buffer =
        range
            .apply(
                RangeWriteBack.builder(DomainType.LONG)
                    .writeBack(writeBack)
                    .collection(RangeRow.TABLE)
                    .domain(RangeRow.RANGE_ATTRIBUTE))
            .build();
    this.dendrite =
        settings
            .apply(
                Dendrite.builder(DomainType.LONG, RangeRow.CODEC)
                    .collection(RangeRow.TABLE)
                    .domain(RangeRow.RANGE_ATTRIBUTE)
                    .range(0L, MAX_ID)
                    .cache(cache)
                    .writeBack(buffer, List.of(WRITES)))
            .buildRangeCache();
  }

  RangeStack(IqClient cache, DataStore store, UnaryOperator<DocumentWriteBack.Builder> engine) {
    this(cache, store, engine, range -> range, settings -> settings);
  }

  List<RangeRow> get(long lowerBound, long upperBound) {
    return dendrite.get(lowerBound, upperBound, (lb, ub) -> RangeRow.readRange(store, lb, ub));
  }

  void insert(RangeRow row) {
    dendrite.write(row.id(), row.id(), row.insert(), WRITES);
  }

  void update(RangeRow row) {
    dendrite.write(row.id(), row.id(), row.update(), WRITES);
  }

  void delete(long id) {
    dendrite.write(id, id, RangeRow.delete(id), WRITES);
  }

  @Override
  public void close() {
    try (DocumentWriteBack engine = writeBack;
        RangeWriteBack<Long> range = buffer;
        RangeCache<Long, RangeRow> cached = dendrite) {
      // closed in reverse order: the Dendrite, then range write-back, then the engine
    }
  }
}
