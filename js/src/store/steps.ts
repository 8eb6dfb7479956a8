/**
 * The one step loop of the core's store drivers: run the queries a driver
 * names on a connection, push each answer back (a failure classified), and
 * stop at the first step that is not a query.
 */

import { type Connection } from "./database.js";
import { DbError, failedAnswer, type SqlValue, statementsOf, type StoreAnswer, type StoreQuery } from "./driver.js";

/** A database answer, with the driver's error behind a failed one. */
export interface Answered {
  readonly answer: StoreAnswer;
  readonly failure: DbError | undefined;
}

/** Gives `action` a connection: one from the pool, or the caller's. */
export type Use = <T>(action: (connection: Connection) => Promise<T>) => Promise<T>;

/** A step that runs a query. */
export type RunStep = { readonly kind: "run"; readonly query: StoreQuery };

function isRun(step: { readonly kind: string }): step is RunStep {
  return step.kind === "run";
}

/** Runs `query` on `connection`, as the answer the core reads: rows or an affected count, or the classified failure. */
async function answerOf(connection: Connection, query: StoreQuery): Promise<Answered> {
  const statement = statementsOf(connection.dialect).get(query.name);
  if (statement === undefined) throw new TypeError(`no query ${query.name} for ${connection.dialect}`);
  try {
    const result = await connection.run(statement, query.params);
    const answer: StoreAnswer = statement.kind === "one" || statement.kind === "many"
      ? { kind: "rows", rows: result.rows as SqlValue[][] }
      : { kind: "affected", count: BigInt(result.rowCount) };
    return { answer, failure: undefined };
  } catch (error) {
    if (!(error instanceof DbError)) throw error;
    return { answer: failedAnswer(error), failure: error };
  }
}

/**
 * Runs `query`, and each query `push` answers with, on one connection from
 * `use`, until `push` gives a step that is not a query; a connection that
 * cannot be had is the failed answer to the query in hand.
 */
export async function runQueries<S extends { readonly kind: string }>(use: Use, query: StoreQuery, push: (answered: Answered) => S): Promise<Exclude<S, RunStep>> {
  let pending = query;
  for (;;) {
    try {
      return await use(async (connection) => {
        let step = push(await answerOf(connection, pending));
        while (isRun(step)) step = push(await answerOf(connection, step.query));
        return step as Exclude<S, RunStep>;
      });
    } catch (error) {
      if (!(error instanceof DbError)) throw error;
      const step = push({ answer: failedAnswer(error), failure: error });
      if (!isRun(step)) return step as Exclude<S, RunStep>;
      pending = step.query;
    }
  }
}
