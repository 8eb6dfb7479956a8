// The browser party: headless Chromium loads a localhost page that mints with
// the package's browser build and, for the issuer and verifier roles only,
// holds the key in the full build (`mintid/full`). Real browsers never hold a
// server secret: this is an interoperability check of the wasm core in a browser.
import { fileURLToPath } from "node:url";
import { openPage } from "../../../js/test-support/chromium.mjs";
import { startServer } from "../../../js/test-support/server.mjs";

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>mintid cross-language party</title>
<link rel="icon" href="data:,">
<script type="module">
  import { mintRequestId, MintidError as BrowserError } from "/pkg/dist/browser/browser.js";
  import { KeyRing, MintidError as FullError } from "/pkg/dist/full/web.js";
  let ring;
  const bytes = (hex) => Uint8Array.from(hex.match(/../g), (pair) => parseInt(pair, 16));
  const answer = ([command, ...args]) => {
    try {
      switch (command) {
        case "key":
          ring = new KeyRing({ id: Number(args[0]), secret: bytes(args[1]) });
          return ["ok"];
        case "issue":
          return ["ok", ring.issueGrant(args[0], BigInt(args[1])).text];
        case "mint":
          return ["ok", ...Array.from({ length: Number(args[1]) }, () => mintRequestId(args[0]))];
        case "verify":
          return ["ok", ring.verify(args[1], args[0])];
        default:
          return ["err", "party.unknown_command:" + command];
      }
    } catch (error) {
      if (error instanceof BrowserError || error instanceof FullError) return ["err", error.code];
      throw error;
    }
  };
  window.party = (batch) => batch.map(answer);
  window.partyReady = true;
</script>`;

/** Opens the page; `ask(batch)` answers the line-protocol commands in the page. */
export async function browserParty() {
  const server = await startServer({ packageDir: fileURLToPath(new URL("../../../js/", import.meta.url)), page: PAGE });
  try {
    const browser = await openPage(server.url);
    await browser.page.waitForFunction(() => window.partyReady === true);
    return {
      name: "browser",
      ask: (batch) => browser.page.evaluate((commands) => window.party(commands), batch),
      problems: browser.problems,
      close: async () => {
        await browser.close();
        await server.close();
      },
    };
  } catch (error) {
    await server.close();
    throw error;
  }
}
