// The Rust party: the `mintid` command-line tool, one process a command (the
// tool reads its key from a key file and verifies one ID a run).
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const PARALLEL = 4;

/** Answers the commands of the line protocol by running `binary`; `dir` holds its key file. */
export function rustParty(binary, dir) {
  const keyFile = join(dir, "keys");
  const answer = async ([command, ...args]) => {
    try {
      switch (command) {
        case "key":
          writeFileSync(keyFile, `${args[0]} ${args[1]}\n`, { mode: 0o600 });
          return ["ok"];
        case "issue": {
          const ttl = `${Math.max(1, Math.round((Number(args[1]) - Date.now()) / 1000))}s`;
          const { stdout } = await run(binary, ["grant", "issue", "--secret-file", keyFile, "--scope", args[0], "--ttl", ttl]);
          return ["ok", stdout.trim()];
        }
        case "mint": {
          const { stdout } = await run(binary, ["request-id", "mint", "--grant", args[0], "-n", args[1]]);
          return ["ok", ...stdout.trim().split("\n")];
        }
        case "verify": {
          const { stdout } = await run(binary, ["request-id", "verify", "--secret-file", keyFile, "--scope", args[0], args[1]]);
          return ["ok", stdout.trim()];
        }
        default:
          return ["err", `party.unknown_command:${command}`];
      }
    } catch (error) {
      // A refusal is `mintid: <code>: <message>` on stderr and exit status 1.
      const refusal = /^mintid: ([a-z_]+\.[a-z_]+): /.exec(error.stderr ?? "");
      if (error.code === 1 && refusal) return ["err", refusal[1]];
      throw error;
    }
  };
  return {
    name: "Rust",
    ask: async (batch) => {
      const replies = new Array(batch.length);
      let next = 0;
      const worker = async () => {
        while (next < batch.length) {
          const index = next++;
          replies[index] = await answer(batch[index]);
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
      return replies;
    },
    close: async () => {},
  };
}
