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
