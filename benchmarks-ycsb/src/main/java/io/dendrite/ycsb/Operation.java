package io.dendrite.ycsb;

/** The YCSB operation types, named as YCSB's output names them. */
enum Operation {
  READ,
  SCAN,
  UPDATE,
  INSERT,
  DELETE
}
