//! An input: what the host's database, Redis, broker or operation said,
//! pushed to a wire (`docs/spec.md`, "The wire", the input table).

use alloc::string::String;
use alloc::vec::Vec;

use mintid::store::{
    DbError, DbErrorClass, DriverError, FastAnswer, OperationOutcome, StoredResponse, Value, limits,
};

use crate::input_tag as tag;
use crate::read::Reader;
use crate::write::{put_bytes, put_list, put_optional, put_u64, put_value};

/// One input, as packed (texts a host pushes are kept as its bytes: the
/// core makes them storable when it reads them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// The first step.
    Start,
    /// The rows of the last `Run`.
    Rows(Vec<Vec<Value>>),
    /// The affected-row count of the last `Run`.
    Affected(u64),
    /// The last `Run` or transaction step failed: the executor's class and
    /// the database driver's message.
    Failed {
        /// The class (`0` unique violation … `4` other).
        class: DbErrorClass,
        /// The driver's message, as bytes.
        message: Vec<u8>,
    },
    /// Continue after a pause.
    Resume,
    /// The operation's outcome (record).
    Finish(Outcome),
    /// The last send succeeded (relay).
    Sent,
    /// The last send failed with this error (relay).
    SendFailed(Vec<u8>),
    /// Redis's answer to the last Redis step (record).
    Redis(RedisAnswer),
    /// Take the fast path's report (record).
    Report,
    /// The host stops the driver (heartbeat).
    Stop,
    /// Take the next run of IDs (segment).
    Take,
    /// Run the fetch a take said is due (segment).
    Fetch,
    /// The fetch due or under way is dropped (segment).
    Abandon,
    /// The process is a fork child (segment).
    Forked,
    /// Start a lease renewal or release, storing the generator's
    /// high-water time (Unix ms) read now.
    Mark(u64),
}

/// The operation's outcome, as packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It returned this response.
    Succeeded(StoredResponse),
    /// It failed as an operation failure.
    Failed {
        /// Whether it is worth retrying.
        retryable: bool,
        /// The error text, as bytes.
        message: Vec<u8>,
        /// An optional error response to replay with it.
        response: Option<StoredResponse>,
    },
    /// It returned something that is not a response: its type's name.
    NotAResponse(String),
    /// It raised an error of another kind.
    Raised {
        /// The type's name, as bytes.
        type_name: Vec<u8>,
        /// The message, as bytes.
        message: Vec<u8>,
    },
}

/// Redis's answer, as packed.
pub type RedisAnswer = FastAnswer;

const CLASSES: [DbErrorClass; 6] = [
    DbErrorClass::UniqueViolation,
    DbErrorClass::Serialization,
    DbErrorClass::ConnectionLost,
    DbErrorClass::Constraint,
    DbErrorClass::Other,
    DbErrorClass::SchemaMissing,
];

impl Input {
    /// Reads a packed input: its `now_millis` and the input, or
    /// `store.unexpected_row` when it is not in the layout.
    pub fn decode(packed: &[u8]) -> Result<(u64, Self), DriverError> {
        let mut reader = Reader::new(packed, "input");
        let input_tag = reader.u8()?;
        let now = reader.u64()?;
        let input = match input_tag {
            tag::START => Input::Start,
            tag::ROWS => Input::Rows(read_rows(&mut reader)?),
            tag::AFFECTED => Input::Affected(reader.u64()?),
            tag::FAILED => Input::Failed {
                class: class_of(reader.u8()?),
                message: reader.bytes()?,
            },
            tag::RESUME => Input::Resume,
            tag::FINISH => Input::Finish(read_outcome(&mut reader)?),
            tag::SENT => Input::Sent,
            tag::SEND_FAILED => Input::SendFailed(reader.bytes()?),
            tag::REDIS => Input::Redis(read_redis_answer(&mut reader)?),
            tag::REPORT => Input::Report,
            tag::STOP => Input::Stop,
            tag::TAKE => Input::Take,
            tag::FETCH => Input::Fetch,
            tag::ABANDON => Input::Abandon,
            tag::FORKED => Input::Forked,
            tag::MARK => Input::Mark(reader.u64()?),
            _ => return Err(reader.malformed()),
        };
        reader.end((now, input))
    }

    /// The input's name in `docs/spec.md` (`start`, `rows`, …, `report`).
    pub const fn name(&self) -> &'static str {
        match self {
            Input::Start => "start",
            Input::Rows(_) => "rows",
            Input::Affected(_) => "affected",
            Input::Failed { .. } => "failed",
            Input::Resume => "resume",
            Input::Finish(_) => "finish",
            Input::Sent => "sent",
            Input::SendFailed(_) => "send failed",
            Input::Redis(_) => "redis",
            Input::Report => "report",
            Input::Stop => "stop",
            Input::Take => "take",
            Input::Fetch => "fetch",
            Input::Abandon => "abandon",
            Input::Forked => "forked",
            Input::Mark(_) => "mark",
        }
    }

    /// Packs this input at `now_millis` (what a host's codec writes),
    /// appended to `out`.
    pub fn encode(&self, now_millis: u64, out: &mut Vec<u8>) {
        let input_tag = match self {
            Input::Start => tag::START,
            Input::Rows(_) => tag::ROWS,
            Input::Affected(_) => tag::AFFECTED,
            Input::Failed { .. } => tag::FAILED,
            Input::Resume => tag::RESUME,
            Input::Finish(_) => tag::FINISH,
            Input::Sent => tag::SENT,
            Input::SendFailed(_) => tag::SEND_FAILED,
            Input::Redis(_) => tag::REDIS,
            Input::Report => tag::REPORT,
            Input::Stop => tag::STOP,
            Input::Take => tag::TAKE,
            Input::Fetch => tag::FETCH,
            Input::Abandon => tag::ABANDON,
            Input::Forked => tag::FORKED,
            Input::Mark(_) => tag::MARK,
        };
        out.push(input_tag);
        put_u64(out, now_millis);
        match self {
            Input::Rows(rows) => put_list(out, rows.iter(), |out, row| {
                put_list(out, row.iter(), put_value);
            }),
            Input::Affected(count) => put_u64(out, *count),
            Input::Failed { class, message } => {
                let at = CLASSES.iter().position(|each| each == class).unwrap_or(4);
                out.push(u8::try_from(at).unwrap_or(4));
                put_bytes(out, message);
            }
            Input::Finish(outcome) => put_outcome(out, outcome),
            Input::SendFailed(error) => put_bytes(out, error),
            Input::Redis(answer) => put_redis_answer(out, answer),
            Input::Mark(high_water_millis) => put_u64(out, *high_water_millis),
            Input::Start
            | Input::Resume
            | Input::Sent
            | Input::Report
            | Input::Stop
            | Input::Take
            | Input::Fetch
            | Input::Abandon
            | Input::Forked => {}
        }
    }
}

