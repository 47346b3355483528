package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The workload files say what their names promise, and share the record layout the databases are loaded with. */
class WorkloadFilesTest {

  private static final Path DIR = Path.of("workloads");

  @Test
  void everyCprMixScansExactlyFiveRecordsUniformlyAndUpdatesTheRest() throws IOException {
    for (int f : new int[] {10, 25, 50, 75, 90, 95, 99, 100}) {
      for (String shape : List.of("star", "one")) {
        Properties p = load("cpr-" + shape + "-" + f);
        double scan = Double.parseDouble(p.getProperty("scanproportion"));
        double update = Double.parseDouble(p.getProperty("updateproportion"));
        assertThat(scan).as("cpr-%s-%d scan", shape, f).isEqualTo(f / 100.0);
        assertThat(scan + update).as("cpr-%s-%d scan + update", shape, f).isEqualTo(1.0);
        assertThat(p)
            .containsEntry("readproportion", "0")
            .containsEntry("insertproportion", "0")
            .containsEntry("minscanlength", "5")
            .containsEntry("maxscanlength", "5")
            .containsEntry("requestdistribution", "uniform")
            .containsEntry("fieldcount", shape.equals("star") ? "10" : "1")
            .containsEntry("readallfields", shape.equals("star") ? "true" : "false")
            .containsEntry("writeallfields", shape.equals("star") ? "true" : "false");
      }
    }
  }

  @Test
  void everyWorkloadInsertsInOrderWithTheLoadedRecordLayout() throws IOException {
    Properties load = load("load");
    try (Stream<Path> files = Files.list(DIR)) {
      for (Path file : files.toList()) {
        Properties p = load(file.getFileName().toString());
        assertThat(p.getProperty("workload"))
            .as(file.toString())
            .isEqualTo("site.ycsb.workloads.CoreWorkload");
        for (String key : List.of("insertorder", "zeropadding", "fieldlength")) {
          assertThat(p.getProperty(key)).as(file + " " + key).isEqualTo(load.getProperty(key));
        }
        assertThat(p.getProperty("insertorder")).isEqualTo("ordered");
      }
    }
    assertThat(load).containsEntry("fieldcount", "10");
  }

  @Test
  void coreWorkloadsKeepTheirStandardMixes() throws IOException {
    assertThat(load("A"))
        .containsEntry("readproportion", "0.5")
        .containsEntry("updateproportion", "0.5")
        .containsEntry("requestdistribution", "zipfian");
    assertThat(load("B"))
        .containsEntry("readproportion", "0.95")
        .containsEntry("updateproportion", "0.05");
    assertThat(load("C"))
        .containsEntry("readproportion", "1")
        .containsEntry("updateproportion", "0");
    assertThat(load("E"))
        .containsEntry("scanproportion", "0.95")
        .containsEntry("insertproportion", "0.05")
        .containsEntry("maxscanlength", "100");
    assertThat(load("S"))
        .containsEntry("scanproportion", "0.95")
        .containsEntry("updateproportion", "0.05")
        .containsEntry("minscanlength", "5")
        .containsEntry("maxscanlength", "5");
    assertThat(Workload.read(DIR.resolve("E")).inserts()).isTrue();
    assertThat(Workload.read(DIR.resolve("S")).inserts()).isFalse();
  }

  private static Properties load(String name) throws IOException {
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(DIR.resolve(name))) {
      p.load(in);
    }
    return p;
  }
}
