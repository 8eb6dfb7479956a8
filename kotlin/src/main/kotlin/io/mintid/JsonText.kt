package io.mintid

import java.math.BigDecimal
import java.math.BigInteger

/**
 * Writes a parsed JSON value of the JVM as JSON text for the core, which parses and
 * canonicalises it (RFC 8785): maps with string keys, lists and arrays of objects, strings,
 * numbers, booleans and null. Strings are written with every surrogate escaped, so a lone
 * surrogate reaches the core (which refuses it, `fingerprint.lone_surrogate`) instead of being
 * replaced by the UTF-8 encoder.
 */
internal object JsonText {
    /**
     * The JSON text of [value].
     *
     * @throws FingerprintException `fingerprint.invalid_json` for a value JSON cannot represent.
     */
    fun of(value: Any?): ByteArray = StringBuilder().also { write(value, "the value", it) }.toString().toByteArray(Charsets.UTF_8)

    private fun refuse(detail: String): Nothing = throw FingerprintException("fingerprint.invalid_json", detail, null, null)

    private fun write(
        value: Any?,
        where: String,
        out: StringBuilder,
    ) {
        when (value) {
            null -> out.append("null")
            is Boolean -> out.append(value)
            is String -> string(value, out)
            is Int, is Long, is Short, is Byte, is BigInteger -> out.append(value)
            is Double -> finite(value.isFinite(), value, where, out)
            is Float -> finite(value.isFinite(), value, where, out)
            is BigDecimal -> out.append(value.toString())
            is Map<*, *> -> {
                out.append('{')
                value.entries.forEachIndexed { i, (key, member) ->
                    if (key !is String) refuse("$where has a key $key that is not a String")
                    if (i > 0) out.append(',')
                    string(key, out)
                    out.append(':')
                    write(member, "the member \"$key\"", out)
                }
                out.append('}')
            }
            is ByteArray -> refuse("$where is bytes; pass JSON text to fingerprintJson or a raw body to fingerprintBytes")
            is Iterable<*> -> array(value.iterator(), where, out)
            is Array<*> -> array(value.iterator(), where, out)
            else -> refuse("$where is a ${value::class.java.name}, which JSON cannot represent")
        }
    }

    private fun finite(
        isFinite: Boolean,
        value: Number,
        where: String,
        out: StringBuilder,
    ) {
        if (!isFinite) refuse("$where is $value, which JSON cannot represent")
        out.append(value)
    }

    private fun array(
        items: Iterator<*>,
        where: String,
        out: StringBuilder,
    ) {
        out.append('[')
        var first = true
        for (item in items) {
            if (!first) out.append(',')
            first = false
            write(item, "an item of $where", out)
        }
        out.append(']')
    }

    private fun string(
        text: String,
        out: StringBuilder,
    ) {
        out.append('"')
        for (c in text) {
            when {
                c == '"' -> out.append("\\\"")
                c == '\\' -> out.append("\\\\")
                c < ' ' || c.isSurrogate() -> out.append("\\u").append(String.format("%04x", c.code))
                else -> out.append(c)
            }
        }
        out.append('"')
    }
}
