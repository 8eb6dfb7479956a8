//! Field selection by JSON Pointer (RFC 6901).
//!
//! A [`FieldSelection`] holds pointers to *exclude* (removed before hashing,
//! e.g. `/timestamp`, `/meta/trace_id`) and pointers to *include* (when any
//! are given, only the values they point to are hashed). The rules, also in
//! `docs/spec.md`:
//!
//! 1. Every exclude pointer is resolved against the document as parsed;
//!    then every location found is removed at once: an object member
//!    disappears, an array element is taken out and later elements move up.
//!    So `/a/0` and `/a/1` remove the first two elements of `a`.
//! 2. If the include list is empty, the result is the document after
//!    exclusion. Otherwise the result is an object whose member names are
//!    the include pointers' texts and whose values are the values they point
//!    to in the document after exclusion, for each pointer that resolves
//!    (e.g. `{"/amount":12.5,"/currency":"EUR"}`). This depends only on the
//!    selected values, never on anything else in the document.
//! 3. A pointer that does not resolve (a missing member, an index past the
//!    end, a step into a string or number) is ignored. An array step matches
//!    only a token of the form `0` or `[1-9][0-9]*`; `-` never matches.
//! 4. Invalid pointer syntax is `fingerprint.invalid_pointer`, and so is an
//!    exclude pointer to the whole document (`""`).

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use super::error::{FingerprintError, FingerprintErrorKind as Kind};
use super::jcs::{cmp_utf16, find_member, write_members, write_value};
use super::json::Value;

/// A JSON Pointer (RFC 6901) in its JSON-string form, e.g. `/meta/trace_id`.
///
/// `~1` stands for `/` and `~0` for `~` inside a reference token; the text
/// form is unique for each list of tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JsonPointer {
    text: String,
    tokens: Vec<String>,
}

impl JsonPointer {
    /// Parses the JSON-string form: empty (the whole document) or `/`
    /// followed by reference tokens separated by `/`.
    pub fn parse(text: &str) -> Result<Self, FingerprintError> {
        let Some(rest) = text.strip_prefix('/') else {
            if text.is_empty() {
                return Ok(Self {
                    text: String::new(),
                    tokens: Vec::new(),
                });
            }
            return Err(FingerprintError::about(
                Kind::InvalidPointer,
                "JSON Pointer must be empty or start with '/':",
                text,
            ));
        };
        let tokens = rest
            .split('/')
            .map(|raw| unescape_token(raw, text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            text: text.to_owned(),
            tokens,
        })
    }

    /// The pointer's text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The unescaped reference tokens.
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = &str> {
        self.tokens.iter().map(String::as_str)
    }

    /// Whether this is the empty pointer, which names the whole document.
    pub fn is_root(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The value this pointer names in `root`, if any.
    pub(crate) fn resolve<'v, 'a>(&self, root: &'v Value<'a>) -> Option<&'v Value<'a>> {
        self.tokens
            .iter()
            .try_fold(root, |value, token| match value {
                Value::Object(members) => find_member(members, token),
                Value::Array(elements) => array_index(token).and_then(|i| elements.get(i)),
                _ => None,
            })
    }
}

fn unescape_token(raw: &str, pointer: &str) -> Result<String, FingerprintError> {
    let mut token = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            token.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => token.push('~'),
            Some('1') => token.push('/'),
            _ => {
                return Err(FingerprintError::about(
                    Kind::InvalidPointer,
                    "JSON Pointer has '~' not followed by '0' or '1':",
                    pointer,
                ));
            }
        }
    }
    Ok(token)
}

