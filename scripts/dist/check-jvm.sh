#!/usr/bin/env bash
# Checks the JVM artifacts of `make dist` (mk/dist.mk).
#
#   check-jvm.sh MAVEN_REPO WORK_DIR
#
# 1. io.mintid:mintid:VERSION in MAVEN_REPO has the jar, -sources.jar, -javadoc.jar and pom.
# 2. The jar carries linux-x86-64/ and linux-aarch64/ libraries of the right ELF machine,
#    the licenses and version.properties; the pom has what Maven Central requires.
# 3. `mvn verify` of examples/jvm-consumer against MAVEN_REPO, in a fresh local repository
#    (so io.mintid comes from the dist, nothing else).
# 4. Without this platform's library in the jar, the consumer fails with the error that
#    names the platform (UnsupportedPlatformException).
# 5. io.mintid:mintid-spring-boot-starter:VERSION: jar, -sources.jar, -javadoc.jar and pom, the
#    auto-configuration, migrations and licenses in the jar, the pom's Central metadata; then
#    `mvn verify` of examples/spring-consumer (a Spring Boot application on it, its test sends one
#    request twice) in a fresh local repository where io.mintid comes from MAVEN_REPO and
#    everything else from the machine's local repository, else Central (Spring Boot is not
#    downloaded again).
set -euo pipefail

repo=$(realpath "$1")
work=$2
version=$(python3 "$(dirname "$0")/version.py" show)
base=$repo/io/mintid/mintid/$version/mintid-$version
rm -rf "$work" && mkdir -p "$work"

# The four files Central wants of the artifact at $1 (its path without the extension): the
# jar, -sources.jar, -javadoc.jar (with an index.html) and pom.
release_files() {
  local file
  for file in "$1.jar" "$1-sources.jar" "$1-javadoc.jar" "$1.pom"; do
    [ -s "$file" ] || { echo "missing: $file"; exit 1; }
    echo "   $(basename "$file") $(stat -c %s "$file") B"
  done
  grep -q 'index.html' <(unzip -l "$1-javadoc.jar") || { echo "$1-javadoc.jar has no index.html"; exit 1; }
}

release_files "$base"
grep -q 'io/mintid/Snowflake.kt' <(unzip -l "$base-sources.jar") || { echo "-sources.jar lacks io/mintid/Snowflake.kt"; exit 1; }
grep -q 'uniffi/mintid_ffi/mintid_ffi.kt' <(unzip -l "$base-sources.jar") || { echo "-sources.jar lacks the uniffi sources"; exit 1; }

unzip -q "$base.jar" -d "$work/jar"
declare -A machine=([linux-x86-64]="Advanced Micro Devices X86-64" [linux-aarch64]="AArch64")
for platform in linux-x86-64 linux-aarch64; do
  library=$work/jar/$platform/libmintid_ffi.so
  [ -f "$library" ] || { echo "the jar has no $platform/libmintid_ffi.so"; exit 1; }
  grep -q "Machine: *${machine[$platform]}" <(readelf -h "$library") || { echo "$platform/libmintid_ffi.so: wrong machine"; exit 1; }
  nm -D --defined-only "$library" > "$work/symbols-$platform.txt"
  grep -qw uniffi_mintid_ffi_fn_func_core_version "$work/symbols-$platform.txt"
  echo "   jar: $platform/libmintid_ffi.so (${machine[$platform]}, $(stat -c %s "$library") B)"
done
for file in META-INF/LICENSE-MIT META-INF/LICENSE-APACHE io/mintid/version.properties; do
  [ -f "$work/jar/$file" ] || { echo "the jar has no $file"; exit 1; }
done
grep -qx "version=$version" "$work/jar/io/mintid/version.properties"

central_metadata() {
python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET

ns = {"m": "http://maven.apache.org/POM/4.0.0"}
pom = ET.parse(sys.argv[1]).getroot()
required = ["name", "description", "url", "licenses/m:license/m:name", "licenses/m:license/m:url",
            "developers/m:developer/m:name", "scm/m:url", "scm/m:connection", "scm/m:developerConnection"]
missing = [path for path in required if not (pom.findtext("m:" + path, namespaces=ns) or "").strip()]
if missing:
    sys.exit(f"the pom lacks what Maven Central requires: {', '.join(missing)}")
if "example.invalid" in open(sys.argv[1]).read():
    sys.exit("the pom still names example.invalid")
print("   pom: name, description, url, licenses, developers, scm present")
PY
}
central_metadata "$base.pom"

