package io.mintid

import uniffi.mintid_ffi.base32EncodeU64

/**
 * Crockford base32, the text form mintid uses for 64-bit values (see `docs/spec.md`).
 *
 * Digits are `0-9A-Z` without `I`, `L`, `O` and `U`; a 64-bit value always takes 13 digits.
 */
object Base32 {
    /**
     * Encodes the 64 bits of [value] as 13 Crockford base32 digits.
     *
     * The bits are read as an unsigned number, so a negative `Long` encodes as the unsigned
     * value with the same bits (`-1` gives `FZZZZZZZZZZZZ`).
     */
    @JvmStatic
    fun encode(value: Long): String = base32EncodeU64(value.toULong())
}
