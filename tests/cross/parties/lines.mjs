// A party that runs as one child process speaking the line protocol of
// tests/cross/README.md on stdin/stdout (the Python and the Kotlin party).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** Starts `command args`; `ask(lines)` sends a batch and resolves to one reply (fields) a line. */
export function lineParty(name, command, args) {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const waiting = [];
  let failure;
  const fail = (error) => {
    failure = new Error(`${name} party: ${error}\n${stderr}`);
    for (const { reject } of waiting.splice(0)) reject(failure);
  };
  child.on("error", fail);
  child.on("exit", (code) => fail(`exited with ${code}`));
  createInterface({ input: child.stdout }).on("line", (line) => waiting.shift()?.resolve(line.split("\t")));
  const ask = (fields) => {
    if (failure) return Promise.reject(failure);
    const reply = new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    child.stdin.write(`${fields.join("\t")}\n`);
    return reply;
  };
  return {
    name,
    ask: (batch) => Promise.all(batch.map(ask)),
    close: () =>
      new Promise((resolve) => {
        child.removeAllListeners("exit");
        child.on("exit", resolve);
        child.stdin.end();
      }),
  };
}
