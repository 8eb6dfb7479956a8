//! The command line: subcommands, options and their help texts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `mintid --version`: this tool's version and that of the core it was built with.
fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| format!("{} (core {})", env!("CARGO_PKG_VERSION"), mintid::VERSION))
}

/// `mintid`: generate, inspect and verify IDs with mintid's core.
#[derive(Debug, Parser)]
#[command(
    name = "mintid",
    version = version(),
    propagate_version = true,
    about = "Generate, inspect and verify IDs: Snowflakes, UUIDv7s, idempotency keys, payload \
             fingerprints, grants and signed request IDs, with the same core as mintid's \
             Rust, Python, JVM and JavaScript packages; print the store's shared SQL.",
    long_about = None
)]
pub struct Cli {
    /// Write JSON to stdout (64-bit IDs as strings).
    #[arg(long, global = true)]
    pub json: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate Snowflake IDs (64-bit, time-ordered, unique per worker).
    Snowflake(SnowflakeArgs),
    /// Generate RFC 9562 UUIDv7s, strictly increasing.
    Uuid7(Uuid7Args),
    /// Decode a Snowflake (decimal or 13-character base32), a UUID (any of
    /// its four text forms), or a signed request ID or grant (unverified).
    Inspect(InspectArgs),
    /// Show a Snowflake layout: bits, epoch, rate, and when it runs out.
    /// Without a preset or --bits, list every preset.
    Layout(LayoutCommandArgs),
    /// Idempotency keys: validate, read a header, build from fields, derive
    /// from a payload.
    #[command(subcommand)]
    Key(KeyCommand),
    /// The payload fingerprint: RFC 8785 canonical JSON, then SHA-256.
    Fingerprint(FingerprintArgs),
    /// Grants: a server secret's right, given to one client scope until an
    /// expiry, to mint signed request IDs offline.
    #[command(subcommand)]
    Grant(GrantCommand),
    /// Request IDs: mint signed ones from a grant, verify signed or
    /// unsigned ones.
    #[command(subcommand, name = "request-id")]
    RequestId(RequestIdCommand),
    /// The shared SQL as the core holds it: named queries rendered for a
    /// database library's placeholders, migrations, and the schema's limits.
    #[command(subcommand)]
    Schema(SchemaCommand),
}

/// What `mintid schema` prints.
#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Every named query of a dialect, rendered for a placeholder style:
    /// `-- name: NAME :KIND` blocks, or with --json each query's name,
    /// kind, SQL and parameter names in binding order.
    Queries(SchemaQueriesArgs),
    /// The numbered migrations of a dialect, split into statements.
    Migrations(SchemaDialectArgs),
    /// The limits the store drivers enforce before they write.
    Limits,
}

/// The dialect and placeholder style of `mintid schema queries`.
#[derive(Debug, Args)]
pub struct SchemaQueriesArgs {
    #[command(flatten)]
    pub dialect: SchemaDialectArgs,

    /// question (`?`), numbered (`$1`) or format (`%s`).
    #[arg(long, value_name = "STYLE", default_value = "question")]
    pub placeholder: String,
}

/// The dialect of a `mintid schema` command.
#[derive(Debug, Args)]
pub struct SchemaDialectArgs {
    /// postgres, mysql or sqlite.
    #[arg(long, value_name = "DIALECT")]
    pub dialect: String,
}

/// Which Snowflake layout: a preset, or field widths; the epoch and tick
/// may be changed on either.
#[derive(Debug, Args)]
pub struct LayoutArgs {
    /// A preset: classic, twitter, datacenter-worker, sonyflake-like, js-safe
    /// (default classic).
    #[arg(long, value_name = "PRESET", conflicts_with = "bits")]
    pub layout: Option<String>,

    /// Field widths TIME,WORKER,SEQUENCE, with the worker field optionally
    /// split as DATACENTER+WORKER (e.g. 41,5+5,12); epoch 2025-01-01 and
    /// 1 ms ticks unless changed.
    #[arg(long, value_name = "T,W,S")]
    pub bits: Option<String>,

