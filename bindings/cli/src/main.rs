//! The `mintid` command: generate, inspect and verify IDs.
//!
//! Output goes to stdout (plain text, or JSON with `--json`); an error is
//! one line on stderr, `mintid: <code>: <message>`, with exit status 1 for
//! invalid input or a failed verification and 2 for a usage error. A reader
//! that closes the pipe early stops the command quietly.

mod cli;
mod commands;
mod error;
mod key_file;
mod layout;
mod output;
mod time;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use mintid::store::Dialect;

use crate::cli::Cli;
use crate::error::CliError;
use crate::output::Output;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return clap_exit(&error),
    };
    let mut out = Output::stdout(cli.json);
    let result = commands::run(&cli.command, &mut out).and_then(|()| out.finish());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if error.is_reported() {
                let _ = writeln!(std::io::stderr(), "mintid: {error}");
            }
            ExitCode::from(error.exit())
        }
    }
}

/// Help and version go to stdout; a parse error becomes one `usage` line.
fn clap_exit(error: &clap::Error) -> ExitCode {
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = write!(std::io::stdout(), "{}", error.render());
        return ExitCode::SUCCESS;
    }
    let error = CliError::usage(format!("{} (see --help)", usage_message(error)));
    let _ = writeln!(std::io::stderr(), "mintid: {error}");
    ExitCode::from(error.exit())
}

/// The first paragraph of clap's message (the error and its details,
/// without the usage and tip that follow).
fn usage_message(error: &clap::Error) -> String {
    if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        return "a subcommand is required".to_owned();
    }
    let rendered = error.render().to_string();
    let paragraph: Vec<&str> = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .collect();
    let message = paragraph.join(" ").trim_start_matches("error: ").to_owned();
    match option_hint(error) {
        Some(hint) => format!("{message}; {hint}"),
        None => message,
    }
}

/// A hint for a value given where its option was due: a dialect name
/// alone (`mintid schema queries sqlite`) is `--dialect sqlite`.
fn option_hint(error: &clap::Error) -> Option<String> {
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(value)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    Dialect::parse(value).map(|_| format!("did you mean --dialect {value}?"))
}
