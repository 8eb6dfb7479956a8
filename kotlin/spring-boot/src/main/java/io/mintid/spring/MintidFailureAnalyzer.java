package io.mintid.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Spring Boot's report of a {@link MintidStartupException}: "APPLICATION FAILED TO START", what is
 * missing, and the action that fixes it, instead of a stack trace.
 */
public class MintidFailureAnalyzer extends AbstractFailureAnalyzer<MintidStartupException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, MintidStartupException cause) {
        return new FailureAnalysis(cause.description(), cause.action(), cause);
    }
}
