//! The core's version, which each host package reports beside its own.

/// The version of the `mintid` core crate this library was built from.
#[uniffi::export]
pub fn core_version() -> String {
    mintid::VERSION.into()
}
