/**
 * `mintid/store/mysql`: the stores on MySQL 8 and MariaDB 10.6+ through `mysql2`.
 *
 * @packageDocumentation
 */

export * from "./common.js";
export { type MysqlConnection, mysqlConnection, mysqlDatabase, type MysqlPool, type MysqlPoolConnection } from "./mysql-driver.js";
