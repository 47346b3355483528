package io.dendrite.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.dendrite.coordination.ManyProcesses;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.testsupport.faults.ClosedPort;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configuration without any server: the IQ client connects on first use, so which beans exist, which
 * settings they get and which properties are refused at start-up need none. What needs a server is in {@code
 * DendriteStarterIT}.
 */
class DendriteAutoConfigurationTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DendriteAutoConfiguration.class, DendriteActuatorAutoConfiguration.class));

  /** Two servers on closed ports: nothing connects to them unless a test asks. */
  private final ApplicationContextRunner configured =
      runner.withPropertyValues(
          "dendrite.cache.servers[0]=127.0.0.1:" + ClosedPort.find(),
          "dendrite.cache.servers[1]=127.0.0.1:" + ClosedPort.find());

  @Test
  void withoutCacheServersNothingIsCreated() {
    runner.run(
        context ->
            assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean(IqClient.class)
                .doesNotHaveBean(Dendrites.class)
                .doesNotHaveBean(DendriteShutdown.class)
                .doesNotHaveBean(DendriteHealthIndicator.class));
  }

  @Test
  void cacheServersTurnItOnWithTheClientTheyDescribe() {
    runner
        .withPropertyValues(
            "dendrite.cache.servers=10.0.0.1:11211,10.0.0.2:11212",
            "dendrite.cache.request-timeout=750ms",
            "dendrite.cache.connections-per-server=3")
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .hasSingleBean(Dendrites.class)
                  .hasSingleBean(DendriteShutdown.class);
              IqClient client = context.getBean(IqClient.class);
              assertThat(client.config().servers())
                  .containsExactly(
                      new ServerAddress("10.0.0.1", 11211), new ServerAddress("10.0.0.2", 11212));
              assertThat(client.config().requestTimeout()).isEqualTo(Duration.ofMillis(750));
              assertThat(client.config().connectionsPerServer()).isEqualTo(3);
              assertThat(context.getBean(Dendrites.class).cache()).isSameAs(client);
            });
  }

  @Test
  void anApplicationsOwnClientIsUsedInstead() {
    IqClient own = IqClient.builder().servers("10.0.0.9:11211").build();
    configured
        .withBean("ownClient", IqClient.class, () -> own)
        .run(
            context -> {
              assertThat(context).hasSingleBean(IqClient.class);
              assertThat(context.getBean(Dendrites.class).cache()).isSameAs(own);
            });
  }

  @Test
  void aWriteThroughApplicationNeedsNoOptionalModule() {
    configured
        .withClassLoader(
            new FilteredClassLoader(
                "io.dendrite.coordination",
                "io.dendrite.writeback",
                "io.dendrite.tardis",
                "io.dendrite.store",
                "org.apache.zookeeper",
                "com.mongodb",
                "io.micrometer"))
        .withPropertyValues("dendrite.write-policy=write-through")
        .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Dendrites.class));
  }

  @Test
  void aMalformedServerFailsStartUpNamingIt() {
    runner
        .withPropertyValues(
            "dendrite.cache.servers[0]=127.0.0.1:11211", "dendrite.cache.servers[1]=cache-two")
        .run(context -> assertFailureNames(context, "dendrite.cache.servers[1]", "host:port"));
  }

  @Test
  void anUnknownWritePolicyFailsStartUpNamingIt() {
    configured
        .withPropertyValues("dendrite.write-policy=write-sideways")
        .run(context -> assertFailureNames(context, "dendrite.write-policy", "write-sideways"));
  }

  @Test
  void moreReplicasThanServersFailStartUpNamingIt() {
    configured
        .withPropertyValues("dendrite.replicas=3")
        .run(context -> assertFailureNames(context, "dendrite.replicas", "2 cache servers"));
  }

  @Test
  void writeBackWithoutADataStoreFailsStartUpNamingThePolicy() {
    configured
        .withPropertyValues("dendrite.write-policy=write-back")
        .run(context -> assertFailureNames(context, "dendrite.write-policy", "data store"));
  }

  @Test
  void tardisWithWriteBackFailsStartUpNamingTardis() {
    configured
        .withPropertyValues("dendrite.write-policy=write-back", "dendrite.tardis.enabled=true")
        .run(context -> assertFailureNames(context, "dendrite.tardis.enabled", "write-back"));
  }

  @Test
  void zooKeeperWithoutTheCoordinationModuleFailsStartUpNamingIt() {
    configured
        .withClassLoader(new FilteredClassLoader(ManyProcesses.class))
        .withPropertyValues("dendrite.processes.zookeeper=127.0.0.1:2181")
        .run(
            context ->
                assertFailureNames(
                    context, "dendrite.processes.zookeeper", "dendrite-coordination"));
  }

  @Test
  void zooKeeperWithoutForwardingSecurityFailsStartUpNamingIt() {
    configured
        .withPropertyValues(
            "dendrite.processes.zookeeper=127.0.0.1:2181", "spring.application.name=scores")
        .run(
            context ->
                assertFailureNames(
                    context, "dendrite.processes.forwarding-secret-file", "forwarding port"));
  }

  @Test
  void aMongoClientWithoutADatabaseFailsStartUpNamingTheProperty() {
    try (MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + ClosedPort.find())) {
      configured
          .withBean(MongoClient.class, () -> client)
          .run(context -> assertFailureNames(context, "dendrite.store.mongo-database", "database"));
    }
  }

  @Test
  void healthIsDownWhenNoCacheServerAnswers() {
    configured.run(
        context -> {
          var health = context.getBean(DendriteHealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(Status.DOWN);
          assertThat(health.getDetails().get("servers").toString()).contains("unreachable");
        });
  }

  @Test
  void thePropertiesHaveMetadataForIdeCompletion() throws IOException {
    String metadata;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("generated by spring-boot-configuration-processor").isNotNull();
      metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(metadata)
        .contains(
            "\"dendrite.cache.servers\"",
            "\"dendrite.cache.login.user\"",
            "\"dendrite.cache.tls.trust-store\"",
            "\"dendrite.processes.zookeeper\"",
            "\"dendrite.write-policy\"",
            "\"dendrite.replicas\"",
            "\"dendrite.near-cache.max-size\"",
            "\"dendrite.tardis.enabled\"",
            "\"dendrite.write-back.drain-on-close\"",
            "\"dendrite.health.max-buffered-write-age\"");
  }

  /** Start-up failed, and what Spring Boot reports (the causes' messages) names the property and the reason. */
  private static void assertFailureNames(
      AssertableApplicationContext context, String property, String reason) {
    assertThat(context).hasFailed();
    StringBuilder messages = new StringBuilder();
    for (Throwable cause = context.getStartupFailure(); cause != null; cause = cause.getCause()) {
      messages.append(cause.getMessage()).append('\n');
    }
    assertThat(messages.toString()).contains(property).contains(reason);
  }
}
