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
