/**
 * The shared SQL of `schema/`, shipped in the package under `dist/schema/`:
 * named queries (`-- name: claim :one` blocks) with `:name` parameters
 * rewritten to each driver's placeholders, and the numbered migrations.
 */

import { readdirSync, readFileSync } from "node:fs";

/** The SQL dialects of `schema/`. */
export type Dialect = "postgres" | "mysql" | "sqlite";

/** How a named query's result is read. */
export type QueryKind = "one" | "many" | "execrows" | "exec";

/** How a driver writes parameters. */
export type PlaceholderStyle = "named" | "numbered" | "positional";

/** One named query, its SQL rewritten for a driver. */
export interface NamedQuery {
  /** The query's name, e.g. `claim`. */
  readonly name: string;
  /** How its result is read. */
  readonly kind: QueryKind;
  /** The SQL with the driver's placeholders, comments and the final `;` dropped. */
  readonly sql: string;
  /**
   * The parameter names in binding order: every occurrence for `positional`
   * (`?`), each distinct name once for `numbered` (`$1`…) and `named` (`:name`).
   */
  readonly params: readonly string[];
}

/** A dialect's migration file. */
export interface Migration {
  /** The version, from the file name's four digits. */
  readonly version: number;
  /** The file name. */
  readonly name: string;
  /** The statements, each without its final `;`, comments dropped. */
  readonly statements: readonly string[];
}

const SCHEMA_ROOT = new URL("../../schema/", import.meta.url);
const HEADER = /^-- name: ([a-z][a-z0-9_]*) :(one|many|execrows|exec)\s*$/;
const PARAMETER = /(?<![:\w]):([a-z][a-z0-9_]*)/g;
const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

function dialectDir(dialect: Dialect, root: URL): URL {
  return new URL(`${dialect}/`, root);
}

/** Lines without full-line comments, joined, trimmed. */
function withoutComments(lines: readonly string[]): string {
  return lines.filter((line) => !line.trimStart().startsWith("--")).join("\n").trim();
}

/** Rewrites `:name` parameters to the driver's placeholders (schema/README.md). */
export function rewriteParameters(sql: string, style: PlaceholderStyle): { sql: string; params: string[] } {
  const params: string[] = [];
  const rewritten = sql.replace(PARAMETER, (_match, name: string) => {
    if (style === "positional") {
      params.push(name);
      return "?";
    }
    let index = params.indexOf(name);
    if (index < 0) index = params.push(name) - 1;
    return style === "numbered" ? `$${index + 1}` : `:${name}`;
  });
  return { sql: rewritten, params };
}

/** Parses a `queries.sql` text into its named queries, rewritten for `style`. */
export function parseQueries(text: string, style: PlaceholderStyle): Map<string, NamedQuery> {
  const queries = new Map<string, NamedQuery>();
  let current: { name: string; kind: QueryKind; lines: string[] } | undefined;
  const finish = (): void => {
    if (current === undefined) return;
    const body = withoutComments(current.lines);
    if (!body.endsWith(";")) throw new Error(`query ${current.name} does not end with ";"`);
    const { sql, params } = rewriteParameters(body.slice(0, -1).trimEnd(), style);
    queries.set(current.name, { name: current.name, kind: current.kind, sql, params });
  };
  for (const line of text.split("\n")) {
    const header = HEADER.exec(line);
    if (header !== null) {
      finish();
      const [, name = "", kind = "exec"] = header;
      if (queries.has(name)) throw new Error(`query ${name} is named twice`);
      current = { name, kind: kind as QueryKind, lines: [] };
    } else {
      current?.lines.push(line);
    }
  }
  finish();
  return queries;
}

/** Splits a migration file into statements: each ends with `;` at the end of a line. */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let lines: string[] = [];
  for (const line of text.split("\n")) {
    lines.push(line);
    if (line.trimEnd().endsWith(";") && !line.trimStart().startsWith("--")) {
      const statement = withoutComments(lines);
      statements.push(statement.slice(0, -1).trimEnd());
      lines = [];
    }
  }
  if (withoutComments(lines) !== "") throw new Error("a migration ends with a statement without \";\"");
  return statements;
}

/** The named queries of `dialect`, read from the package's copy of `schema/`. */
export function loadQueries(dialect: Dialect, style: PlaceholderStyle, root: URL = SCHEMA_ROOT): Map<string, NamedQuery> {
  return parseQueries(readFileSync(new URL("queries.sql", dialectDir(dialect, root)), "utf8"), style);
}

/** The migrations of `dialect`, in version order. */
export function loadMigrations(dialect: Dialect, root: URL = SCHEMA_ROOT): Migration[] {
  const dir = dialectDir(dialect, root);
  return readdirSync(dir)
    .flatMap((name) => {
      const match = MIGRATION_FILE.exec(name);
      return match === null ? [] : [{ version: Number(match[1]), name, statements: splitStatements(readFileSync(new URL(name, dir), "utf8")) }];
    })
    .sort((a, b) => a.version - b.version);
}
