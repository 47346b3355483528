package io.dendrite.coordination;

import java.util.Map;

/** {@link Scores#set()} over a map. */
record InMemorySet(Map<Integer, Scores.Score> table)
    implements io.dendrite.core.WriteCommand<Integer, Scores.Score, Scores.SetVal> {
  @Override
  public Class<Scores.SetVal> type() {
    return Scores.SetVal.class;
  }

  @Override
  public byte[] encode(Scores.SetVal write) {
    return (write.id() + " " + write.val()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Override
  public Scores.SetVal decode(byte[] bytes) {
    String[] parts = new String(bytes, java.nio.charset.StandardCharsets.UTF_8).split(" ");
    return new Scores.SetVal(Integer.parseInt(parts[0]), Long.parseLong(parts[1]));
  }

  @Override
  public void apply(Scores.SetVal write) {
    table.merge(
        write.id(),
        new Scores.Score(write.id(), write.val(), 0),
        (old, fresh) -> new Scores.Score(old.id(), fresh.val(), old.cnt()));
  }

  @Override
  public io.dendrite.core.CacheUpdate<Integer, Scores.Score> cacheUpdate(Scores.SetVal write) {
    return Scores.setting(write.id(), write.val());
  }
}
