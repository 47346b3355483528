package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;

class CacheKeysTest {

  @Test
  void keysNameCollectionDomainAndBounds() {
    assertThat(new CacheKeys<>("users", "age", DomainType.INTEGER).entryKey(Interval.of(18, 20)))
        .isEqualTo("dd:users:age:18:20");
    assertThat(
            new CacheKeys<>("users", "born", DomainType.DATE)
                .entryKey(Interval.of(LocalDate.of(2000, 1, 1), LocalDate.of(2000, 12, 31))))
        .isEqualTo("dd:users:born:2000-01-01:2000-12-31");
  }

  @Test
  void textBoundsAreEscapedSoKeysHoldNoSpaceAndNoExtraColon() {
    String key =
        new CacheKeys<>("users", "name", DomainType.TEXT).entryKey(Interval.of("a b:c", "z\r\n"));

    assertThat(key).doesNotContain(" ", "\r", "\n").startsWith("dd:users:name:");
    assertThat(key.split(":")).hasSize(5);
  }

  @Test
  void keysLongerThanMemcachedAllowsAreHashedAndStayDistinct() {
    CacheKeys<String> keys = new CacheKeys<>("users", "name", DomainType.TEXT);
    String a = keys.entryKey(Interval.of("a".repeat(300), "b".repeat(300)));
    String b = keys.entryKey(Interval.of("a".repeat(300), "c".repeat(300)));

    assertThat(a.getBytes(StandardCharsets.UTF_8).length)
        .isLessThanOrEqualTo(CacheKeys.MAX_KEY_BYTES);
    assertThat(a).isNotEqualTo(b).startsWith("dd:users:name:#");
    assertThat(keys.entryKey(Interval.of("a".repeat(300), "b".repeat(300)))).isEqualTo(a);
  }

  @Test
  void collectionAndDomainNamesAreChecked() {
    assertThatThrownBy(() -> new CacheKeys<>("user table", "age", DomainType.INTEGER))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("collection name");
    assertThatThrownBy(() -> new CacheKeys<>("users", "", DomainType.INTEGER))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("domain name");
  }
}
