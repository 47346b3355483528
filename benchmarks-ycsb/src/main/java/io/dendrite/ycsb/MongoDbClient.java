package io.dendrite.ycsb;

/**
 * YCSB binding {@code io.dendrite.ycsb.MongoDbClient}: MongoDB alone, through the synchronous driver. Documents
 * are keyed by the YCSB key ({@code _id}) and carry the indexed record number. Properties: {@code mongodb.url}
 * (default the environment's DENDRITE_MONGO_URL), {@code mongodb.database} (default ycsb), and those of
 * {@link InstrumentedDB}.
 */
public final class MongoDbClient extends InstrumentedDB {

  @Override
  protected String bindingName() {
    return "mongodb";
  }

  @Override
  RecordBackend openBackend(BindingProperties properties, RecordTable table) {
    return new DatabaseBackend(RecordStore.open(RecordStore.Kind.MONGODB, properties, table));
  }
}
