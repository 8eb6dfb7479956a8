//! One module per subcommand.

mod fingerprint;
mod generate;
mod inspect;
mod key;
mod layout_info;
mod payload;
mod request_id;
mod schema;

use crate::cli::Command;
use crate::error::CliError;
use crate::output::Output;

/// Runs a parsed command, writing to `out`.
pub fn run(command: &Command, out: &mut Output) -> Result<(), CliError> {
    match command {
        Command::Snowflake(args) => generate::snowflake(args, out),
        Command::Uuid7(args) => generate::uuid7(args, out),
        Command::Inspect(args) => inspect::run(args, out),
        Command::Layout(args) => layout_info::run(args, out),
        Command::Key(command) => key::run(command, out),
        Command::Fingerprint(args) => fingerprint::run(args, out),
        Command::Grant(command) => request_id::grant(command, out),
        Command::RequestId(command) => request_id::request_id(command, out),
        Command::Schema(command) => schema::run(command, out),
    }
}
