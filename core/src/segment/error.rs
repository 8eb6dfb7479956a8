//! The one error type of the segment allocator.

use core::fmt;

/// Why a segment rule refused. See [`kind`](SegmentError::kind) and
/// [`code`](SegmentError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentError {
    detail: Detail,
}

/// The kinds of [`SegmentError`], each with a stable [`code`](SegmentErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SegmentErrorKind {
    /// `segment.invalid_policy`: a policy value is out of range.
    InvalidPolicy,
    /// `segment.invalid_row`: a fetched row does not describe a segment
    /// (step 0, `max_id < step`, above 2^63 − 1, or not the step requested).
    InvalidRow,
    /// `segment.went_back`: a fetched segment is not above the IDs this
    /// allocator already holds (the tag's row was reset or restored).
    WentBack,
    /// `segment.no_fetch`: a fetch result arrived while no fetch was in flight.
    NoFetch,
    /// `segment.invalid_tag`: a tag that is not 1 to 64 bytes of ASCII.
    InvalidTag,
}

impl SegmentErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidPolicy => "segment.invalid_policy",
            Self::InvalidRow => "segment.invalid_row",
            Self::WentBack => "segment.went_back",
            Self::NoFetch => "segment.no_fetch",
            Self::InvalidTag => "segment.invalid_tag",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    InvalidPolicy {
        field: &'static str,
        reason: &'static str,
    },
    InvalidRow {
        max_id: u64,
        step: u64,
        requested: u64,
    },
    WentBack {
        first: u64,
        highest: u64,
    },
    NoFetch,
    InvalidTag {
        bytes: usize,
    },
}

impl SegmentError {
    pub(crate) const fn invalid_policy(field: &'static str, reason: &'static str) -> Self {
        Self {
            detail: Detail::InvalidPolicy { field, reason },
        }
    }

    pub(crate) const fn invalid_row(max_id: u64, step: u64, requested: u64) -> Self {
        Self {
            detail: Detail::InvalidRow {
                max_id,
                step,
                requested,
            },
        }
    }

    pub(crate) const fn went_back(first: u64, highest: u64) -> Self {
        Self {
            detail: Detail::WentBack { first, highest },
        }
    }

    pub(crate) const fn invalid_tag(bytes: usize) -> Self {
        Self {
            detail: Detail::InvalidTag { bytes },
        }
    }

    pub(crate) const fn no_fetch() -> Self {
        Self {
            detail: Detail::NoFetch,
        }
    }

    /// What went wrong.
    pub const fn kind(&self) -> SegmentErrorKind {
        match self.detail {
            Detail::InvalidPolicy { .. } => SegmentErrorKind::InvalidPolicy,
            Detail::InvalidRow { .. } => SegmentErrorKind::InvalidRow,
            Detail::WentBack { .. } => SegmentErrorKind::WentBack,
            Detail::NoFetch => SegmentErrorKind::NoFetch,
            Detail::InvalidTag { .. } => SegmentErrorKind::InvalidTag,
        }
    }

    /// The stable dotted code, e.g. `"segment.went_back"`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail {
            Detail::InvalidPolicy { field, reason } => {
                write!(f, "invalid segment policy: {field} {reason}")
            }
            Detail::InvalidRow {
                max_id,
                step,
                requested,
            } => write!(
                f,
                "fetched row (max_id {max_id}, step {step}) is not a segment of the requested \
                 step {requested} (need 1 ≤ step ≤ max_id ≤ 2^63 - 1)"
            ),
            Detail::WentBack { first, highest } => write!(
                f,
                "fetched segment starts at {first}, not above {highest} already held: was the \
                 tag's row reset?"
            ),
            Detail::NoFetch => f.write_str("a fetch result arrived while no fetch was in flight"),
            Detail::InvalidTag { bytes } => write!(
                f,
                "a segment tag is 1 to 64 bytes of ASCII, this one is {bytes} bytes or not ASCII"
            ),
        }
    }
}

impl core::error::Error for SegmentError {}