impl Outcome {
    /// The core's outcome: error texts made storable, a raised failure's
    /// text composed ([`limits::raised_text`]).
    pub fn into_core(self) -> OperationOutcome {
        let text =
            |bytes: &[u8]| limits::storable_text_from_bytes(bytes, limits::RECORD_ERROR_MAX_BYTES);
        match self {
            Outcome::Succeeded(response) => OperationOutcome::Succeeded(response),
            Outcome::Failed {
                retryable,
                message,
                response,
            } => OperationOutcome::Failed {
                message: text(&message),
                retryable,
                response,
            },
            Outcome::NotAResponse(type_name) => OperationOutcome::NotAResponse { type_name },
            Outcome::Raised { type_name, message } => {
                OperationOutcome::raised(&type_name, &message)
            }
        }
    }
}

/// The database error of a `failed` input, its message read as UTF-8 with
/// U+FFFD where it breaks.
pub(crate) fn db_error(class: DbErrorClass, message: &[u8]) -> DbError {
    DbError {
        class,
        message: String::from_utf8_lossy(message).into_owned(),
    }
}

/// The class a host's executor gave a failed query: 0 unique violation, 1
/// serialization, 2 connection lost, 3 constraint, 4 other, 5 schema
/// missing; anything else other.
pub(crate) fn class_of(class: u8) -> DbErrorClass {
    CLASSES
        .get(usize::from(class))
        .copied()
        .unwrap_or(DbErrorClass::Other)
}

fn read_rows(reader: &mut Reader<'_>) -> Result<Vec<Vec<Value>>, DriverError> {
    reader.list(|reader| reader.list(Reader::value))
}

fn read_response(reader: &mut Reader<'_>) -> Result<StoredResponse, DriverError> {
    Ok(StoredResponse {
        content_type: reader.text()?,
        body: reader.bytes()?,
    })
}

fn put_response(out: &mut Vec<u8>, response: &StoredResponse) {
    put_bytes(out, &response.content_type);
    put_bytes(out, &response.body);
}

pub(crate) fn read_outcome(reader: &mut Reader<'_>) -> Result<Outcome, DriverError> {
    Ok(match reader.u8()? {
        0 => Outcome::Succeeded(read_response(reader)?),
        1 => Outcome::Failed {
            retryable: reader.flag()?,
            message: reader.bytes()?,
            response: reader.optional(read_response)?,
        },
        2 => Outcome::NotAResponse(reader.text()?),
        3 => Outcome::Raised {
            type_name: reader.bytes()?,
            message: reader.bytes()?,
        },
        _ => return Err(reader.malformed()),
    })
}

fn put_outcome(out: &mut Vec<u8>, outcome: &Outcome) {
    match outcome {
        Outcome::Succeeded(response) => {
            out.push(0);
            put_response(out, response);
        }
        Outcome::Failed {
            retryable,
            message,
            response,
        } => {
            out.push(1);
            out.push(u8::from(*retryable));
            put_bytes(out, message);
            put_optional(out, response.as_ref(), put_response);
        }
        Outcome::NotAResponse(type_name) => {
            out.push(2);
            put_bytes(out, type_name);
        }
        Outcome::Raised { type_name, message } => {
            out.push(3);
            put_bytes(out, type_name);
            put_bytes(out, message);
        }
    }
}

pub(crate) fn read_redis_answer(reader: &mut Reader<'_>) -> Result<FastAnswer, DriverError> {
    Ok(match reader.u8()? {
        0 => FastAnswer::Nil,
        1 => FastAnswer::Fields(reader.list(|reader| reader.optional(Reader::bytes))?),
        2 => FastAnswer::Failed(reader.text()?),
        3 => FastAnswer::NoScript,
        _ => return Err(reader.malformed()),
    })
}

fn put_redis_answer(out: &mut Vec<u8>, answer: &FastAnswer) {
    match answer {
        FastAnswer::Nil => out.push(0),
        FastAnswer::Fields(fields) => {
            out.push(1);
            put_list(out, fields.iter(), |out, field| {
                put_optional(out, field.as_deref(), put_bytes);
            });
        }
        FastAnswer::Failed(message) => {
            out.push(2);
            put_bytes(out, message);
        }
        FastAnswer::NoScript => out.push(3),
    }
}
