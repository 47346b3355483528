package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.tardis.Solution;
import io.dendrite.tardis.Technique;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import site.ycsb.DBException;

class BindingPropertiesTest {

  @Test
  void readsTypedValuesAndFallsBackToTheEnvironment() {
    BindingProperties properties =
        properties(
            Map.of("n", " 12 ", "flag", "TRUE", "real", "0.5"), Map.of("ENV_URL", "jdbc:from-env"));

    assertThat(properties.integer("n", 1, 0)).isEqualTo(12);
    assertThat(properties.integer("missing", 3, 0)).isEqualTo(3);
    assertThat(properties.bool("flag", false)).isTrue();
    assertThat(properties.real("real", 1)).isEqualTo(0.5);
    assertThat(properties.requiredOrEnvironment("mysql.url", "ENV_URL")).isEqualTo("jdbc:from-env");
  }

  @Test
  void badValuesNameTheProperty() {
    BindingProperties properties =
        properties(Map.of("n", "many", "flag", "yes", "low", "-1"), Map.of());

    assertThatThrownBy(() -> properties.integer("n", 1, 0))
        .hasMessageContaining("n must be a whole number");
    assertThatThrownBy(() -> properties.bool("flag", true))
        .hasMessageContaining("flag must be true or false");
    assertThatThrownBy(() -> properties.number("low", 1, 0))
        .hasMessageContaining("low must be at least 0");
    assertThatThrownBy(() -> properties.requiredOrEnvironment("mysql.url", "DENDRITE_MYSQL_URL"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mysql.url")
        .hasMessageContaining("DENDRITE_MYSQL_URL");
  }

  @Test
  void choicesAreEnumConstantsByNameInAnyCase() {
    BindingProperties properties =
        properties(Map.of("tardis.technique", "dis", "tardis.solution", "sideways"), Map.of());

    assertThat(properties.choice("tardis.technique", Technique.class, Technique.TARDIS))
        .isEqualTo(Technique.DIS);
    assertThat(properties.choice("unset", Technique.class, Technique.TARDIS))
        .isEqualTo(Technique.TARDIS);
    assertThatThrownBy(() -> properties.choice("tardis.solution", Solution.class, Solution.RECON))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "tardis.solution must be one of [RECON, CONTEXTUAL], got \"sideways\"");
  }

  @Test
  void aBindingRefusesBadSettingsInInitBeforeConnectingAnywhere() {
    assertThatThrownBy(
            () ->
                init(
                    Map.of(
                        DendriteBackend.POLICY, "write-sideways", DendriteBackend.SERVERS, "h:1")))
        .isInstanceOf(DBException.class)
        .hasMessageContaining("dendrite.policy must be write-around");
    assertThatThrownBy(
            () -> init(Map.of(DendriteBackend.BETA, "2", DendriteBackend.SERVERS, "h:1")))
        .isInstanceOf(DBException.class)
        .hasMessageContaining("dendrite.beta must be in [0, 1]");
    assertThatThrownBy(() -> init(Map.of()))
        .isInstanceOf(DBException.class)
        .hasMessageContaining("dendrite.servers");
    assertThatThrownBy(
            () ->
                init(
                    Map.of(
                        InstrumentedDB.TABLE, "a", "table", "b", DendriteBackend.SERVERS, "h:1")))
        .isInstanceOf(DBException.class)
        .hasMessageContaining("dendrite.table=a but YCSB's table=b");
  }

  private static void init(Map<String, String> settings) throws DBException {
    Properties properties = new Properties();
    properties.putAll(settings);
    DendriteClient client = new DendriteClient();
    client.setProperties(properties);
    client.init();
  }

  /** The near cache's bound is a byte count: past an int, refused below 0, 64 MiB when not given. */
  @Test
  void theNearCacheBoundTakesAnyByteCountFromZero() {
    assertThat(
            DendriteBackend.nearCacheBytes(
                properties(Map.of(DendriteBackend.NEAR_CACHE_BYTES, "4294967296"), Map.of())))
        .isEqualTo(4L << 30);
    assertThat(DendriteBackend.nearCacheBytes(properties(Map.of(), Map.of()))).isEqualTo(64L << 20);
    assertThatThrownBy(
            () ->
                DendriteBackend.nearCacheBytes(
                    properties(Map.of(DendriteBackend.NEAR_CACHE_BYTES, "-1"), Map.of())))
        .hasMessageContaining("dendrite.nearcachebytes must be at least 0, got -1");
  }

  private static BindingProperties properties(
      Map<String, String> values, Map<String, String> environment) {
    Properties properties = new Properties();
    properties.putAll(values);
    return new BindingProperties(properties, environment);
  }
}
