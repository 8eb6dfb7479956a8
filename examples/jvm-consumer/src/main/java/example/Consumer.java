package example;

import io.mintid.Mintid;
import io.mintid.Snowflake;
import io.mintid.SnowflakeLayout;
import java.util.UUID;

/** Uses mintid from its jar alone and fails loudly if anything is off. */
public final class Consumer {
    private Consumer() {}

    public static void main(String[] args) {
        if (System.getProperty("jna.library.path") != null) {
            throw new IllegalStateException("the packaging proof must run without jna.library.path");
        }
        Snowflake ids = Snowflake.builder(SnowflakeLayout.classic(), 1).build();
        long a = ids.nextId();
        long b = ids.nextId();
        UUID uuid = Mintid.uuid7();
        if (!(b > a) || uuid.version() != 7) {
            throw new IllegalStateException("unexpected IDs: " + a + ", " + b + ", " + uuid);
        }
        if (!Mintid.version().equals(Mintid.coreVersion())) {
            throw new IllegalStateException("package " + Mintid.version() + ", core " + Mintid.coreVersion());
        }
        String fingerprint = Mintid.fingerprintJson("{\"b\":2,\"a\":1}").toString();
        System.out.println("jvm-consumer: io.mintid:mintid from the local repository: snowflake " + b
                + ", uuid7 " + uuid + ", " + fingerprint + ", version " + Mintid.version());
    }
}
