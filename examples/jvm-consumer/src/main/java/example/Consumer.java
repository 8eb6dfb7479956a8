package example;

import io.mintid.Base32;

/** Uses mintid from its jar alone and fails loudly if anything is off. */
public final class Consumer {
    private Consumer() {}

    public static void main(String[] args) {
        if (System.getProperty("jna.library.path") != null) {
            throw new IllegalStateException("the packaging proof must run without jna.library.path");
        }
        String encoded = Base32.encode(-1L);
        if (!encoded.equals("FZZZZZZZZZZZZ")) {
            throw new IllegalStateException("unexpected base32: " + encoded);
        }
        System.out.println("jvm-consumer: io.mintid:mintid loaded from the local repository: " + encoded);
    }
}
