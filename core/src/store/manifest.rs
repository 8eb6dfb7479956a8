//! The shared SQL, compiled in from `schema/` (see `build.rs`): every named
//! query and migration of each dialect, rendered in a driver's placeholder
//! style. The one parser of the query files is the build script; hosts load
//! statements from here.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use super::{Query, Value};

/// An SQL dialect of `schema/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// PostgreSQL 12+.
    Postgres,
    /// MySQL 8.0.16+ and MariaDB 10.6+.
    Mysql,
    /// SQLite 3.37+.
    Sqlite,
}

impl Dialect {
    /// `postgres`, `mysql` or `sqlite`: the folder under `schema/`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
            Dialect::Sqlite => "sqlite",
        }
    }

    /// The dialect of a folder name, as [`as_str`](Self::as_str) writes it.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "postgres" => Dialect::Postgres,
            "mysql" => Dialect::Mysql,
            "sqlite" => Dialect::Sqlite,
            _ => return None,
        })
    }

    fn queries(self) -> &'static [QueryDef] {
        match self {
            Dialect::Postgres => POSTGRES_QUERIES,
            Dialect::Mysql => MYSQL_QUERIES,
            Dialect::Sqlite => SQLITE_QUERIES,
        }
    }

    fn migrations(self) -> &'static [MigrationDef] {
        match self {
            Dialect::Postgres => POSTGRES_MIGRATIONS,
            Dialect::Mysql => MYSQL_MIGRATIONS,
            Dialect::Sqlite => SQLITE_MIGRATIONS,
        }
    }
}

/// How a database library writes parameters, and so in which order a
/// [`Query`]'s values are bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placeholder {
    /// `?` for each parameter, bound in order of appearance, a repeated name
    /// again each time (JDBC, `sqlite3`, better-sqlite3, mysql2, sqlx for
    /// MySQL and SQLite).
    Question,
    /// `$1`, `$2`, … one number per distinct name, reused where the name
    /// repeats; values bound once per name, in order of first appearance
    /// (node `pg`, sqlx for PostgreSQL).
    Numbered,
    /// `%s` for each parameter, bound as [`Question`](Self::Question), with a
    /// literal `%` written `%%` (psycopg 3, PyMySQL).
    Format,
}

impl Placeholder {
    /// `question`, `numbered` or `format`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Placeholder::Question => "question",
            Placeholder::Numbered => "numbered",
            Placeholder::Format => "format",
        }
    }

    /// The style of a name, as [`as_str`](Self::as_str) writes it.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "question" => Placeholder::Question,
            "numbered" => Placeholder::Numbered,
            "format" => Placeholder::Format,
            _ => return None,
        })
    }
}

/// What a named query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultKind {
    /// At most one row (`:one`).
    One,
    /// Rows (`:many`).
    Many,
    /// The affected-row count (`:execrows`).
    ExecRows,
    /// Nothing (`:exec`).
    Exec,
}

impl ResultKind {
    /// `one`, `many`, `execrows` or `exec`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResultKind::One => "one",
            ResultKind::Many => "many",
            ResultKind::ExecRows => "execrows",
            ResultKind::Exec => "exec",
        }
    }
}

/// The SQL type of a parameter, for libraries that bind a typed `NULL`
/// (sqlx on PostgreSQL, JDBC's `setNull`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamType {
    /// A 64-bit integer (`BIGINT`).
    Int,
    /// A text.
    Text,
    /// A byte string (`bytea`, `VARBINARY`, `BLOB`).
    Bytes,
}

impl ParamType {
    /// `int`, `text` or `bytes`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ParamType::Int => "int",
            ParamType::Text => "text",
            ParamType::Bytes => "bytes",
        }
    }

    /// The type of the parameter `name` of `schema/` (schema/README.md,
    /// "Parameter values"); `None` for a name no query uses.
    pub fn of(name: &str) -> Option<Self> {
        Some(match name {
            "scope"
            | "kind"
            | "key_id"
            | "status"
            | "expected_status"
            | "error"
            | "response_content_type"
            | "owner"
            | "tag"
            | "business_key"
            | "last_error"
            | "consumer"
            | "inbox_message_id"
            | "entity_id"
            | "from_state"
            | "to_state" => ParamType::Text,
            "fingerprint" | "response_body" | "payload" => ParamType::Bytes,
            "after_worker"
            | "batch_size"
            | "claim_token"
            | "claimed_until_millis"
            | "created_millis"
            | "expected_created_millis"
            | "expected_token"
            | "expires_millis"
            | "fencing_token"
            | "high_water_millis"
            | "lease_deadline_millis"
            | "max_worker"
            | "message_id"
            | "next_attempt_millis"
            | "now_millis"
            | "sent_before_millis"
            | "step"
            | "worker_id" => ParamType::Int,
            _ => return None,
        })
    }
}

