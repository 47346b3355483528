package io.dendrite.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The BOM names every published artifact of the build, at the build's version: a module added to the reactor and
 * published must be added there too, or an application importing the BOM cannot leave its version out. Read from
 * the poms as text (they are in this checkout: the tests run from the module's directory).
 */
class BomTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Pattern ARTIFACT = Pattern.compile("<artifactId>([^<]+)</artifactId>");
  private static final Pattern VERSION = Pattern.compile("<version>([^<]+)</version>");

  @Test
  void theBomListsEveryPublishedModuleAtTheBuildsVersion() throws IOException {
    String root = Files.readString(ROOT.resolve("pom.xml"));
    List<String> published = new ArrayList<>();
    Matcher module = MODULE.matcher(root);
    while (module.find()) {
      String pom = Files.readString(ROOT.resolve(module.group(1)).resolve("pom.xml"));
      if (!module.group(1).equals("dendrite-bom") && !pom.contains("<maven.deploy.skip>true")) {
        published.add(ownArtifactId(pom));
      }
    }
    String bom = Files.readString(ROOT.resolve("dendrite-bom/pom.xml"));
    String managed =
        bom.substring(
            bom.indexOf("<dependencyManagement>"), bom.indexOf("</dependencyManagement>"));
    List<String> listed = new ArrayList<>();
    Matcher artifact = ARTIFACT.matcher(managed);
    while (artifact.find()) {
      listed.add(artifact.group(1));
    }
    assertThat(published).as("published modules").contains("dendrite-core", "iq-client");
    assertThat(listed).containsExactlyInAnyOrderElementsOf(published);
    assertThat(firstVersion(bom))
        .isEqualTo(firstVersion(root.substring(root.indexOf("<artifactId>"))));
  }

  /** The module's own artifactId: the first one after its parent block. */
  private static String ownArtifactId(String pom) {
    int afterParent = pom.contains("</parent>") ? pom.indexOf("</parent>") : 0;
    Matcher artifact = ARTIFACT.matcher(pom.substring(afterParent));
    assertThat(artifact.find()).isTrue();
    return artifact.group(1);
  }

  private static String firstVersion(String pom) {
    String own = pom.contains("</parent>") ? pom.substring(pom.indexOf("</parent>")) : pom;
    Matcher version = VERSION.matcher(own);
    assertThat(version.find()).isTrue();
    return version.group(1);
  }
}