# Maven settings at $1 whose repositories are MAVEN_REPO, then the folders of the other
# arguments (for plugins too), then Central.
write_settings() {
  local file=$1 index=0 url
  shift
  {
    echo "<settings><profiles><profile><id>mintid-dist</id><repositories>"
    for url in "$repo" "$@"; do
      echo "<repository><id>local-$((index++))</id><url>file://$url</url></repository>"
    done
    echo "</repositories><pluginRepositories>"
    for url in "$@"; do
      echo "<pluginRepository><id>local-$((index++))</id><url>file://$url</url></pluginRepository>"
    done
    echo "</pluginRepositories></profile></profiles>"
    echo "<activeProfiles><activeProfile>mintid-dist</activeProfile></activeProfiles></settings>"
  } > "$file"
}

echo "== mvn verify of examples/jvm-consumer against the dist repository"
settings=$work/settings.xml
write_settings "$settings"
${MVN:-mvn} -B --no-transfer-progress -q -s "$settings" -Dmaven.repo.local="$work/m2" \
  -f examples/jvm-consumer/pom.xml verify
resolved=$work/m2/io/mintid/mintid/$version/mintid-$version.jar
cmp -s "$resolved" "$base.jar" || { echo "the consumer did not use the dist jar"; exit 1; }

echo "== a platform the jar does not carry: the error names it"
python3 - "$base.jar" "$work/no-x86-64.jar" <<'PY'
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as source, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as target:
    for item in source.infolist():
        if not item.filename.startswith("linux-x86-64/"):
            target.writestr(item, source.read(item.filename))
PY
classpath=$work/no-x86-64.jar:kotlin/target/jvm-consumer/classes
for jar in $(find "$work/m2/net/java/dev/jna/jna" "$work/m2/org/jetbrains/kotlin/kotlin-stdlib" -name '*.jar'); do
  classpath=$classpath:$jar
done
if java -cp "$classpath" example.Consumer > "$work/unsupported.txt" 2>&1; then
  echo "the consumer ran without this platform's library"; exit 1
fi
grep -m1 'UnsupportedPlatformException' "$work/unsupported.txt"
grep -q 'no native library for this platform: linux-x86-64 .*this jar carries: linux-aarch64' "$work/unsupported.txt" \
  || { echo "the error does not name the platform:"; cat "$work/unsupported.txt"; exit 1; }
echo "== io.mintid:mintid-spring-boot-starter"
starter=$repo/io/mintid/mintid-spring-boot-starter/$version/mintid-spring-boot-starter-$version
release_files "$starter"
grep -q 'io/mintid/spring/Idempotent.java' <(unzip -l "$starter-sources.jar") || { echo "-sources.jar lacks io/mintid/spring/Idempotent.java"; exit 1; }
unzip -l "$starter.jar" > "$work/starter-files.txt"
for file in META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports \
  META-INF/spring-configuration-metadata.json META-INF/LICENSE-MIT META-INF/LICENSE-APACHE \
  db/migration/mintid/postgres/V1__ db/changelog/mintid/postgres.xml io/mintid/spring/IdempotencyFilter.class; do
  grep -q "$file" "$work/starter-files.txt" || { echo "the starter jar has no $file"; exit 1; }
done
central_metadata "$starter.pom"

echo "== mvn verify of examples/spring-consumer against the dist repository"
# The machine's local repository (Maven's default), read as one more remote; Central stays last.
write_settings "$work/settings-spring.xml" "$HOME/.m2/repository"
${MVN:-mvn} -B --no-transfer-progress -q -s "$work/settings-spring.xml" -Dmaven.repo.local="$work/m2-spring" \
  -f examples/spring-consumer/pom.xml verify
for artifact in mintid/$version/mintid-$version mintid-spring-boot-starter/$version/mintid-spring-boot-starter-$version; do
  cmp -s "$work/m2-spring/io/mintid/$artifact.jar" "$repo/io/mintid/$artifact.jar" \
    || { echo "the Spring consumer did not use the dist's $artifact.jar"; exit 1; }
done
echo "jvm artifacts: ok"
