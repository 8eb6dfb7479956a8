// The Kotlin party of the cross-language matrix (see tests/cross/README.md): the
// io.mintid:mintid jar installed by `make test-kotlin`, called from one JVM (this file runs
// with the single-file source launcher, so no build step). Reads commands from stdin, one a
// line, tab-separated, and answers each with one line: `key ID HEX` (`ok`),
// `issue SCOPE EXPIRES_MS` (`ok GRANT`), `mint GRANT N` (`ok ID...`),
// `verify SCOPE ID` (`ok UUID` or `err CODE`). For replay.test.mjs: `store PATH` (`ok`: from
// now on its records live in that SQLite file, through sqlite-jdbc) and `post SCOPE KEY JSON`
// (a `POST /orders` with that `Idempotency-Key` through `HttpIdempotency` on that store:
// `ok STATUS REPLAYED LOCATION BODY`).

import io.mintid.Grant;
import io.mintid.KeyRing;
import io.mintid.MintidException;
import io.mintid.RecordPolicy;
import io.mintid.RequestId;
import io.mintid.http.HttpAnswer;
import io.mintid.http.HttpIdempotency;
import io.mintid.http.HttpRequestView;
import io.mintid.store.Dialect;
import io.mintid.store.IdempotencyStore;
import io.mintid.store.Migrations;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import kotlin.Pair;
import org.sqlite.SQLiteDataSource;

public final class KotlinParty {
    private KotlinParty() {}

    private static int orders;

    /** The idempotency rules over the records in the SQLite file at [path]. */
    private static HttpIdempotency<Void> orders(String path) {
        var source = new SQLiteDataSource();
        source.setUrl("jdbc:sqlite:" + path);
        source.setBusyTimeout(10_000);
        Migrations.migrate(source, Dialect.SQLITE);
        var store = new IdempotencyStore(source, Dialect.SQLITE, RecordPolicy.DEFAULT);
        return HttpIdempotency.<Void>builder(store, request -> request.header("x-scope")).build();
    }

    /** `POST /orders` through [http]: status, replay marker, location and body. */
    private static String post(HttpIdempotency<Void> http, String scope, String key, String json) throws Exception {
        Map<String, String> headers = Map.of(
            "x-scope", scope, "idempotency-key", key, "content-type", "application/json");
        var request = new HttpRequestView<Void>() {
            @Override public String getMethod() { return "POST"; }
            @Override public String getPath() { return "/orders"; }
            @Override public String getQuery() { return ""; }
            @Override public String header(String name) { return headers.get(name.toLowerCase()); }
            @Override public Void getRaw() { return null; }
        };
        var body = json.getBytes(StandardCharsets.UTF_8);
        HttpAnswer answer = http.handle(request, new ByteArrayInputStream(body), (view, in) -> {
            orders += 1;
            var placed = "{\"order\":" + orders + ",\"by\":\"kotlin\"}";
            return new HttpAnswer(
                201,
                List.of(new Pair<>("content-type", "application/json"), new Pair<>("location", "/orders/kt-" + orders)),
                placed.getBytes(StandardCharsets.UTF_8));
        });
        var replayed = "true".equals(answer.header("idempotent-replayed")) ? "true" : "false";
        var location = answer.header("location") == null ? "" : answer.header("location");
        return String.join("\t", "ok", String.valueOf(answer.getStatus()), replayed, location,
            new String(answer.getBody(), StandardCharsets.UTF_8));
    }

    public static void main(String[] argv) throws Exception {
        var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        KeyRing ring = null;
        HttpIdempotency<Void> http = null;
        for (String line; (line = in.readLine()) != null; ) {
            String[] args = line.split("\t", -1);
            var reply = new StringBuilder();
            try {
                switch (args[0]) {
                    case "key" -> {
                        ring = new KeyRing(Long.parseLong(args[1]), HexFormat.of().parseHex(args[2]));
                        reply.append("ok");
                    }
                    case "issue" -> reply.append("ok\t").append(ring.issueGrant(args[1], Long.parseLong(args[2])).getText());
                    case "mint" -> {
                        Grant grant = Grant.parse(args[1]);
                        reply.append("ok");
                        for (int i = Integer.parseInt(args[2]); i > 0; i--) {
                            reply.append('\t').append(RequestId.mint(grant).getText());
                        }
                    }
                    case "verify" -> reply.append("ok\t").append(RequestId.verify(ring, args[2], args[1]));
                    case "store" -> {
                        http = orders(args[1]);
                        reply.append("ok");
                    }
                    case "post" -> reply.append(post(http, args[1], args[2], args[3]));
                    default -> reply.append("err\tparty.unknown_command:").append(args[0]);
                }
            } catch (MintidException error) {
                reply.setLength(0);
                reply.append("err\t").append(error.getCode());
            }
            System.out.println(reply);
            System.out.flush();
        }
    }
}
