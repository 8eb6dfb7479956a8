//! The Redis fast path's scripts (`schema/redis/*.lua`, compiled into the
//! core) for the uniffi hosts to load once; its decisions cross on the lane
//! (`mintid_lane_fast_*`, `lane_fast.rs`).

use mintid::store as core;

/// A script of the fast path: its name and its Lua text.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RedisScript {
    /// The name a call of the fast path gives.
    pub name: String,
    /// The Lua text (`schema/redis/<name>.lua`).
    pub text: String,
}

/// The fast path's scripts, for a host to load (`SCRIPT LOAD` or its
/// client's script object).
#[uniffi::export]
pub fn fast_path_scripts() -> Vec<RedisScript> {
    core::SCRIPTS
        .iter()
        .map(|(name, text)| RedisScript {
            name: (*name).into(),
            text: (*text).into(),
        })
        .collect()
}
