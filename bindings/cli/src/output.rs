//! Everything written to stdout: plain text or `--json`, buffered, and a
//! closed pipe turned into a quiet stop instead of a panic.

use std::io::{self, BufWriter, StdoutLock, Write};

use serde_json::{Map, Value};

use crate::error::CliError;

/// Named values shown as aligned `name  value` lines, or as one JSON object.
#[derive(Debug, Default)]
pub struct Report {
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    name: &'static str,
    json: Option<Value>,
    text: Option<String>,
}

impl Report {
    /// An empty report.
    pub fn new() -> Self {
        Self::default()
    }

    /// A value shown in both forms (text from the JSON value).
    pub fn field(&mut self, name: &'static str, value: impl Into<Value>) -> &mut Self {
        let json = value.into();
        let text = text_of(&json);
        self.entries.push(Entry {
            name,
            json: Some(json),
            text,
        });
        self
    }

    /// A value with its own text form.
    pub fn field_with_text(
        &mut self,
        name: &'static str,
        value: impl Into<Value>,
        text: impl Into<String>,
    ) -> &mut Self {
        self.entries.push(Entry {
            name,
            json: Some(value.into()),
            text: Some(text.into()),
        });
        self
    }

    /// A value in the JSON object only.
    pub fn json_only(&mut self, name: &'static str, value: impl Into<Value>) -> &mut Self {
        self.entries.push(Entry {
            name,
            json: Some(value.into()),
            text: None,
        });
        self
    }

    /// The JSON object.
    pub fn to_json(&self) -> Value {
        let object: Map<String, Value> = self
            .entries
            .iter()
            .filter_map(|entry| Some((entry.name.to_owned(), entry.json.clone()?)))
            .collect();
        Value::Object(object)
    }
}

/// The text of a JSON value in a report line.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Bool(true) => Some("yes".to_owned()),
        Value::Bool(false) => Some("no".to_owned()),
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// Buffered stdout in one of the two forms.
pub struct Output {
    out: BufWriter<StdoutLock<'static>>,
    json: bool,
}

impl Output {
    /// Stdout, writing JSON when `json` is set.
    pub fn stdout(json: bool) -> Self {
        Self {
            out: BufWriter::new(io::stdout().lock()),
            json,
        }
    }

    /// Whether `--json` was given.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// A report, as aligned lines or one JSON object.
    pub fn report(&mut self, report: &Report) -> Result<(), CliError> {
        if self.json {
            return self.json_value(&report.to_json());
        }
        let width = report
            .entries
            .iter()
            .filter(|entry| entry.text.is_some())
            .map(|entry| entry.name.len())
            .max()
            .unwrap_or(0);
        for entry in &report.entries {
            if let Some(text) = &entry.text {
                writeln!(self.out, "{:width$}  {text}", entry.name).map_err(write_error)?;
            }
        }
        Ok(())
    }

    /// A text line (for the plain form).
    pub fn line(&mut self, text: &str) -> Result<(), CliError> {
        writeln!(self.out, "{text}").map_err(write_error)
    }

    /// A JSON value, pretty-printed, and a line break.
    pub fn json_value(&mut self, value: &Value) -> Result<(), CliError> {
        serde_json::to_writer_pretty(&mut self.out, value)
            .map_err(|error| write_error(error.into()))?;
        writeln!(self.out).map_err(write_error)
    }

    /// Plain text in the plain form, or `{name: text}` as JSON.
    pub fn value(&mut self, name: &'static str, text: &str) -> Result<(), CliError> {
        if self.json {
            let mut report = Report::new();
            report.field(name, text);
            self.report(&report)
        } else {
            self.line(text)
        }
    }

    /// Starts a list of IDs: one per line, or a JSON array of strings
    /// written as the IDs come, so a long list is never held in memory.
    pub fn id_list(&mut self) -> IdList<'_> {
        IdList {
            output: self,
            written: 0,
        }
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> Result<(), CliError> {
        self.out.flush().map_err(write_error)
    }
}

/// A list of IDs being written; [`finish`](Self::finish) closes it.
pub struct IdList<'a> {
    output: &'a mut Output,
    written: u64,
}

impl IdList<'_> {
    /// Writes one ID (ASCII text, so JSON needs no escaping).
    pub fn push(&mut self, id: &str) -> Result<(), CliError> {
        let out = &mut self.output.out;
        let result = if !self.output.json {
            writeln!(out, "{id}")
        } else if self.written == 0 {
            write!(out, "[\n  \"{id}\"")
        } else {
            write!(out, ",\n  \"{id}\"")
        };
        self.written += 1;
        result.map_err(write_error)
    }

    /// Closes the JSON array.
    pub fn finish(self) -> Result<(), CliError> {
        if !self.output.json {
            return Ok(());
        }
        let close = if self.written == 0 { "[]\n" } else { "\n]\n" };
        self.output
            .out
            .write_all(close.as_bytes())
            .map_err(write_error)
    }
}

/// A failed write: quiet when the reader went away, reported otherwise.
fn write_error(error: io::Error) -> CliError {
    if error.kind() == io::ErrorKind::BrokenPipe {
        CliError::output_closed()
    } else {
        CliError::invalid(
            "output.write_failed",
            format!("cannot write to stdout: {error}"),
        )
    }
}
