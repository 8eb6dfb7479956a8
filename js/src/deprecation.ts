/**
 * The one way the package warns about a deprecated call: once per name per
 * process, through Node's `process.emitWarning` (a `DeprecationWarning`,
 * silenced by `--no-deprecation`) or `console.warn` where there is no
 * `process` (browsers).
 */

const warned = new Set<string>();

/** Warns once that `name` is deprecated, with `advice` on what to use instead. */
export function warnDeprecated(name: string, advice: string): void {
  if (warned.has(name)) return;
  warned.add(name);
  const message = `${name} is deprecated: ${advice}`;
  const proc = (globalThis as { process?: { emitWarning?: (message: string, type: string, code: string) => void } }).process;
  if (typeof proc?.emitWarning === "function") proc.emitWarning(message, "DeprecationWarning", "MINTID_DEPRECATED");
  else console.warn(`DeprecationWarning: ${message}`);
}

/**
 * The option `name` of `options`, or the value under its old name `old`
 * (with a one-time warning) when only that is given: the `…Ms` options of
 * 0.1.0's previews are `…Millis` now, as in every host.
 */
export function renamedOption(options: object, name: string, old: string, where: string): unknown {
  const values = options as Record<string, unknown>;
  if (values[name] !== undefined || values[old] === undefined) return values[name];
  warnDeprecated(`${where} option ${old}`, `it is named ${name} now`);
  return values[old];
}

/** Gives the plain object `target` its property `name` under the old name `old` too: hidden from enumeration, warning once. */
export function renamedField<T extends object>(target: T, name: keyof T & string, old: string, where: string): T {
  Object.defineProperty(target, old, {
    get: () => {
      warnDeprecated(`${where}.${old}`, `it is named ${name} now`);
      return target[name];
    },
    enumerable: false,
  });
  return target;
}

/**
 * `[nowMillis, policy]` of a call that takes the time before the policy, as
 * every host does. When `time` is the policy (the order before 0.1.0,
 * `(…, policy, now?)`), warns once about `call` and swaps the two, the time
 * defaulting to `Date.now()`.
 */
export function timeBeforePolicy(time: unknown, policy: unknown, call: string, fixed: string): [unknown, unknown] {
  if (typeof time !== "object" || time === null) return [time, policy];
  warnDeprecated(call, `pass the time before the policy: ${fixed}`);
  return [policy ?? Date.now(), time];
}