/// A named query as the build script compiled it.
#[derive(Debug)]
pub(crate) struct QueryDef {
    pub(crate) name: &'static str,
    pub(crate) kind: ResultKind,
    /// The SQL around the parameters: one more fragment than parameters.
    pub(crate) fragments: &'static [&'static str],
    /// The parameter names, in order of appearance.
    pub(crate) params: &'static [&'static str],
    /// A template's identifier placeholders (`{table}`, …), in order of
    /// appearance; empty for a plain query.
    pub(crate) idents: &'static [&'static str],
}

/// A migration as the build script compiled it.
#[derive(Debug)]
pub(crate) struct MigrationDef {
    pub(crate) version: u32,
    pub(crate) name: &'static str,
    pub(crate) file: &'static str,
    pub(crate) statements: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/schema.rs"));

/// One named query, rendered for a database library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// Its name, e.g. `claim`.
    pub name: &'static str,
    /// What it returns.
    pub kind: ResultKind,
    /// The SQL, with the library's placeholders.
    pub sql: String,
    /// The parameter names in the order their values are bound (what a
    /// [`Query`]'s `params` hold, for reading).
    pub params: Vec<&'static str>,
    /// The parameters' SQL types, in the same order.
    pub param_types: Vec<ParamType>,
}

/// One numbered migration, split into statements (no parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// Its version, e.g. 1.
    pub version: u32,
    /// Its name, e.g. `idempotency_record`.
    pub name: &'static str,
    /// Its file name, e.g. `0001_idempotency_record.sql`.
    pub file: &'static str,
    /// Its statements, in order, without the final `;`.
    pub statements: Vec<&'static str>,
}

/// The shared SQL of one dialect for one placeholder style: what a host's
/// executor runs, and how a driver binds a [`Query`]'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Manifest {
    /// The dialect.
    pub dialect: Dialect,
    /// The library's placeholder style.
    pub placeholder: Placeholder,
}

impl Manifest {
    /// The manifest of `dialect` for a library writing `placeholder`.
    pub const fn new(dialect: Dialect, placeholder: Placeholder) -> Self {
        Self {
            dialect,
            placeholder,
        }
    }

    /// Every named query, rendered (the templates, whose identifiers a
    /// driver fills, are not among them).
    pub fn statements(&self) -> Vec<Statement> {
        self.dialect
            .queries()
            .iter()
            .filter(|def| def.idents.is_empty())
            .map(|def| self.render(def, &|_| None))
            .collect()
    }

    /// The named query `name`, rendered, if the dialect has it and it is no
    /// template.
    pub fn statement(&self, name: &str) -> Option<Statement> {
        self.def(name)
            .filter(|def| def.idents.is_empty())
            .map(|def| self.render(def, &|_| None))
    }

    /// The template `name` rendered with each identifier placeholder
    /// (`table`, `id_column`, `state_column`) replaced by the text
    /// `ident` gives: identifiers the caller validated and quoted for this
    /// dialect (`mintid::transition::Identifier`), never other text.
    ///
    /// Panics (a bug in a driver, caught by the core's tests) when the
    /// dialect has no such template or `ident` knows no text for a name.
    pub(crate) fn template(&self, name: &str, ident: &dyn Fn(&str) -> Option<String>) -> Statement {
        let def = self
            .def(name)
            .filter(|def| !def.idents.is_empty())
            .unwrap_or_else(|| panic!("no template {name} in {}", self.dialect.as_str()));
        self.render(def, ident)
    }

    /// A rendered statement's values, `value` giving each parameter's by
    /// name, in its binding order.
    ///
    /// Panics (a bug in a driver) when `value` knows no value for a name.
    pub(crate) fn bind(statement: &Statement, value: impl Fn(&str) -> Option<Value>) -> Vec<Value> {
        statement
            .params
            .iter()
            .map(|param| {
                value(param)
                    .unwrap_or_else(|| panic!("query {}: no value for :{param}", statement.name))
            })
            .collect()
    }

    /// What `name` returns, if the dialect has it.
    pub fn kind(&self, name: &str) -> Option<ResultKind> {
        self.def(name).map(|def| def.kind)
    }

    /// The numbered migrations, in order.
    pub fn migrations(&self) -> Vec<Migration> {
        self.dialect
            .migrations()
            .iter()
            .map(|def| Migration {
                version: def.version,
                name: def.name,
                file: def.file,
                statements: def.statements.to_vec(),
            })
            .collect()
    }