    #[command(flatten)]
    pub time: LayoutTimeArgs,
}

/// The epoch and tick options of a layout.
#[derive(Debug, Args)]
pub struct LayoutTimeArgs {
    /// The epoch, in Unix milliseconds.
    #[arg(long, value_name = "MS")]
    pub epoch: Option<u64>,

    /// The tick length, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub tick: Option<u64>,
}

impl LayoutTimeArgs {
    /// Whether `--epoch` or `--tick` was given.
    pub fn is_given(&self) -> bool {
        self.epoch.is_some() || self.tick.is_some()
    }
}

/// `mintid snowflake`.
#[derive(Debug, Args)]
pub struct SnowflakeArgs {
    /// How many IDs.
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1,
          value_parser = parse_count)]
    pub count: u64,

    /// The worker id (within the datacenter, when the layout splits the
    /// worker field).
    #[arg(long, value_name = "W", default_value_t = 0)]
    pub worker: u64,

    /// The datacenter id, for layouts that split the worker field
    /// (twitter, datacenter-worker, --bits T,D+W,S).
    #[arg(long, value_name = "D")]
    pub datacenter: Option<u64>,

    #[command(flatten)]
    pub layout: LayoutArgs,

    /// How to write the IDs.
    #[arg(long, value_enum, default_value_t = SnowflakeFormat::Decimal)]
    pub format: SnowflakeFormat,
}

/// The text forms of a Snowflake ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SnowflakeFormat {
    /// Decimal digits.
    Decimal,
    /// 13 Crockford base32 characters, sortable as text.
    Base32,
}

/// `mintid uuid7`.
#[derive(Debug, Args)]
pub struct Uuid7Args {
    /// How many IDs.
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1,
          value_parser = parse_count)]
    pub count: u64,

    /// How to write the IDs.
    #[arg(long, value_enum, default_value_t = UuidFormat::Hyphenated)]
    pub format: UuidFormat,
}

/// The text forms of a UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UuidFormat {
    /// 8-4-4-4-12 lower-case hex (36 characters).
    Hyphenated,
    /// 32 lower-case hex digits.
    Simple,
    /// urn:uuid: and the hyphenated form (45 characters).
    Urn,
    /// 26 Crockford base32 characters.
    Base32,
}

/// `mintid inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The ID: decimal digits or 13 base32 characters for a Snowflake; 36,
    /// 32, 45 or 26 characters for a UUID; 58 for a signed request ID or a
    /// grant.
    #[arg(value_name = "ID")]
    pub id: String,

    #[command(flatten)]
    pub layout: LayoutArgs,
}

/// `mintid layout`.
#[derive(Debug, Args)]
pub struct LayoutCommandArgs {
    /// A preset name.
    #[arg(value_name = "PRESET", conflicts_with = "bits")]
    pub preset: Option<String>,

    /// Field widths TIME,WORKER,SEQUENCE (worker optionally DATACENTER+WORKER).
    #[arg(long, value_name = "T,W,S")]
    pub bits: Option<String>,

    #[command(flatten)]
    pub time: LayoutTimeArgs,
}

/// `mintid key …`.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Validate a key's parts and print its canonical text kind:scope:id.
    Check {
        /// The operation, e.g. order.create.
        kind: String,
        /// Whose key: a tenant, user or client.
        scope: String,
        /// Which attempt: the client's key or a business id.
        id: String,
    },
    /// Read a canonical key text kind:scope:id back into its parts.
    Parse {
        /// The canonical text.
        text: String,
    },
    /// Read the value of an Idempotency-Key header (a quoted Structured
    /// Field String, or bare) and print the id.
    Header {
        /// The header value, e.g. '"8e03978e-40d5"'.
        value: String,
    },
    /// Build a key whose id comes from business fields (injective: two
    /// different lists never give the same id).
    Build {
        /// The operation.
        kind: String,
        /// Whose key.
        scope: String,
        /// The business fields, in order.
        #[arg(required = true, value_name = "FIELD")]
        fields: Vec<String>,
    },
    /// Derive a key from the payload (a UUIDv8 of kind, scope and the
    /// payload's fingerprint), for requests that carry no key.
    Derive {
        /// The operation.
        kind: String,
        /// Whose key.
        scope: String,
        #[command(flatten)]
        payload: PayloadArgs,
    },
}

