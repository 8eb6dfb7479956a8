//! `mintid schema`: the shared SQL as the core compiled it in.

use mintid::store::{Dialect, Manifest, Placeholder, limits};
use serde_json::{Value, json};

use crate::cli::SchemaCommand;
use crate::error::CliError;
use crate::output::Output;

/// Runs `mintid schema …`.
pub fn run(command: &SchemaCommand, out: &mut Output) -> Result<(), CliError> {
    match command {
        SchemaCommand::Queries(args) => {
            let placeholder = Placeholder::parse(&args.placeholder).ok_or_else(|| {
                CliError::usage(format!(
                    "unknown placeholder style {:?}: question, numbered or format",
                    args.placeholder
                ))
            })?;
            let manifest = Manifest::new(dialect(&args.dialect.dialect)?, placeholder);
            let statements = manifest.statements();
            if out.is_json() {
                let list: Vec<Value> = statements
                    .iter()
                    .map(|s| json!({
                        "name": s.name,
                        "kind": s.kind.as_str(),
                        "sql": s.sql,
                        "params": s.params,
                        "param_types": s.param_types.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
                    }))
                    .collect();
                return out.json_value(&Value::Array(list));
            }
            for statement in statements {
                out.line(&format!(
                    "-- name: {} :{}",
                    statement.name,
                    statement.kind.as_str()
                ))?;
                out.line(&format!("{};\n", statement.sql))?;
            }
            Ok(())
        }
        SchemaCommand::Migrations(args) => {
            let migrations =
                Manifest::new(dialect(&args.dialect)?, Placeholder::Question).migrations();
            if out.is_json() {
                let list: Vec<Value> = migrations
                    .iter()
                    .map(|m| json!({"version": m.version, "name": m.name, "file": m.file, "statements": m.statements}))
                    .collect();
                return out.json_value(&Value::Array(list));
            }
            for migration in migrations {
                out.line(&format!("-- {}", migration.file))?;
                for statement in &migration.statements {
                    out.line(&format!("{statement};"))?;
                }
            }
            Ok(())
        }
        SchemaCommand::Limits => {
            if out.is_json() {
                let map: serde_json::Map<String, Value> = limits::ALL
                    .iter()
                    .map(|(name, max)| ((*name).to_owned(), json!(max)))
                    .collect();
                return out.json_value(&Value::Object(map));
            }
            for (name, max) in limits::ALL {
                out.line(&format!("{name}\t{max}"))?;
            }
            Ok(())
        }
    }
}

fn dialect(name: &str) -> Result<Dialect, CliError> {
    Dialect::parse(name).ok_or_else(|| {
        CliError::usage(format!(
            "unknown dialect {name:?}: postgres, mysql or sqlite"
        ))
    })
}
