// The Kotlin party of the cross-language matrix (see tests/cross/README.md): the
// io.mintid:mintid jar installed by `make test-kotlin`, called from one JVM (this file runs
// with the single-file source launcher, so no build step). Reads commands from stdin, one a
// line, tab-separated, and answers each with one line: `key ID HEX` (`ok`),
// `issue SCOPE EXPIRES_MS` (`ok GRANT`), `mint GRANT N` (`ok ID...`),
// `verify SCOPE ID` (`ok UUID` or `err CODE`).

import io.mintid.Grant;
import io.mintid.KeyRing;
import io.mintid.MintidException;
import io.mintid.RequestId;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

public final class KotlinParty {
    private KotlinParty() {}

    public static void main(String[] argv) throws Exception {
        var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        KeyRing ring = null;
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
