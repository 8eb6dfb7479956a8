package io.mintid.spring;

import io.mintid.IdempotencyHttp;
import io.mintid.Problem;
import io.mintid.store.InProgress;
import io.mintid.store.NotExecuted;
import java.net.URI;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * The core's problem documents as Spring's {@link ProblemDetail}: the same {@code type},
 * {@code title}, {@code status} and {@code detail} every mintid host sends (the core's registry
 * gives them), for the answers an application writes itself, e.g. after
 * {@link TransactionalIdempotency#run} refused a request. {@code @Idempotent} methods need
 * none of this: the filter answers their refusals with the core's documents.
 */
public final class MintidProblems {
    private MintidProblems() {}

    /** The problem document of {@code problem}, with an optional {@code detail}. */
    public static ProblemDetail of(Problem problem, String detail) {
        ProblemDetail document = ProblemDetail.forStatus(problem.getStatus());
        document.setType(URI.create(problem.getTypeUri()));
        document.setTitle(problem.getTitle());
        document.setDetail(detail);
        return document;
    }

    /**
     * The answer to a refused request ({@code in_progress}, {@code fingerprint_mismatch},
     * {@code key_too_old}): its problem document as {@code application/problem+json}, with
     * {@code Retry-After} when another request holds the key.
     *
     * @throws IllegalArgumentException for a replay, which answers with its stored response.
     */
    public static ResponseEntity<ProblemDetail> refusal(NotExecuted refused) {
        Problem problem = refused.getProblem();
        if (problem == null) {
            throw new IllegalArgumentException("a replay is answered with its stored response, not a problem");
        }
        ResponseEntity.BodyBuilder answer =
                ResponseEntity.status(problem.getStatus()).contentType(MediaType.parseMediaType(IdempotencyHttp.INSTANCE.getProblemContentType()));
        if (refused instanceof InProgress waiting) {
            answer.header(IdempotencyHttp.INSTANCE.getRetryAfterHeader(), Long.toString(waiting.getRetryAfterSecs()));
        }
        return answer.body(of(problem, null));
    }
}
