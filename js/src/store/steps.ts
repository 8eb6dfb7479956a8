/**
 * The query loop of the drivers that only run queries (records, the outbox):
 * run the queries a driver names on one connection, push each answer back (a
 * failure classified), and stop at the first step that is not a query. The
 * drivers with transactions and pauses go through `runDriver` (driver.ts).
 */

import type { Connection } from "./database.js";
import { type Answered, answerOf, DbError, failedAnswer, type StoreQuery } from "./driver.js";
import type { Reporter } from "./metrics.js";

/** Gives `action` a connection: one from the pool, or the caller's. */
export type Use = <T>(action: (connection: Connection) => Promise<T>) => Promise<T>;

/** A step that runs a query. */
export type RunStep = { readonly kind: "run"; readonly query: StoreQuery };

function isRun(step: { readonly kind: string }): step is RunStep {
  return step.kind === "run";
}

/**
 * Runs `query`, and each query `push` answers with, on one connection from
 * `use`, until `push` gives a step that is not a query; a connection that
 * cannot be had is the failed answer to the query in hand. Each failed
 * answer is reported to `reporter`.
 */
export async function runQueries<S extends { readonly kind: string }>(
  use: Use,
  query: StoreQuery,
  push: (answered: Answered) => S,
  reporter: Reporter,
): Promise<Exclude<S, RunStep>> {
  const reported = (answered: Answered): S => {
    reporter.answered(answered.failure);
    return push(answered);
  };
  let pending = query;
  for (;;) {
    try {
      return await use(async (connection) => {
        let step = reported(await answerOf(connection, pending));
        while (isRun(step)) step = reported(await answerOf(connection, step.query));
        return step as Exclude<S, RunStep>;
      });
    } catch (error) {
      if (!(error instanceof DbError)) throw error;
      const step = reported({ answer: failedAnswer(error), failure: error });
      if (!isRun(step)) return step as Exclude<S, RunStep>;
      pending = step.query;
    }
  }
}
