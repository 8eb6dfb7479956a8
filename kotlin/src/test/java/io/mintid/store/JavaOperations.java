package io.mintid.store;

/** Operations only Java can write: the conformance runner's `not_a_response` outcome. */
final class JavaOperations {
    private JavaOperations() {}

    /** Runs [sideEffect], then returns null where a response is due (a Java caller's mistake). */
    static Operation returningNull(Runnable sideEffect) {
        return held -> {
            sideEffect.run();
            return null;
        };
    }
}
