/**
 * `mintid/store/sqlite`: the stores on SQLite through better-sqlite3 12.
 *
 * @packageDocumentation
 */

export * from "./common.js";
export { type SqliteConnection, sqliteDatabase, type SqliteOptions, type SqliteStatement } from "./sqlite-driver.js";
