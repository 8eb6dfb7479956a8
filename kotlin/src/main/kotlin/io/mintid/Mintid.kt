@file:JvmName("Mintid")

package io.mintid

import java.util.UUID

/** A new UUIDv7 from the process-wide generator (Java: `Mintid.uuid7()`); see [Uuid7.next]. */
fun uuid7(): UUID = Uuid7.next()

/**
 * The [Fingerprint] of a parsed value (Java: `Mintid.fingerprint(value)`); see [Fingerprint.of].
 * JSON text is never parsed here: pass it to [fingerprintJson].
 *
 * @throws FingerprintException `fingerprint.string_value` for a value that is one string,
 *   `fingerprint.invalid_json` for one JSON cannot represent.
 */
fun fingerprint(value: Any?): Fingerprint = Fingerprint.of(value)

/**
 * The [Fingerprint] of a JSON text (Java: `Mintid.fingerprintJson(text)`); see [Fingerprint.ofJson].
 *
 * @throws FingerprintException for invalid JSON, with the byte position.
 */
fun fingerprintJson(text: String): Fingerprint = Fingerprint.ofJson(text)

/**
 * The [Fingerprint] of a JSON text given as UTF-8 bytes; see [Fingerprint.ofJson].
 *
 * @throws FingerprintException for invalid JSON or UTF-8, with the byte position.
 */
fun fingerprintJson(text: ByteArray): Fingerprint = Fingerprint.ofJson(text)

/** The [Fingerprint] of a raw, non-JSON body (Java: `Mintid.fingerprintBytes(raw)`); see [Fingerprint.ofBytes]. */
fun fingerprintBytes(raw: ByteArray): Fingerprint = Fingerprint.ofBytes(raw)

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
