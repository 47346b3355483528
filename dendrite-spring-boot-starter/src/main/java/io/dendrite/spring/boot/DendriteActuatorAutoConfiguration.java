package io.dendrite.spring.boot;

import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.autoconfigure.info.ConditionalOnEnabledInfoContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Dendrite in Actuator: the health indicator {@code dendrite} ({@link DendriteHealthIndicator}; {@code
 * management.health.dendrite.enabled}) and the info contributor ({@link DendriteInfoContributor}; {@code
 * management.info.dendrite.enabled}).
 */
@AutoConfiguration(after = DendriteAutoConfiguration.class)
@ConditionalOnClass(
    name = {
      "org.springframework.boot.actuate.health.HealthIndicator",
      "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"
    })
@ConditionalOnBean(Dendrites.class)
public class DendriteActuatorAutoConfiguration {

  @Bean
  @ConditionalOnEnabledHealthIndicator("dendrite")
  @ConditionalOnMissingBean(name = "dendriteHealthIndicator")
  DendriteHealthIndicator dendriteHealthIndicator(
      Dendrites dendrites, DendriteProperties properties) {
    return new DendriteHealthIndicator(dendrites, properties.health().maxBufferedWriteAge());
  }

  @Bean
  @ConditionalOnEnabledInfoContributor("dendrite")
  @ConditionalOnMissingBean(name = "dendriteInfoContributor")
  DendriteInfoContributor dendriteInfoContributor(Dendrites dendrites) {
    return new DendriteInfoContributor(dendrites);
  }
}
