package io.dendrite.spring.boot;

import io.dendrite.coordination.ForwardingSecurity;
import io.dendrite.coordination.ManyProcesses;
import io.dendrite.core.Dendrite;
import io.dendrite.core.StoreFence;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.tardis.Tardis;
import io.dendrite.tardis.TardisRanges;
import io.dendrite.tardis.Technique;
import io.dendrite.writeback.WriteBack;
import io.dendrite.writeback.store.DataStore;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

/**
 * Dendrite for a Spring Boot application, on when {@code dendrite.cache.servers} is set: the {@link IqClient} (unless
 * the application declares its own), {@link Dendrites} to build its Dendrites with, the shutdown that closes them,
 * the data store over the application's {@code DataSource} or {@code MongoClient} when a store module is present, and
 * the optional modules' settings: many processes ({@code dendrite.processes.zookeeper}), write-back ({@code
 * dendrite.write-policy=write-back}), TARDIS ({@code dendrite.tardis.enabled}). A module absent from the class path
 * costs nothing; a property that asks for one that is absent fails start-up, naming the property.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.mongo.MongoAutoConfiguration"
    })
@ConditionalOnClass(Dendrite.class)
@Conditional(CacheServersCondition.class)
@EnableConfigurationProperties(DendriteProperties.class)
public class DendriteAutoConfiguration {

  /** The IQ cache client; it connects on first use. */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  IqClient dendriteCacheClient(DendriteProperties properties) {
    return CacheClients.open(properties.cache());
  }

  @Bean
  @ConditionalOnMissingBean
  Dendrites dendrites(
      IqClient cache,
      ObjectProvider<DendriteFeature> features,
      ObjectProvider<DendriteCustomizer> customizers,
      ObjectProvider<DendriteListener> listeners) {
    return new Dendrites(cache, features, customizers, listeners);
  }

  @Bean
  DendriteShutdown dendriteShutdown(Dendrites dendrites) {
    return new DendriteShutdown(dendrites);
  }

  /** The properties, checked as a whole: every setting below takes them from here, so a refusal comes first. */
  @Bean
  CheckedProperties dendriteCheckedProperties(
      DendriteProperties properties, IqClient cache, ResourceLoader classes) {
    SettingsCheck.check(properties, cache.config().servers().size(), classes.getClassLoader());
    return new CheckedProperties(properties);
  }

  /** The write policy and the near cache. */
  @Bean
  @Order(Ordered.HIGHEST_PRECEDENCE)
  DendriteFeature dendriteSettings(CheckedProperties checked) {
    DendriteProperties properties = checked.properties();
    long nearCacheBytes = properties.nearCache().maxSize().toBytes();
    WritePolicy policy = properties.writePolicy();
    return builder -> {
      builder.nearCacheMaxBytes(nearCacheBytes);
      if (policy != WritePolicy.WRITE_BACK) {
        builder.writePolicy(policy);
      }
      return Optional.empty();
    };
  }

  /** The MySQL or MariaDB store over the application's one {@code DataSource} (which it leaves open). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MySqlStore.class)
  @ConditionalOnSingleCandidate(DataSource.class)
  static class MySqlStoreConfiguration {
    @Bean
    @ConditionalOnMissingBean(DataStore.class)
    MySqlStore dendriteStore(DataSource dataSource) {
      return MySqlStore.over(dataSource);
    }
  }

  /** The MongoDB store over the application's one {@code MongoClient} (which it leaves open). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({MongoStore.class, com.mongodb.client.MongoClient.class})
  @ConditionalOnSingleCandidate(com.mongodb.client.MongoClient.class)
  static class MongoStoreConfiguration {
    @Bean
    @ConditionalOnMissingBean(DataStore.class)
    MongoStore dendriteStore(
        com.mongodb.client.MongoClient client,
        DendriteProperties properties,
        Environment environment) {
      String database =
          Optional.ofNullable(properties.store().mongoDatabase())
              .orElse(environment.getProperty("spring.data.mongodb.database"));
      if (database == null) {
        throw PropertyCheck.invalid(
            "dendrite.store.mongo-database",
            null,
            "the MongoDB database of Dendrite's store is required (or spring.data.mongodb.database)");
      }
      return MongoStore.over(client, database);
    }
  }

  /** Many processes over ZooKeeper, when {@code dendrite.processes.zookeeper} is set. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(ManyProcesses.class)
  @ConditionalOnProperty("dendrite.processes.zookeeper")
  static class ManyProcessesConfiguration {
    @Bean
    DendriteFeature dendriteManyProcesses(
        CheckedProperties checked, Environment environment, ObjectProvider<StoreFence> storeFence) {
      DendriteProperties.Processes processes = checked.properties().processes();
      String service =
          Optional.ofNullable(processes.service())
              .orElse(environment.getProperty("spring.application.name"));
      if (service == null) {
        throw PropertyCheck.invalid(
            "dendrite.processes.service",
            null,
            "required with dendrite.processes.zookeeper: the service's name in ZooKeeper, the same in every"
                + " process (default: spring.application.name, not set either)");
      }
      ForwardingSecurity security = forwardingSecurity(processes);
      return builder -> {
        ManyProcesses deployment =
            PropertyCheck.checked(
                "dendrite.processes.ranges",
                processes.ranges(),
                () ->
                    ManyProcesses.overZooKeeper(processes.zookeeper(), service)
                        .ranges(processes.ranges())
                        .sessionTimeout(processes.sessionTimeout())
                        .listen(processes.forwardingHost(), processes.forwardingPort())
                        .forwardingSecurity(security));
        if (processes.zookeeperUser() != null) {
          PropertyCheck.checked(
              "dendrite.processes.zookeeper-user",
              processes.zookeeperUser(),
              () ->
                  deployment.zooKeeperCredentials(
                      processes.zookeeperUser(), processes.zookeeperPassword()));
        }
        storeFence.ifUnique(deployment::storeFence);
        builder.deployment(deployment);
        return Optional.empty();
      };
    }

    private static ForwardingSecurity forwardingSecurity(DendriteProperties.Processes processes) {
      if (processes.forwardingSecretFile() != null) {
        return PropertyCheck.checked(
            "dendrite.processes.forwarding-secret-file",
            processes.forwardingSecretFile(),
            () -> ForwardingSecurity.sharedSecret(processes.forwardingSecretFile()));
      }
      if (processes.forwardingLoopbackOnly()) {
        return ForwardingSecurity.unauthenticatedOnLoopback();
      }
      throw PropertyCheck.invalid(
          "dendrite.processes.forwarding-secret-file",
          null,
          "required with dendrite.processes.zookeeper: anyone who reaches the forwarding port runs the bound"
              + " writes as the owner (or set dendrite.processes.forwarding-loopback-only=true when every"
              + " process runs on this machine)");
    }
  }

  /** Write-back, when {@code dendrite.write-policy=write-back}: each Dendrite gets a {@link WriteBack} of its own. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(WriteBack.class)
  static class WriteBackConfiguration {
    @Bean
    DendriteFeature dendriteWriteBack(CheckedProperties checked, ObjectProvider<DataStore> stores) {
      DendriteProperties properties = checked.properties();
      if (properties.writePolicy() != WritePolicy.WRITE_BACK) {
        return builder -> Optional.empty();
      }
      DataStore store = requireStore(stores, "dendrite.write-policy", "write-back");
      DendriteProperties.WriteBack settings = properties.writeBack();
      return builder -> {
        WriteBack writeBack =
            WriteBack.to(store)
                .engine(
                    engine -> {
                      if (properties.replicas() != null) {
                        engine.replicas(properties.replicas());
                      }
                      return engine
                          .drainDelay(settings.drainDelay())
                          .drainOnClose(settings.drainOnClose());
                    });
        builder.writeBack(writeBack);
        return Optional.of(new WriteBackBuffers(writeBack));
      };
    }

    /** The one data store of the application, or a refusal of {@code property}, which asks for it. */
    static DataStore requireStore(ObjectProvider<DataStore> stores, String property, Object value) {
      DataStore store = stores.getIfUnique();
      if (store == null) {
        throw PropertyCheck.invalid(
            property,
            value,
            "needs one data store: add dendrite-store-mysql and a DataSource, or dendrite-store-mongodb and a"
                + " MongoClient, or declare a DataStore bean");
      }
      return store;
    }
  }

  /** TARDIS, when {@code dendrite.tardis.enabled}: each Dendrite gets a {@link TardisRanges} of its own. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(TardisRanges.class)
  @ConditionalOnProperty("dendrite.tardis.enabled")
  static class TardisConfiguration {
    @Bean
    DendriteFeature dendriteTardis(
        CheckedProperties checked, IqClient cache, ObjectProvider<DataStore> stores) {
      DendriteProperties properties = checked.properties();
      DataStore store =
          WriteBackConfiguration.requireStore(stores, "dendrite.tardis.enabled", true);
      Technique technique =
          PropertyCheck.checked(
              "dendrite.tardis.technique",
              properties.tardis().technique(),
              () -> Technique.valueOf(properties.tardis().technique().toUpperCase(Locale.ROOT)));
      return builder -> {
        Tardis.Builder settings = Tardis.builder().cache(cache).store(store).technique(technique);
        if (properties.replicas() != null) {
          settings.replicas(properties.replicas());
        }
        TardisRanges tardis = TardisRanges.of(settings);
        builder.outageTolerance(tardis);
        return Optional.of(new TardisBuffers(tardis));
      };
    }
  }
}
