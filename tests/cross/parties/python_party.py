"""The Python party of the cross-language matrix (see tests/cross/README.md).

Reads commands from stdin, one a line, tab-separated, and answers each with
one line: ``key ID HEX`` (``ok``), ``issue SCOPE EXPIRES_MS`` (``ok GRANT``),
``mint GRANT N`` (``ok ID…``), ``verify SCOPE ID`` (``ok UUID`` or
``err CODE``).
"""

import sys

import mintid


def main() -> None:
    ring: mintid.KeyRing | None = None
    for line in sys.stdin:
        command, *args = line.rstrip("\n").split("\t")
        try:
            if command == "key":
                ring = mintid.KeyRing(int(args[0]), bytes.fromhex(args[1]))
                reply = ["ok"]
            elif command == "issue" and ring is not None:
                reply = ["ok", ring.issue_grant(args[0], int(args[1])).text]
            elif command == "mint":
                grant = mintid.Grant.parse(args[0])
                reply = ["ok", *(grant.mint().text for _ in range(int(args[1])))]
            elif command == "verify" and ring is not None:
                reply = ["ok", str(mintid.RequestId.verify(args[1], ring, args[0]))]
            else:
                reply = ["err", f"party.unknown_command:{command}"]
        except mintid.MintidError as error:
            reply = ["err", error.code]
        print("\t".join(reply), flush=True)


if __name__ == "__main__":
    main()