/// The array index a reference token names: `0` or `[1-9][0-9]*` (RFC 6901
/// §4), or `None` (also for `-` and for values beyond `usize`).
fn array_index(token: &str) -> Option<usize> {
    let bytes = token.as_bytes();
    let canonical = match bytes {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if canonical { token.parse().ok() } else { None }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for JsonPointer {
    type Err = FingerprintError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

/// Which parts of a JSON payload a fingerprint covers (see the module docs).
///
/// The default selects the whole document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelection {
    /// Sorted by the UTF-16 code units of their texts, without repeats.
    include: Vec<JsonPointer>,
    /// In the order given, without repeats.
    exclude: Vec<JsonPointer>,
    /// The exclude pointers as a tree of tokens.
    excluded: PathTree,
}

impl FieldSelection {
    /// The whole document.
    pub const fn all() -> Self {
        Self {
            include: Vec::new(),
            exclude: Vec::new(),
            excluded: PathTree::new(),
        }
    }

    /// A selection from lists of pointer texts (either may be empty).
    pub fn new<S: AsRef<str>>(include: &[S], exclude: &[S]) -> Result<Self, FingerprintError> {
        let mut selection = Self::all();
        for pointer in include {
            selection = selection.include(pointer.as_ref())?;
        }
        for pointer in exclude {
            selection = selection.exclude(pointer.as_ref())?;
        }
        Ok(selection)
    }

    /// Adds a pointer to the include list.
    pub fn include(mut self, pointer: &str) -> Result<Self, FingerprintError> {
        let pointer = JsonPointer::parse(pointer)?;
        if let Err(at) = self
            .include
            .binary_search_by(|p| cmp_utf16(&p.text, &pointer.text))
        {
            self.include.insert(at, pointer);
        }
        Ok(self)
    }

    /// Adds a pointer to the exclude list. The empty pointer (the whole
    /// document) cannot be excluded.
    pub fn exclude(mut self, pointer: &str) -> Result<Self, FingerprintError> {
        let pointer = JsonPointer::parse(pointer)?;
        if pointer.is_root() {
            return Err(FingerprintError::about(
                Kind::InvalidPointer,
                "JSON Pointer \"\" (the whole document) cannot be excluded",
                "",
            ));
        }
        if !self.exclude.contains(&pointer) {
            self.excluded.insert(&pointer.tokens);
            self.exclude.push(pointer);
        }
        Ok(self)
    }

    /// The include pointers, in JCS order of their texts.
    pub fn included(&self) -> &[JsonPointer] {
        &self.include
    }

    /// The exclude pointers, in the order added.
    pub fn excluded(&self) -> &[JsonPointer] {
        &self.exclude
    }

    /// Whether this selects the whole document unchanged.
    pub fn is_all(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Appends the canonical form of the selected part of `document`.
    pub(crate) fn write_selected(&self, mut document: Value<'_>, out: &mut String) {
        self.excluded.remove_from(&mut document);
        if self.include.is_empty() {
            write_value(&document, out);
        } else {
            let selected = self
                .include
                .iter()
                .filter_map(|p| p.resolve(&document).map(|value| (p.as_str(), value)));
            write_members(selected, out);
        }
    }
}

/// Pointers merged by common prefix; `whole` marks a pointer that ends here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PathTree {
    whole: bool,
    children: Vec<(String, PathTree)>,
}

impl PathTree {
    const fn new() -> Self {
        Self {
            whole: false,
            children: Vec::new(),
        }
    }

    fn insert(&mut self, tokens: &[String]) {
        let Some((first, rest)) = tokens.split_first() else {
            self.whole = true;
            return;
        };
        let at = match self.children.iter().position(|(token, _)| token == first) {
            Some(at) => at,
            None => {
                self.children.push((first.clone(), Self::new()));
                self.children.len() - 1
            }
        };
        if let Some((_, child)) = self.children.get_mut(at) {
            child.insert(rest);
        }
    }

    fn child(&self, token: &str) -> Option<&Self> {
        self.children
            .iter()
            .find(|(t, _)| t == token)
            .map(|(_, child)| child)
    }

    /// Removes every location this tree names below `value`, all resolved
    /// against `value` as it was before any removal.
    fn remove_from(&self, value: &mut Value<'_>) {
        match value {
            Value::Object(members) => members.retain_mut(|member| match self.child(&member.name) {
                Some(child) if child.whole => false,
                Some(child) => {
                    child.remove_from(&mut member.value);
                    true
                }
                None => true,
            }),
            Value::Array(elements) => {
                let mut doomed = Vec::new();
                for (token, child) in &self.children {
                    let Some(i) = array_index(token) else {
                        continue;
                    };
                    let Some(element) = elements.get_mut(i) else {
                        continue;
                    };
                    if child.whole {
                        doomed.push(i);
                    } else {
                        child.remove_from(element);
                    }
                }
                if !doomed.is_empty() {
                    let mut i = 0;
                    elements.retain(|_| {
                        let keep = !doomed.contains(&i);
                        i += 1;
                        keep
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::canonicalize_selection;
    use alloc::string::ToString;
    use alloc::vec;

    fn select(text: &str, include: &[&str], exclude: &[&str]) -> String {
        let selection = FieldSelection::new(include, exclude).unwrap();
        canonicalize_selection(text.as_bytes(), &selection).unwrap()
    }

    #[test]
    fn pointer_syntax() {
        let p = JsonPointer::parse("/a~1b/~0c/0/").unwrap();
        assert_eq!(p.tokens().collect::<Vec<_>>(), vec!["a/b", "~c", "0", ""]);
        assert_eq!(p.to_string(), "/a~1b/~0c/0/");
        assert!(JsonPointer::parse("").unwrap().is_root());
        for bad in ["a", "/a~", "/a~2", "#/a"] {
            assert_eq!(
                JsonPointer::parse(bad).unwrap_err().code(),
                "fingerprint.invalid_pointer",
                "{bad}"
            );
        }
        assert_eq!(
            FieldSelection::all().exclude("").unwrap_err().code(),
            "fingerprint.invalid_pointer"
        );
    }

    #[test]
    fn array_index_tokens() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("10"), Some(10));
        for bad in ["01", "-", "", "-1", "+1", "1a", "99999999999999999999999"] {
            assert_eq!(array_index(bad), None, "{bad}");
        }
    }

    #[test]
    fn exclusion() {
        let doc = r#"{"a":1,"ts":"x","meta":{"trace_id":"t","v":2},"list":[10,11,12,13]}"#;
        assert_eq!(
            select(
                doc,
                &[],
                &["/ts", "/meta/trace_id", "/list/1", "/list/0", "/missing/x"]
            ),
            r#"{"a":1,"list":[12,13],"meta":{"v":2}}"#
        );
        assert_eq!(
            select(doc, &[], &["/a/b", "/list/-", "/list/9", "/list/01"]),
            { r#"{"a":1,"list":[10,11,12,13],"meta":{"trace_id":"t","v":2},"ts":"x"}"# }
        );
        assert_eq!(select(doc, &[], &["/meta", "/meta/v"]), {
            r#"{"a":1,"list":[10,11,12,13],"ts":"x"}"#
        });
    }

    #[test]
    fn inclusion() {
        let doc = r#"{"amount":12.50,"currency":"EUR","ts":1,"items":[{"sku":"x","n":2}]}"#;
        assert_eq!(
            select(doc, &["/currency", "/amount", "/items/0/sku", "/nope"], &[]),
            r#"{"/amount":12.5,"/currency":"EUR","/items/0/sku":"x"}"#
        );
        assert_eq!(
            select(doc, &["/items"], &["/items/0/n"]),
            r#"{"/items":[{"sku":"x"}]}"#
        );
        assert_eq!(select("7", &["/a"], &[]), "{}");
        assert_eq!(select("7", &[""], &[]), r#"{"":7}"#);
        assert_eq!(select(r#"{"a/b":1,"~":2}"#, &["/a~1b", "/~0"], &[]), {
            r#"{"/a~1b":1,"/~0":2}"#
        });
    }
}
