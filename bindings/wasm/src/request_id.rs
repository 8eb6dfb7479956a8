//! Request IDs: grants and minting (browsers), key rings and verification
//! (servers, under the `server` feature).

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use mintid::request_id::{Grant, RequestId};
use mintid::uuid7::Uuid7;
use wasm_bindgen::prelude::*;

use crate::error::to_js;

/// `[key_id, expires_millis]` of a grant text (`request_id.malformed_grant`).
#[wasm_bindgen(js_name = grantFields)]
pub fn grant_fields(grant: &str) -> Result<Vec<u64>, JsValue> {
    let grant = Grant::parse(grant).map_err(to_js)?;
    Ok(vec![u64::from(grant.key_id()), grant.expires_millis()])
}

/// The 32-byte grant key of a grant text.
#[wasm_bindgen(js_name = grantKey)]
pub fn grant_key(grant: &str) -> Result<Vec<u8>, JsValue> {
    Grant::parse(grant)
        .map(|grant| grant.grant_key().to_vec())
        .map_err(to_js)
}

/// The signed request ID text that `grant` mints for the UUIDv7 in `uuid`
/// (any of its text forms).
#[wasm_bindgen(js_name = mintRequestId)]
pub fn mint_request_id(grant: &str, uuid: &str) -> Result<String, JsValue> {
    let grant = Grant::parse(grant).map_err(to_js)?;
    let uuid = Uuid7::parse(uuid).map_err(to_js)?;
    Ok(grant.mint(&uuid).to_text())
}

/// `[key_id, expires_millis]` of a signed request ID text, unverified.
#[wasm_bindgen(js_name = requestIdFields)]
pub fn request_id_fields(text: &str) -> Result<Vec<u64>, JsValue> {
    let id = RequestId::parse(text).map_err(to_js)?;
    Ok(vec![u64::from(id.key_id()), id.expires_millis()])
}

/// The UUIDv7 of a signed request ID text, unverified (hyphenated).
#[wasm_bindgen(js_name = requestIdUnverifiedUuid)]
pub fn request_id_unverified_uuid(text: &str) -> Result<String, JsValue> {
    RequestId::parse(text)
        .map(|id| id.unverified_uuid().to_string())
        .map_err(to_js)
}

/// The 16 tag bytes of a signed request ID text.
#[wasm_bindgen(js_name = requestIdTag)]
pub fn request_id_tag(text: &str) -> Result<Vec<u8>, JsValue> {
    RequestId::parse(text)
        .map(|id| id.tag().to_vec())
        .map_err(to_js)
}

#[cfg(feature = "server")]
mod server {
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;
    use mintid::request_id::{Freshness, KeyRing, SecretKey, verify_unsigned};
    use wasm_bindgen::prelude::*;

    use crate::error::to_js;

    fn freshness(max_age_millis: Option<u64>, max_skew_millis: Option<u64>) -> Freshness {
        Freshness {
            max_age_millis: max_age_millis.unwrap_or(Freshness::DEFAULT.max_age_millis),
            max_skew_millis: max_skew_millis.unwrap_or(Freshness::DEFAULT.max_skew_millis),
        }
    }

    fn secret_key(id: u32, secret: &[u8]) -> Result<SecretKey, JsValue> {
        SecretKey::new(id, secret).map_err(to_js)
    }

    /// A server's secret keys: one current key issues grants, the others still verify.
    #[wasm_bindgen]
    pub struct KeyRingHandle(KeyRing);

    #[wasm_bindgen]
    impl KeyRingHandle {
        /// A ring whose current key is `secret` under key id `id` (`request_id.weak_secret`).
        #[wasm_bindgen(constructor)]
        pub fn new(id: u32, secret: &[u8]) -> Result<KeyRingHandle, JsValue> {
            secret_key(id, secret).map(|key| Self(KeyRing::new(key)))
        }

        /// Adds a key that only verifies.
        pub fn add(&mut self, id: u32, secret: &[u8]) -> Result<(), JsValue> {
            let key = secret_key(id, secret)?;
            self.0.add(key).map_err(to_js)
        }

        /// Adds a key and makes it current.
        pub fn rotate(&mut self, id: u32, secret: &[u8]) -> Result<(), JsValue> {
            let key = secret_key(id, secret)?;
            self.0.rotate(key).map_err(to_js)
        }

        /// Removes a key that is not current.
        pub fn retire(&mut self, id: u32) -> Result<(), JsValue> {
            self.0.retire(id).map_err(to_js)
        }

        /// The current key id.
        #[wasm_bindgen(getter = currentId)]
        pub fn current_id(&self) -> u32 {
            self.0.current_id()
        }

        /// Every key id in the ring.
        #[wasm_bindgen(getter = keyIds)]
        pub fn key_ids(&self) -> Vec<u32> {
            self.0.key_ids().collect()
        }

        /// A grant text for `scope` until `expires_millis`.
        #[wasm_bindgen(js_name = issueGrant)]
        pub fn issue_grant(&self, scope: &str, expires_millis: u64) -> Result<String, JsValue> {
            self.0
                .issue_grant(scope, expires_millis)
                .map(|grant| grant.to_text())
                .map_err(to_js)
        }

        /// The UUIDv7 (hyphenated) of a genuine, fresh signed request ID of `scope`.
        pub fn verify(
            &self,
            text: &str,
            scope: &str,
            now_millis: u64,
            max_age_millis: Option<u64>,
            max_skew_millis: Option<u64>,
        ) -> Result<String, JsValue> {
            let freshness = freshness(max_age_millis, max_skew_millis);
            self.0
                .verify(text, scope, now_millis, &freshness)
                .map(|uuid| uuid.to_string())
                .map_err(to_js)
        }
    }

    /// The UUIDv7 (hyphenated) of a well-formed, fresh unsigned request ID.
    #[wasm_bindgen(js_name = verifyUnsignedRequestId)]
    pub fn verify_unsigned_request_id(
        text: &str,
        now_millis: u64,
        max_age_millis: Option<u64>,
        max_skew_millis: Option<u64>,
    ) -> Result<String, JsValue> {
        let freshness = freshness(max_age_millis, max_skew_millis);
        verify_unsigned(text, now_millis, &freshness)
            .map(|uuid| uuid.to_string())
            .map_err(to_js)
    }
}
