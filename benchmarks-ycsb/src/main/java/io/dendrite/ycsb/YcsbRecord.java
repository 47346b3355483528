package io.dendrite.ycsb;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One YCSB record as every binding stores it: its key, the record number parsed from the key (the numeric
 * attribute scans range over) and its field values.
 *
 * @param key the YCSB key, the primary key
 * @param number the record number, see {@link RecordKey}
 * @param fields field name → value; unmodifiable
 */
record YcsbRecord(String key, long number, Map<String, String> fields) {

  YcsbRecord {
    if (key == null || fields == null) {
      throw new IllegalArgumentException("key and fields must not be null");
    }
    fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }

  /** The fields a read asked for: all of them when {@code wanted} is null, as YCSB means it. */
  Map<String, String> fields(Set<String> wanted) {
    if (wanted == null) {
      return fields;
    }
    Map<String, String> selected = new LinkedHashMap<>();
    for (String field : wanted) {
      String value = fields.get(field);
      if (value != null) {
        selected.put(field, value);
      }
    }
    return selected;
  }
}
