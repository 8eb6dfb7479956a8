package io.mintid.spring;

/**
 * The application cannot serve mintid's requests as configured (no scope for its {@link
 * Idempotent} methods, no schema in its database): thrown while the application starts, so that
 * it stops there instead of failing every request. {@link MintidFailureAnalyzer} prints the
 * {@link #description()} and the {@link #action()} that fixes it.
 */
public class MintidStartupException extends IllegalStateException {
    private final String description;
    private final String action;

    /** What is missing ({@code description}) and how to fix it ({@code action}). */
    public MintidStartupException(String description, String action, Throwable cause) {
        super(description + " " + action, cause);
        this.description = description;
        this.action = action;
    }

    /** What is missing. */
    public String description() {
        return description;
    }

    /** How to fix it: the bean to declare, the property to set, the call to make. */
    public String action() {
        return action;
    }
}
