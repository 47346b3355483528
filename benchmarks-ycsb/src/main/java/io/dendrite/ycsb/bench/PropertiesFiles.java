package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/** Reads the Java properties files the runner works with (workloads, binding stats). */
final class PropertiesFiles {

  private PropertiesFiles() {}

  /** @param what what the file is, for the error message */
  static Properties load(Path file, String what) {
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file)) {
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + what + " " + file, e);
    }
    return p;
  }
}
