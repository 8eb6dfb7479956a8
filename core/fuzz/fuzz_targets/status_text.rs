//! Stored status texts (idempotency records, outbox messages): exactly the
//! names `as_str` writes are read, and every other text gets a one-line error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::outbox::OutboxStatus;
use mintid::record::Status;
use mintid_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Status::parse(text) {
        Ok(status) => assert_eq!(status.as_str(), text),
        Err(error) => {
            assert!(Status::ALL.iter().all(|status| status.as_str() != text));
            check_error(error.code(), "record.", &error.to_string());
        }
    }
    match OutboxStatus::parse(text) {
        Ok(status) => assert_eq!(status.as_str(), text),
        Err(error) => {
            assert!(
                OutboxStatus::ALL
                    .iter()
                    .all(|status| status.as_str() != text)
            );
            check_error(error.code(), "outbox.", &error.to_string());
        }
    }
});
