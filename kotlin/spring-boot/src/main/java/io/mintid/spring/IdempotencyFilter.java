package io.mintid.spring;

import io.mintid.http.HttpAnswer;
import io.mintid.http.HttpIdempotency;
import io.mintid.http.HttpRequestView;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import kotlin.Pair;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.ContentCachingRequestWrapper;
import org.springframework.web.util.ContentCachingResponseWrapper;
import org.springframework.web.util.WebUtils;

/**
 * Runs {@link Idempotent} controller methods once per key through the framework-neutral
 * {@link HttpIdempotency} (every rule, refusal and stored answer is its and the core's): the
 * filter only finds out whether the request's handler is {@code @Idempotent}, hands the body to
 * the controller again, captures the controller's response as an {@link HttpAnswer} and writes
 * the answer that comes back. The grant endpoint, when configured, is answered here too.
 */
public class IdempotencyFilter extends OncePerRequestFilter {
    private static final String COVERED = IdempotencyFilter.class.getName() + ".covered";

    private final HttpIdempotency<HttpServletRequest> idempotency;

    /**
     * A filter over {@code idempotency}, whose route predicate is usually
     * {@link #idempotentHandlers(List)}.
     */
    public IdempotencyFilter(HttpIdempotency<HttpServletRequest> idempotency) {
        this.idempotency = idempotency;
    }

    /**
     * The route predicate of {@code @Idempotent} handlers: whether the handler one of {@code
     * mappings} finds for the request is a controller method annotated (or of an annotated
     * controller). Looked up once per request.
     */
    public static io.mintid.http.RoutePredicate<HttpServletRequest> idempotentHandlers(List<HandlerMapping> mappings) {
        return view -> {
            HttpServletRequest request = view.getRaw();
            Object known = request.getAttribute(COVERED);
            if (known instanceof Boolean covered) {
                return covered;
            }
            boolean covered = annotated(mappings, request);
            request.setAttribute(COVERED, covered);
            return covered;
        };
    }

