package io.dendrite.core;

import java.nio.ByteBuffer;

/** A test row: {@code id} is the range attribute, {@code val} the payload writes change. */
record ScoreRow(int id, long val) {

  /** Encodes the row as 12 bytes. */
  static final RowCodec<Integer, ScoreRow> CODEC =
      new RowCodec<>() {
        @Override
        public Integer attributeOf(ScoreRow row) {
          return row.id();
        }

        @Override
        public Object identityOf(ScoreRow row) {
          return row.id();
        }

        @Override
        public byte[] encode(ScoreRow row) {
          return ByteBuffer.allocate(12).putInt(row.id()).putLong(row.val()).array();
        }

        @Override
        public ScoreRow decode(byte[] bytes) {
          ByteBuffer buffer = ByteBuffer.wrap(bytes);
          return new ScoreRow(buffer.getInt(), buffer.getLong());
        }
      };
}
