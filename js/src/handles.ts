/**
 * The wasm side of the public option types: kept out of the modules that
 * declare the public API, so the package's `.d.ts` never exposes the glue.
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { toU64 } from "./check.js";
import { FixedEntropy, type ManualClock, type RollbackPolicy } from "./sources.js";

const clockHandles = new WeakMap<ManualClock, wasm.ManualClockHandle>();

/** Creates the wasm clock behind a new `ManualClock`. */
export function newClockHandle(clock: ManualClock, unixMillis: bigint, advanceOnPause: boolean): void {
  clockHandles.set(clock, new wasm.ManualClockHandle(unixMillis, advanceOnPause));
}

/** The wasm clock behind `clock`. */
export function clockHandle(clock: ManualClock): wasm.ManualClockHandle {
  const handle = clockHandles.get(clock);
  if (handle === undefined) throw new TypeError("clock must be a ManualClock");
  return handle;
}

/** A handle on `clock` for a new generator, or undefined for `Date.now()`. */
export function clockArg(clock: ManualClock | undefined): wasm.ManualClockHandle | undefined {
  return clock === undefined ? undefined : clockHandle(clock).share();
}

/** The wasm form of optional fixed entropy. */
export function entropyArg(entropy: FixedEntropy | undefined): Uint8Array | undefined {
  if (entropy === undefined) return undefined;
  if (!(entropy instanceof FixedEntropy)) throw new TypeError("entropy must be a FixedEntropy");
  return entropy.bytes;
}

/** The wasm form of an optional policy: kind (undefined for the core's default) and bound. */
export function rollbackArgs(policy: RollbackPolicy | undefined): [string | undefined, bigint] {
  if (policy === undefined) return [undefined, 0n];
  switch (policy.kind) {
    case "fail":
      return ["fail", 0n];
    case "wait":
    case "logical":
      return [policy.kind, toU64(policy.maxMillis, "rollback.maxMillis")];
    default:
      throw new TypeError(`rollback.kind must be "fail", "wait" or "logical"`);
  }
}

const layoutHandles = new WeakMap<object, wasm.LayoutHandle>();

/** Attaches the wasm layout behind a `SnowflakeLayout`. */
export function setLayoutHandle(layout: object, handle: wasm.LayoutHandle): void {
  layoutHandles.set(layout, handle);
}

/** The wasm layout behind `layout`. */
export function layoutHandle(layout: object): wasm.LayoutHandle {
  const handle = layoutHandles.get(layout);
  if (handle === undefined) throw new TypeError("layout must be a SnowflakeLayout or a preset name");
  return handle;
}

const policyHandles = new WeakMap<object, wasm.RecordPolicyHandle>();

/** Attaches the wasm policy behind a `RecordPolicy`. */
export function setPolicyHandle(policy: object, handle: wasm.RecordPolicyHandle): void {
  policyHandles.set(policy, handle);
}

/** The wasm policy behind `policy`. */
export function policyHandle(policy: object): wasm.RecordPolicyHandle {
  const handle = policyHandles.get(policy);
  if (handle === undefined) throw new TypeError("policy must be a RecordPolicy");
  return handle;
}

const leasePolicyHandles = new WeakMap<object, wasm.LeasePolicyHandle>();

/** Attaches the wasm policy behind a `LeasePolicy`. */
export function setLeasePolicyHandle(policy: object, handle: wasm.LeasePolicyHandle): void {
  leasePolicyHandles.set(policy, handle);
}

/** The wasm policy behind `policy` (a `LeasePolicy`). */
export function leasePolicyHandle(policy: object): wasm.LeasePolicyHandle {
  const handle = leasePolicyHandles.get(policy);
  if (handle === undefined) throw new TypeError("policy must be a LeasePolicy");
  return handle;
}

const leaseGuardHandles = new WeakMap<object, wasm.LeaseGuardHandle>();

/** Attaches the wasm guard behind a `LeaseGuard` (made by its constructor or by a lease driver). */
export function setLeaseGuardHandle(guard: object, handle: wasm.LeaseGuardHandle): void {
  leaseGuardHandles.set(guard, handle);
}

/** The wasm guard behind `guard` (a `LeaseGuard`). */
export function leaseGuardHandle(guard: object): wasm.LeaseGuardHandle {
  const handle = leaseGuardHandles.get(guard);
  if (handle === undefined) throw new TypeError("guard must be a LeaseGuard");
  return handle;
}

const segmentPolicyHandles = new WeakMap<object, wasm.SegmentPolicyHandle>();

/** Records the wasm policy behind a new `SegmentPolicy`. */
export function setSegmentPolicyHandle(policy: object, handle: wasm.SegmentPolicyHandle): void {
  segmentPolicyHandles.set(policy, handle);
}

/** The wasm policy behind `policy`. */
export function segmentPolicyHandle(policy: object): wasm.SegmentPolicyHandle {
  const handle = segmentPolicyHandles.get(policy);
  if (handle === undefined) throw new TypeError("policy must be a SegmentPolicy");
  return handle;
}

const relayPolicyHandles = new WeakMap<object, wasm.RelayPolicyHandle>();

/** Attaches the wasm policy behind a `RelayPolicy`. */
export function setRelayPolicyHandle(policy: object, handle: wasm.RelayPolicyHandle): void {
  relayPolicyHandles.set(policy, handle);
}

/** The wasm policy behind `policy`. */
export function relayPolicyHandle(policy: object): wasm.RelayPolicyHandle {
  const handle = relayPolicyHandles.get(policy);
  if (handle === undefined) throw new TypeError("policy must be a RelayPolicy");
  return handle;
}