    fn def(&self, name: &str) -> Option<&'static QueryDef> {
        self.dialect.queries().iter().find(|def| def.name == name)
    }

    fn bound_names(&self, def: &'static QueryDef) -> Vec<&'static str> {
        match self.placeholder {
            Placeholder::Question | Placeholder::Format => def.params.to_vec(),
            Placeholder::Numbered => {
                let mut names: Vec<&'static str> = Vec::new();
                for name in def.params {
                    if !names.contains(name) {
                        names.push(name);
                    }
                }
                names
            }
        }
    }

    fn render(&self, def: &'static QueryDef, ident: &dyn Fn(&str) -> Option<String>) -> Statement {
        let params = self.bound_names(def);
        let mut sql = String::new();
        for (at, fragment) in def.fragments.iter().enumerate() {
            let mut filled = String::from(*fragment);
            for name in def.idents {
                let text = ident(name)
                    .unwrap_or_else(|| panic!("template {}: no identifier {{{name}}}", def.name));
                filled = filled.replace(&alloc::format!("{{{name}}}"), &text);
            }
            match self.placeholder {
                Placeholder::Format => sql.push_str(&filled.replace('%', "%%")),
                Placeholder::Question | Placeholder::Numbered => sql.push_str(&filled),
            }
            let Some(name) = def.params.get(at) else {
                break;
            };
            match self.placeholder {
                Placeholder::Question => sql.push('?'),
                Placeholder::Format => sql.push_str("%s"),
                Placeholder::Numbered => {
                    let number = params.iter().position(|n| n == name).unwrap_or(0) + 1;
                    let _ = write!(sql, "${number}");
                }
            }
        }
        let param_types = params
            .iter()
            .map(|name| ParamType::of(name).unwrap_or(ParamType::Text))
            .collect();
        Statement {
            name: def.name,
            kind: def.kind,
            sql,
            params,
            param_types,
        }
    }

    /// The [`Query`] `name` with the values `value` gives for each
    /// parameter name, in this manifest's binding order.
    ///
    /// Panics (a bug in a driver, caught by the core's tests) when the
    /// dialect has no such query or `value` knows no value for a name.
    pub(crate) fn query(&self, name: &'static str, value: impl Fn(&str) -> Option<Value>) -> Query {
        let def = self
            .def(name)
            .unwrap_or_else(|| panic!("no query {name} in {}", self.dialect.as_str()));
        let params = self
            .bound_names(def)
            .into_iter()
            .map(|param| {
                value(param).unwrap_or_else(|| panic!("query {name}: no value for :{param}"))
            })
            .collect();
        Query {
            name: def.name,
            params,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_has_the_same_queries_and_parameters() {
        let names = |dialect: Dialect| {
            let mut all: Vec<(&str, Vec<&str>)> = dialect
                .queries()
                .iter()
                .map(|def| {
                    let mut params = def.params.to_vec();
                    params.sort_unstable();
                    params.dedup();
                    (def.name, params)
                })
                .collect();
            all.sort();
            all
        };
        assert_eq!(names(Dialect::Postgres), names(Dialect::Mysql));
        assert_eq!(names(Dialect::Postgres), names(Dialect::Sqlite));
        assert!(names(Dialect::Postgres).len() > 20);
    }

    #[test]
    fn placeholders_render_in_each_style() {
        let load = |placeholder| {
            Manifest::new(Dialect::Postgres, placeholder)
                .statement("load")
                .expect("load exists")
        };
        let question = load(Placeholder::Question);
        assert!(
            question
                .sql
                .ends_with("WHERE scope = ? AND kind = ? AND key_id = ?")
        );
        assert_eq!(question.params, ["scope", "kind", "key_id"]);
        let format = load(Placeholder::Format);
        assert!(
            format
                .sql
                .ends_with("WHERE scope = %s AND kind = %s AND key_id = %s")
        );
        let numbered = Manifest::new(Dialect::Postgres, Placeholder::Numbered)
            .statement("claim")
            .expect("claim exists");
        // :created_millis appears twice, :lease_deadline_millis twice: one number each.
        assert_eq!(numbered.params.len(), 9);
        assert_eq!(numbered.sql.matches("$6").count(), 2);
        assert!(!numbered.sql.contains(':'));
    }

    #[test]
    fn every_parameter_has_a_type() {
        for dialect in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
            for def in dialect.queries() {
                for param in def.params {
                    assert!(ParamType::of(param).is_some(), "{}: :{param}", def.name);
                }
            }
        }
        assert_eq!(ParamType::of("response_body"), Some(ParamType::Bytes));
        assert_eq!(ParamType::of("error"), Some(ParamType::Text));
        assert_eq!(ParamType::of("now_millis"), Some(ParamType::Int));
    }

    #[test]
    fn migrations_are_numbered_from_one_and_split() {
        for dialect in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
            let migrations = Manifest::new(dialect, Placeholder::Question).migrations();
            let versions: Vec<u32> = migrations.iter().map(|m| m.version).collect();
            assert_eq!(versions, [1, 2, 3, 4, 5], "{}", dialect.as_str());
            assert_eq!(migrations[0].name, "idempotency_record");
            for migration in &migrations {
                assert!(!migration.statements.is_empty());
                for statement in &migration.statements {
                    assert!(!statement.trim_end().ends_with(';'));
                    assert!(!statement.contains("\n--"));
                }
            }
        }
    }
}
