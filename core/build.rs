//! Compiles the shared SQL of `schema/` into the core: every named query of
//! each dialect, split into its SQL fragments and the parameter named between
//! each two, and every migration split into statements. The store drivers
//! name queries and bind parameters from these tables; hosts render them in
//! their driver's placeholder style (`mintid::store::Manifest`) instead of
//! parsing the files themselves.
//!
//! The file rules are those of `schema/README.md`: a block starts with
//! `-- name: NAME :KIND`, lines whose first non-blank characters are `--` are
//! comments, parameters are `:name` not preceded by `:` or a word character,
//! a statement ends with `;` at the end of a line. A file that breaks them
//! (a `;`, `%`, `?` or `::` inside a query, a `:` inside a string literal, a
//! query defined twice, an unknown result kind, text after the last
//! statement of a migration) fails the build, so every host's placeholder
//! rewrite is exact.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

const DIALECTS: [&str; 3] = ["postgres", "mysql", "sqlite"];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let schema = schema_dir(&manifest_dir);
    println!("cargo::rerun-if-changed={}", schema.display());
    let mut out = String::new();
    for dialect in DIALECTS {
        let dir = schema.join(dialect);
        println!("cargo::rerun-if-changed={}", dir.display());
        let queries = read(&dir.join("queries.sql"));
        write_queries(&mut out, dialect, &queries);
        write_migrations(&mut out, dialect, &dir);
    }
    let path = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it")).join("schema.rs");
    fs::write(path, out).expect("OUT_DIR is writable");
}

/// `schema/` beside the crate in the workspace, or the copy `cargo package`
/// puts inside it (`core/schema` is a link to `../schema`).
fn schema_dir(manifest_dir: &Path) -> PathBuf {
    let inside = manifest_dir.join("schema");
    if inside.is_dir() {
        inside
    } else {
        manifest_dir.join("../schema")
    }
}

fn read(path: &Path) -> String {
    println!("cargo::rerun-if-changed={}", path.display());
    fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with("--")
}

fn ident_start(c: char) -> bool {
    c.is_ascii_lowercase()
}

fn ident_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
}

/// Splits SQL at its `:name` parameters: the fragments around them and the names.
fn split_params(sql: &str) -> (Vec<String>, Vec<String>) {
    let chars: Vec<char> = sql.chars().collect();
    let mut fragments = vec![String::new()];
    let mut names = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let before_ok = i == 0
            || !(chars[i - 1] == ':' || chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == ':' && before_ok && chars.get(i + 1).copied().is_some_and(ident_start) {
            let mut end = i + 1;
            while end < chars.len() && ident_char(chars[end]) {
                end += 1;
            }
            names.push(chars[i + 1..end].iter().collect());
            fragments.push(String::new());
            i = end;
            continue;
        }
        fragments.last_mut().expect("never empty").push(c);
        i += 1;
    }
    (fragments, names)
}

fn write_queries(out: &mut String, dialect: &str, text: &str) {
    let mut blocks: Vec<(String, String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        if let Some(header) = line.strip_prefix("-- name: ") {
            let mut parts = header.split_whitespace();
            let name = parts.next().expect("a query name").to_owned();
            let kind = parts.next().expect("a result kind").to_owned();
            blocks.push((name, kind, Vec::new()));
        } else if line.starts_with("-- name:") {
            panic!("{dialect}: malformed header {line:?}");
        } else if let Some(block) = blocks.last_mut() {
            if !is_comment(line) {
                block.2.push(line);
            }
        }
    }
    let upper = dialect.to_uppercase();
    writeln!(
        out,
        "/// The named queries of `schema/{dialect}/queries.sql`."
    )
    .unwrap();
    writeln!(out, "pub(crate) static {upper}_QUERIES: &[QueryDef] = &[").unwrap();
    let mut seen: Vec<String> = Vec::new();
    for (name, kind, body) in blocks {
        let sql = body.join("\n");
        let sql = sql.trim();
        let Some(sql) = sql.strip_suffix(';') else {
            panic!("{dialect}: query {name} must end with ';'");
        };
        let sql = sql.trim_end();
        for forbidden in [";", "%", "?", "::"] {
            assert!(
                !sql.contains(forbidden),
                "{dialect}: query {name}: {forbidden:?} is not allowed"
            );
        }
        let literals = sql.split('\'').skip(1).step_by(2);
        for literal in literals {
            assert!(
                !literal.contains(':'),
                "{dialect}: query {name}: ':' inside a string literal"
            );
        }
        assert!(
            !seen.contains(&name),
            "{dialect}: query {name} is defined twice"
        );
        seen.push(name.clone());
        let kind = match kind.as_str() {
            ":one" => "ResultKind::One",
            ":many" => "ResultKind::Many",
            ":execrows" => "ResultKind::ExecRows",
            ":exec" => "ResultKind::Exec",
            other => panic!("{dialect}: query {name}: unknown result kind {other}"),
        };
        let idents = template_idents(dialect, &name, sql);
        let (fragments, params) = split_params(sql);
        writeln!(
            out,
            "    QueryDef {{ name: {name:?}, kind: {kind}, fragments: &{fragments:?}, params: &{params:?}, idents: &{idents:?} }},"
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
}

/// The identifier placeholders of a template (`{table}`, `{id_column}`,
/// `{state_column}`), in order of appearance; none for a plain query. Any
/// other brace fails the build.
fn template_idents(dialect: &str, name: &str, sql: &str) -> Vec<String> {
    const IDENTS: [&str; 3] = ["table", "id_column", "state_column"];
    let mut idents = Vec::new();
    let mut rest = sql;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .unwrap_or_else(|| panic!("{dialect}: query {name}: unclosed '{{'"));
        let ident = &after[..close];
        assert!(
            IDENTS.contains(&ident),
            "{dialect}: query {name}: unknown identifier placeholder {{{ident}}}"
        );
        idents.push(ident.to_owned());
        rest = &after[close + 1..];
    }
    assert!(
        !rest.contains('}'),
        "{dialect}: query {name}: '}}' without '{{'"
    );
    idents
}

fn write_migrations(out: &mut String, dialect: &str, dir: &Path) {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a readable directory").path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.len() > 9
                && name.as_bytes()[..4].iter().all(u8::is_ascii_digit)
                && name.ends_with(".sql")
        })
        .collect();
    files.sort();
    let upper = dialect.to_uppercase();
    writeln!(
        out,
        "/// The numbered migrations of `schema/{dialect}/`, in order."
    )
    .unwrap();
    writeln!(
        out,
        "pub(crate) static {upper}_MIGRATIONS: &[MigrationDef] = &["
    )
    .unwrap();
    for path in files {
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 names")
            .to_owned();
        let version: u32 = file[..4].parse().expect("four digits");
        let name = file[5..file.len() - 4].to_owned();
        let mut statements = Vec::new();
        let mut current: Vec<&str> = Vec::new();
        let text = read(&path);
        for line in text.lines().filter(|line| !is_comment(line)) {
            current.push(line);
            if line.trim_end().ends_with(';') {
                let statement = current.join("\n");
                statements.push(statement.trim().trim_end_matches(';').to_owned());
                current.clear();
            }
        }
        assert!(
            current.iter().all(|line| line.trim().is_empty()),
            "{file}: text after the last statement"
        );
        writeln!(
            out,
            "    MigrationDef {{ version: {version}, name: {name:?}, file: {file:?}, statements: &{statements:?} }},"
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
}
