//! The README's Rust taste: IDs, a key, a fingerprint, a request ID and a decision.
//! Run with `cargo run -p mintid --example quickstart`.

use mintid::record::{Decision, Incoming, decide};
use mintid::request_id::{Freshness, KeyRing, SecretKey};
use mintid::{Clock, SystemClock};
use mintid::{FieldSelection, IdempotencyKey, RecordPolicy, Snowflake, SnowflakeLayout, uuid7};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // IDs: a shared, lock-free Snowflake generator and a UUIDv7.
    let ids = Snowflake::new(SnowflakeLayout::CLASSIC, 7)?;
    let id = ids.next_id()?;
    let parts = SnowflakeLayout::CLASSIC.decode(id)?;
    println!(
        "snowflake {id} = {} (worker {}, seq {})",
        id.to_base32(),
        parts.worker,
        parts.sequence
    );
    println!("uuid7     {}", uuid7::now()?);

    // A server's key ring issues a grant; the client mints request IDs offline.
    let ring = KeyRing::new(SecretKey::new(1, &[7u8; 32])?);
    let now = SystemClock.now_millis();
    let grant = ring.issue_grant("user:42", now + 15 * 60_000)?;
    let request_id = grant.mint(&uuid7::now()?);
    let verified = ring.verify(&request_id.to_text(), "user:42", now, &Freshness::DEFAULT)?;
    println!("request   {request_id} -> {verified}");

    // The verified ID names the operation; the payload's fingerprint guards it.
    let key = IdempotencyKey::new("order.create", "user:42", &verified.to_string())?;
    let body = br#"{"sku": "tea", "qty": 2, "sent_at": "2026-11-30T10:00:00Z"}"#;
    let selection = FieldSelection::all().exclude("/sent_at")?;
    let fingerprint = mintid::fingerprint::fingerprint_json(body, &selection)?;
    println!("key       {key}\nbody      {fingerprint}");

    // No record yet: the first request executes.
    let decision = decide(
        None,
        &Incoming::new(fingerprint),
        now,
        &RecordPolicy::DEFAULT,
    )?;
    assert!(matches!(decision, Decision::Execute(_)));
    println!("decision  {}", decision.name());
    Ok(())
}
