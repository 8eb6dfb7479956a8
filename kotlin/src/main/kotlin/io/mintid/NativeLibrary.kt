package io.mintid

import com.sun.jna.Platform

/**
 * The first call into mintid found no native library for this JVM's platform: neither in the
 * jar (under JNA's resource folder for the platform, e.g. `linux-aarch64/`) nor on
 * `jna.library.path`. The message names the platform and the ones the jar carries.
 *
 * It is an [UnsatisfiedLinkError], like JNA's own failure that it replaces (kept as [cause]).
 */
class UnsupportedPlatformException internal constructor(message: String, cause: Throwable) :
    UnsatisfiedLinkError(message) {
        init {
            initCause(cause)
        }
    }

/** Where the native library of each platform lives in the jar, and what to say when none fits. */
internal object NativeLibrary {
    private const val FILE = "libmintid_ffi.so"

    /** The platforms a mintid jar can carry, as JNA names their resource folders. */
    private val KNOWN = listOf("linux-x86-64", "linux-aarch64")

    /** The platforms whose native library is on this class path. */
    fun carried(): List<String> =
        KNOWN.filter { NativeLibrary::class.java.classLoader.getResource("$it/$FILE") != null }

    /** [error] itself, or an [UnsupportedPlatformException] when it means the library is missing. */
    fun explain(error: LinkageError): Throwable {
        val missing = generateSequence(error as Throwable) { it.cause }
            .any { it is UnsatisfiedLinkError && it.message.orEmpty().contains("mintid_ffi") }
        if (!missing || error is UnsupportedPlatformException) return error
        val platform = Platform.RESOURCE_PREFIX
        val carried = carried().ifEmpty { listOf("none") }.joinToString(", ")
        return UnsupportedPlatformException(
            "mintid has no native library for this platform: $platform " +
                "(os.name=${System.getProperty("os.name")}, os.arch=${System.getProperty("os.arch")}); " +
                "this jar carries: $carried. Run on one of those, or build bindings/ffi for $platform " +
                "and pass its directory with -Djna.library.path.",
            error,
        )
    }
}
