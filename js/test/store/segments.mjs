// The runner of tests/conformance/segments.json against one database.
import assert from "node:assert/strict";
import { SegmentPolicy } from "../../dist/full/node.js";
import { migrate, SegmentIds } from "../../dist/full/store/pg.js";
import { StepClock, systemClock } from "./idempotency.mjs";

function policyOf(spec) {
  return new SegmentPolicy({
    initialStep: BigInt(spec.initial_step),
    minStep: BigInt(spec.min_step),
    maxStep: BigInt(spec.max_step),
    fetchAtPercent: spec.fetch_at_percent,
    growBelowMillis: BigInt(spec.grow_below_millis),
    shrinkAboveMillis: BigInt(spec.shrink_above_millis),
  });
}

const KNOWN_STEP_FIELDS = new Set(["do", "expect", "process", "now", "count", "tag", "processes", "ids_per_process"]);

export async function runSegmentCase(testCase, db) {
  assert.equal(testCase.op, "scenario", `unknown op ${testCase.op}`);
  assert.equal(typeof testCase.tag, "string", "the case names no tag");
  const policy = policyOf(testCase.policy);
  assert.ok(["manual", "system"].includes(testCase.clock), `unknown clock ${testCase.clock}`);
  const clock = testCase.clock === "manual" ? new StepClock() : systemClock;
  const admin = db.open();
  const processes = new Map();
  const down = new Set();
  const live = db.open();
  let unavailable;
  const storeOf = (process) => (down.has(process) ? (unavailable ??= db.unavailable()) : live);
  const row = async (tag) => {
    const found = await admin.withConnection(async (c) => (await c.run(admin.statement("segment_load"), [tag])).rows[0]);
    return found === undefined ? null : { max_id: String(found[0]), step: String(found[1]) };
  };
  for (const [index, step] of testCase.steps.entries()) {
    for (const field of Object.keys(step)) assert.ok(KNOWN_STEP_FIELDS.has(field), `step ${index}: unknown field ${field}`);
    const where = `step ${index} (${step.do})`;
    if (step.now !== undefined && clock instanceof StepClock) clock.current = BigInt(step.now);
    switch (step.do) {
      case "migrate":
        await migrate(admin);
        assert.equal(step.expect, "ok", where);
        break;
      case "next": {
        const tag = step.tag ?? testCase.tag;
        const name = `${step.process}\u0000${tag}`;
        let ids = processes.get(name);
        if (ids === undefined) {
          ids = new SegmentIds(storeOf(step.process), tag, policy, { clock });
          processes.set(name, ids);
        }
        const drawn = [];
        let got = drawn;
        try {
          for (let n = 0; n < Number(step.count); n += 1) {
            drawn.push(String(await ids.nextId()));
            await ids.settled(); // a manual case: the background fetch completes before the next ID
          }
        } catch (error) {
          if (typeof error?.code !== "string") throw error;
          got = { error: error.code, drawn };
        }
        assert.deepEqual(got, step.expect, where);
        break;
      }
      case "disconnect":
      case "reconnect":
        if (step.do === "disconnect") down.add(step.process);
        else down.delete(step.process);
        // The process's store now points where no database listens, or back at the case's.
        for (const [name, ids] of processes) if (name.startsWith(`${step.process}\u0000`)) Object.defineProperty(ids, "database", { value: storeOf(step.process) });
        assert.equal(step.expect, "ok", where);
        break;
      case "restart":
        for (const name of [...processes.keys()]) if (name.startsWith(`${step.process}\u0000`)) processes.delete(name);
        assert.equal(step.expect, "ok", where);
        break;
      case "row":
        assert.deepEqual(await row(testCase.tag), step.expect, where);
        break;
      case "concurrent": {
        const drawn = await Promise.all(Array.from({ length: Number(step.processes) }, async () => {
          const ids = new SegmentIds(db.open(), testCase.tag, policy);
          const mine = [];
          for (let n = 0; n < Number(step.ids_per_process); n += 1) mine.push(await ids.nextId());
          await ids.settled();
          return mine;
        }));
        const all = drawn.flat();
        const decreasing = drawn.reduce((sum, mine) => sum + mine.filter((id, n) => n > 0 && id <= mine[n - 1]).length, 0);
        const { max_id: maxId } = await row(testCase.tag);
        const unused = BigInt(maxId) - BigInt(all.length);
        assert.equal(String(all.length - new Set(all).size), step.expect.duplicates, `${where}: duplicates`);
        assert.equal(String(decreasing), step.expect.decreasing, `${where}: decreasing`);
        assert.ok(unused <= BigInt(step.expect.max_unused), `${where}: ${unused} IDs unused > ${step.expect.max_unused}`);
        break;
      }
      default:
        assert.fail(`${where}: unknown step`);
    }
  }
}
