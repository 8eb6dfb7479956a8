// The Kotlin party: KotlinParty.java on the io.mintid:mintid jar installed by `make
// test-kotlin` (with kotlin-stdlib, JNA and sqlite-jdbc for its store), one JVM.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { lineParty } from "./lines.mjs";

const MAVEN_REPO = process.env.MINTID_MAVEN_REPO ?? join(homedir(), ".m2/repository");

/** The class path of io.mintid:mintid as installed by `make test-kotlin`: the jar and its dependencies. */
function kotlinClassPath() {
  const jar = (group, artifact, version) => join(MAVEN_REPO, ...group.split("."), artifact, version, `${artifact}-${version}.jar`);
  const pom = readFileSync(join(MAVEN_REPO, "io/mintid/mintid/0.1.0/mintid-0.1.0.pom"), "utf8");
  const property = (name) => new RegExp(`<${name}>([^<]+)</${name}>`).exec(pom)?.[1];
  const sqliteJdbc = /<artifactId>sqlite-jdbc<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(pom)?.[1];
  const jars = [
    jar("io.mintid", "mintid", "0.1.0"),
    jar("org.jetbrains.kotlin", "kotlin-stdlib", property("kotlin.version")),
    jar("net.java.dev.jna", "jna", property("jna.version")),
    jar("org.xerial", "sqlite-jdbc", sqliteJdbc),
  ];
  for (const path of jars) assert.ok(existsSync(path), `${path} is missing: run make test-kotlin`);
  return jars.join(":");
}

/** Starts the Kotlin party. */
export function kotlinParty() {
  const source = fileURLToPath(new URL("KotlinParty.java", import.meta.url));
  return lineParty("Kotlin", "java", ["-cp", kotlinClassPath(), source]);
}
