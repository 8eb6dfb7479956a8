/**
 * `mintid/store/pg`: the stores on PostgreSQL through node-postgres (`pg`).
 *
 * @packageDocumentation
 */

export * from "./common.js";
export { type PgClient, pgConnection, pgDatabase, type PgPool, type PgPoolClient } from "./pg-driver.js";