/// Where a payload comes from and which of it counts.
#[derive(Debug, Args)]
pub struct PayloadArgs {
    /// The payload file; stdin when absent or '-'.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Leave out the field at this JSON Pointer (repeatable), e.g. /sent_at.
    #[arg(long, value_name = "PTR", conflicts_with = "bytes")]
    pub exclude: Vec<String>,

    /// Keep only the values at these JSON Pointers (repeatable): what is
    /// hashed is then an object keyed by the pointers' texts.
    #[arg(long, value_name = "PTR", conflicts_with = "bytes")]
    pub include: Vec<String>,

    /// Hash the raw bytes instead of reading JSON.
    #[arg(long)]
    pub bytes: bool,
}

/// `mintid fingerprint`.
#[derive(Debug, Args)]
pub struct FingerprintArgs {
    #[command(flatten)]
    pub payload: PayloadArgs,

    /// Print the canonical JSON text that is hashed, instead of the
    /// fingerprint (with --json: both).
    #[arg(long, conflicts_with = "bytes")]
    pub canonical: bool,
}

/// `mintid grant …`.
#[derive(Debug, Subcommand)]
pub enum GrantCommand {
    /// Issue a grant for a scope, valid for a time to live.
    Issue {
        /// The server's key file: one key a line, `<key id> <secret as hex>`
        /// (at least 32 bytes, i.e. 64 hex digits); `#` starts a comment.
        #[arg(long, value_name = "FILE")]
        secret_file: PathBuf,
        /// Which key of the file issues the grant (default: the first).
        #[arg(long, value_name = "K")]
        key_id: Option<u32>,
        /// The client's scope (user, session or tenant), 1 to 64 bytes.
        #[arg(long, value_name = "S")]
        scope: String,
        /// How long the grant lasts, e.g. 15m, 1h, 3600s.
        #[arg(long, value_name = "T")]
        ttl: String,
    },
    /// Print a new random key line for a key file: `<key id> <64 hex digits>`.
    Secret {
        /// The key id.
        #[arg(long, value_name = "K", default_value_t = 1)]
        key_id: u32,
    },
}

/// `mintid request-id …`.
#[derive(Debug, Subcommand)]
pub enum RequestIdCommand {
    /// Mint signed request IDs from a grant (offline: a fresh UUIDv7 and
    /// its tag).
    Mint {
        /// The grant's text (58 characters).
        #[arg(long, value_name = "G")]
        grant: String,
        /// How many IDs.
        #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1,
              value_parser = parse_count)]
        count: u64,
    },
    /// Verify a request ID for the caller's scope and print its UUIDv7; a
    /// failure prints its code and exits 1.
    Verify {
        /// The server's key file (as for `grant issue`): every key in it
        /// verifies.
        #[arg(long, value_name = "FILE", required_unless_present = "unsigned")]
        secret_file: Option<PathBuf>,
        /// The scope of the caller (signed IDs only).
        #[arg(
            long,
            value_name = "S",
            required_unless_present = "unsigned",
            conflicts_with = "unsigned"
        )]
        scope: Option<String>,
        /// Verify an unsigned request ID: a UUIDv7 checked for freshness only.
        #[arg(long, conflicts_with = "secret_file")]
        unsigned: bool,
        /// The greatest age of the ID's UUIDv7, e.g. 24h (default 24h).
        #[arg(long, value_name = "T")]
        max_age: Option<String>,
        /// How far ahead of this clock the UUIDv7 may be, e.g. 5m (default 5m).
        #[arg(long, value_name = "T")]
        max_skew: Option<String>,
        /// The request ID.
        #[arg(value_name = "ID")]
        id: String,
    },
}

/// Reads `-n`: a whole number, at least 1.
fn parse_count(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(count) if count >= 1 => Ok(count),
        _ => Err("expected a whole number of at least 1".to_owned()),
    }
}