    private static boolean annotated(List<HandlerMapping> mappings, HttpServletRequest request) {
        Object previous = request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
        ServletRequestPathUtils.parseAndCache(request);
        try {
            for (HandlerMapping mapping : mappings) {
                HandlerExecutionChain chain;
                try {
                    chain = mapping.getHandler(request);
                } catch (Exception noMatch) {
                    // A method the route does not take, and the like: the dispatcher answers it.
                    return false;
                }
                if (chain != null) {
                    return chain.getHandler() instanceof HandlerMethod method
                            && (method.hasMethodAnnotation(Idempotent.class)
                                    || AnnotatedElementUtils.hasAnnotation(method.getBeanType(), Idempotent.class));
                }
            }
            return false;
        } finally {
            request.setAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE, previous);
        }
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        View view = new View(request, false);
        HttpAnswer grant = idempotency.grant(view);
        if (grant != null) {
            write(grant, response);
            return;
        }
        if (!idempotency.covers(view)) {
            chain.doFilter(request, response);
            return;
        }
        Body body = Body.of(request);
        HttpAnswer answer = idempotency.handle(new View(request, body.ended()), body.input(), (covered, read) -> run(chain, request, response, read));
        write(answer, response);
    }

    /**
     * The remedy when a filter read the body before this one ({@code http.body_consumed}).
     */
    static final String BODY_FIX = "a filter before mintid's IdempotencyFilter read the request body (Spring's FormContentFilter does "
            + "for form bodies of PUT, PATCH and DELETE: set spring.mvc.formcontent.filter.enabled=false, or send such "
            + "requests as JSON); order that filter after this one, or wrap the request in a ContentCachingRequestWrapper "
            + "before it reads the body so that this filter finds the bytes it kept";

    /**
     * The body as this filter finds it: the request's stream, or, when another filter read it
     * first, the bytes a {@link ContentCachingRequestWrapper} kept of it (else the stream, marked
     * {@code ended}, for the core to refuse with {@code http.body_consumed}).
     */
    private record Body(InputStream input, boolean ended) {
        static Body of(HttpServletRequest request) throws IOException {
            ServletInputStream stream;
            try {
                stream = request.getInputStream();
            } catch (IllegalStateException readerTaken) {
                // getReader() was called before: the body went to another reader.
                return kept(request, new Body(InputStream.nullInputStream(), true));
            }
            return stream.isFinished() ? kept(request, new Body(stream, true)) : new Body(stream, false);
        }

        private static Body kept(HttpServletRequest request, Body gone) {
            ContentCachingRequestWrapper caching = WebUtils.getNativeRequest(request, ContentCachingRequestWrapper.class);
            if (caching != null) {
                byte[] cached = caching.getContentAsByteArray();
                if (cached.length == request.getContentLengthLong()) {
                    return new Body(new ByteArrayInputStream(cached), false);
                }
            }
            return gone;
        }
    }

    /** Runs the controller on the read body and captures what it answered. */
    private static HttpAnswer run(FilterChain chain, HttpServletRequest request, HttpServletResponse response, InputStream body)
            throws IOException {
        ContentCachingResponseWrapper capture = new ContentCachingResponseWrapper(response);
        try {
            chain.doFilter(new BodyRequest(request, body.readAllBytes()), capture);
        } catch (ServletException error) {
            throw new ControllerFailure(error);
        }
        List<Pair<String, String>> headers = new ArrayList<>();
        String contentType = capture.getContentType();
        if (contentType != null) {
            headers.add(new Pair<>("content-type", contentType));
        }
        for (String name : capture.getHeaderNames()) {
            if (!name.equalsIgnoreCase("content-type") && !name.equalsIgnoreCase("content-length")) {
                for (String value : capture.getHeaders(name)) {
                    headers.add(new Pair<>(name.toLowerCase(java.util.Locale.ROOT), value));
                }
            }
        }
        return new HttpAnswer(capture.getStatus(), headers, capture.getContentAsByteArray());
    }

    /** Sends {@code answer} in place of anything written so far. */
    private static void write(HttpAnswer answer, HttpServletResponse response) throws IOException {
        response.reset();
        response.setStatus(answer.getStatus());
        for (Pair<String, String> header : answer.getHeaders()) {
            if (header.getFirst().equalsIgnoreCase("content-type")) {
                response.setContentType(header.getSecond());
            } else {
                response.addHeader(header.getFirst(), header.getSecond());
            }
        }
        byte[] body = answer.getBody();
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        response.flushBuffer();
    }

    /** A controller's exception the servlet container would have seen: answered 500 by the wrapper. */
    static final class ControllerFailure extends RuntimeException {
        ControllerFailure(ServletException cause) {
            super(cause.getMessage(), cause.getRootCause() == null ? cause : cause.getRootCause());
        }
    }

    /**
     * The request as the neutral wrapper sees it: the full path, context path included; {@code
     * ended} when its body stream had ended before this filter read it.
     */
    private record View(HttpServletRequest raw, boolean ended) implements HttpRequestView<HttpServletRequest> {
        @Override
        public String getMethod() {
            return raw.getMethod();
        }

        @Override
        public String getPath() {
            return raw.getRequestURI();
        }

        @Override
        public String getQuery() {
            String query = raw.getQueryString();
            return query == null ? "" : query;
        }

        @Override
        public String header(String name) {
            List<String> values = Collections.list(raw.getHeaders(name));
            return values.isEmpty() ? null : String.join(", ", values);
        }

        @Override
        public HttpServletRequest getRaw() {
            return raw;
        }

        @Override
        public Long getDeclaredLength() {
            long length = raw.getContentLengthLong();
            return length < 0 ? null : length;
        }

        @Override
        public boolean getBodyEndedBeforeRead() {
            return ended;
        }

        @Override
        public String getBodyConsumedFix() {
            return BODY_FIX;
        }
    }

    /** The request with its body, already read by the wrapper, readable again. */
    private static final class BodyRequest extends HttpServletRequestWrapper {
        private final byte[] body;

        BodyRequest(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream input = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public int read() {
                    return input.read();
                }

                @Override
                public int read(byte[] into, int offset, int length) {
                    return input.read(into, offset, length);
                }

                @Override
                public boolean isFinished() {
                    return input.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("the body is read already");
                }
            };
        }

        @Override
        public java.io.BufferedReader getReader() {
            String encoding = getCharacterEncoding() == null ? "UTF-8" : getCharacterEncoding();
            return new java.io.BufferedReader(new java.io.InputStreamReader(getInputStream(), java.nio.charset.Charset.forName(encoding)));
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }
    }
}
