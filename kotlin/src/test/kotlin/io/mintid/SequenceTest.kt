package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/**
 * Every UUIDv7 entry point of the process draws from one sequence, and every Snowflake entry
 * point of one generator from one: taken alternately, the IDs strictly increase.
 */
class SequenceTest {
    @Test
    fun everyUuid7EntryPointDrawsFromOneSequence() {
        val made = mutableListOf<String>()
        for (index in 0 until 20_000) {
            when (index % 3) {
                0 -> made += Uuid7.next().toString()
                1 -> made += Uuid7.nextString()
                else -> made += uuid7().toString()
            }
        }
        assertEquals(0, (1 until made.size).count { made[it] <= made[it - 1] }, "steps backwards")
    }

    @Test
    fun everySnowflakeEntryPointOfOneGeneratorDrawsFromOneSequence() {
        val generator = Snowflake.builder(SnowflakeLayout.classic(), 9).build()
        val made = mutableListOf<Long>()
        for (index in 0 until 6_000) {
            when (index % 3) {
                0 -> made += generator.nextId()
                1 -> made += fromBase32(generator.nextBase32())
                else -> made += generator.nextIds(3).asList()
            }
        }
        assertEquals(0, (1 until made.size).count { made[it] <= made[it - 1] }, "steps backwards")
    }

    private fun fromBase32(text: String): Long = Snowflake.fromBase32(text)
}
