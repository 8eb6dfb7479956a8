//! SQL identifiers a caller names (its table and columns), validated and
//! quoted per dialect before the core puts them into a statement.
//!
//! The rule is deliberately narrow: each part is an ASCII letter or `_`,
//! then ASCII letters, digits or `_`, 1 to 63 bytes (PostgreSQL's limit, under
//! MySQL's 64); at most two parts, `schema.table`, for a table. Nothing else
//! is accepted, so no quoting rule of any dialect can be escaped. Quoting
//! keeps the name's case: PostgreSQL stores an unquoted `Orders` as
//! `orders`, so name the table as the database stores it.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::error::{TransitionError, TransitionErrorKind};
use crate::quote::QuotedStr;
use crate::store::Dialect;

/// The longest part of an identifier, in bytes.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// A validated SQL identifier: a column, or a table with an optional schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identifier {
    parts: Vec<String>,
}

impl Identifier {
    /// A column name: one part.
    pub fn column(text: &str) -> Result<Self, TransitionError> {
        Self::parse(text, 1)
    }

    /// A table name: one part, or `schema.table`.
    pub fn table(text: &str) -> Result<Self, TransitionError> {
        Self::parse(text, 2)
    }

    fn parse(text: &str, max_parts: usize) -> Result<Self, TransitionError> {
        let refuse = |reason: &str| {
            TransitionError::new(
                TransitionErrorKind::InvalidIdentifier,
                format!("identifier {} {reason}", QuotedStr(text)),
            )
        };
        let parts: Vec<&str> = text.split('.').collect();
        if parts.len() > max_parts {
            return Err(refuse(if max_parts == 1 {
                "must be one name, without a '.'"
            } else {
                "must be a name or schema.name"
            }));
        }
        for part in &parts {
            if part.is_empty() || part.len() > MAX_IDENTIFIER_BYTES {
                return Err(refuse("must have parts of 1 to 63 bytes"));
            }
            let mut bytes = part.bytes();
            let first_ok = bytes
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
            if !first_ok || !bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(refuse(
                    "must be ASCII letters, digits and '_', not starting with a digit",
                ));
            }
        }
        Ok(Self {
            parts: parts.into_iter().map(String::from).collect(),
        })
    }

    /// The identifier as the caller wrote it.
    pub fn as_text(&self) -> String {
        self.parts.join(".")
    }

    /// The identifier quoted for `dialect`: each part in double quotes
    /// (PostgreSQL, SQLite) or backticks (MySQL), a quote inside doubled
    /// (none can be: the rule above admits none), parts joined by `.`.
    pub fn quoted(&self, dialect: Dialect) -> String {
        let quote = match dialect {
            Dialect::Postgres | Dialect::Sqlite => '"',
            Dialect::Mysql => '`',
        };
        let mut out = String::new();
        for (at, part) in self.parts.iter().enumerate() {
            if at > 0 {
                out.push('.');
            }
            out.push(quote);
            for c in part.chars() {
                if c == quote {
                    out.push(quote);
                }
                out.push(c);
            }
            out.push(quote);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_per_dialect_and_refuses_the_rest() {
        let table = Identifier::table("shop.orders").unwrap();
        assert_eq!(table.quoted(Dialect::Postgres), "\"shop\".\"orders\"");
        assert_eq!(table.quoted(Dialect::Mysql), "`shop`.`orders`");
        assert_eq!(
            Identifier::column("Status_2")
                .unwrap()
                .quoted(Dialect::Sqlite),
            "\"Status_2\""
        );
        for bad in [
            "", "1st", "a b", "a\"b", "a`b", "a;b", "é", "a.b.c", ".a", "a.",
        ] {
            assert!(Identifier::table(bad).is_err(), "{bad:?}");
        }
        assert!(Identifier::column("a.b").is_err());
        assert!(Identifier::column(&"a".repeat(63)).is_ok());
        assert!(Identifier::column(&"a".repeat(64)).is_err());
    }
}
