@file:JvmName("Mintid")

package io.mintid

import java.util.UUID

/** A new UUIDv7 from the process-wide generator (Java: `Mintid.uuid7()`); see [Uuid7.next]. */
fun uuid7(): UUID = Uuid7.next()

/**
 * The [Fingerprint] of a JSON payload (Java: `Mintid.fingerprint(json)`); see [Fingerprint.ofJson].
 *
 * @throws FingerprintException for invalid JSON, with the byte position.
 */
fun fingerprint(json: String): Fingerprint = Fingerprint.ofJson(json)

/**
 * The [Fingerprint] of a JSON payload given as UTF-8 bytes; see [Fingerprint.ofJson].
 *
 * @throws FingerprintException for invalid JSON or UTF-8, with the byte position.
 */
fun fingerprint(json: ByteArray): Fingerprint = Fingerprint.ofJson(json)

/** This package's version (Java: `Mintid.version()`); every mintid package has the same one. */
fun version(): String = PackageVersion.value

/** The version of the Rust core inside the native library (Java: `Mintid.coreVersion()`). */
fun coreVersion(): String = core { uniffi.mintid_ffi.coreVersion() }

/** Read once from the jar: `version.properties` is written by the Maven build. */
private object PackageVersion {
    val value: String =
        PackageVersion::class.java.getResourceAsStream("/io/mintid/version.properties")
            .let { checkNotNull(it) { "io/mintid/version.properties is missing from the jar" } }
            .use { stream -> java.util.Properties().apply { load(stream) }.getProperty("version") }
}
