//! The Snowflake generator driven by a manual clock: rollbacks under each
//! policy, a used-up sequence, a time field running out, restarts.

use mintid::{
    Clock, ManualClock, RollbackPolicy, SequencePolicy, Snowflake, SnowflakeError, SnowflakeId,
    SnowflakeLayout,
};

const EPOCH: u64 = SnowflakeLayout::MINTID_EPOCH_MS;
const WORKER: u64 = 5;

/// 4 IDs per tick, so tests use a tick up quickly.
fn small_sequence() -> SnowflakeLayout {
    SnowflakeLayout::new(41, 10, 2, EPOCH, 1).unwrap()
}

/// (tick, sequence) of an ID.
fn slot(layout: &SnowflakeLayout, id: SnowflakeId) -> (u64, u64) {
    let parts = layout.decode(id).unwrap();
    assert_eq!(parts.worker, WORKER);
    (parts.tick, parts.sequence)
}

fn code<T: core::fmt::Debug>(result: Result<T, SnowflakeError>) -> &'static str {
    result.unwrap_err().code()
}

/// Issues one ID at tick 10 000, rewinds the clock by `back_millis` and asks for
/// another under `policy`; returns the second ID's (tick, sequence).
fn after_rollback(
    policy: RollbackPolicy,
    back_millis: u64,
    clock: &ManualClock,
) -> Result<(u64, u64), SnowflakeError> {
    let layout = SnowflakeLayout::CLASSIC;
    let generator = Snowflake::builder(layout, WORKER, clock)
        .rollback(policy)
        .build()
        .unwrap();
    clock.set_millis(EPOCH + 10_000);
    let first = generator.next_id().unwrap();
    assert_eq!(slot(&layout, first), (10_000, 0));
    clock.rewind_millis(back_millis);
    let second = generator.next_id()?;
    assert!(second > first);
    Ok(slot(&layout, second))
}

#[test]
fn rollback_under_fail() {
    for back in [1, 5, 2_000] {
        let clock = ManualClock::new(0).advancing_on_pause();
        let error = after_rollback(RollbackPolicy::Fail, back, &clock).unwrap_err();
        assert_eq!(error.code(), "snowflake.clock_rolled_back");
        assert!(
            error.to_string().contains(&format!("{back} ms behind")),
            "{error}"
        );
        assert_eq!(
            clock.now_millis(),
            EPOCH + 10_000 - back,
            "Fail never waits"
        );
    }
}

#[test]
fn rollback_under_wait() {
    let policy = RollbackPolicy::Wait { max_millis: 5 };
    for back in [1, 5] {
        let clock = ManualClock::new(0).advancing_on_pause();
        // The rollback is waited out; the ID continues the tick it left.
        assert_eq!(after_rollback(policy, back, &clock), Ok((10_000, 1)));
        assert_eq!(clock.now_millis(), EPOCH + 10_000);
    }
    let clock = ManualClock::new(0).advancing_on_pause();
    let error = after_rollback(policy, 2_000, &clock).unwrap_err();
    assert_eq!(error.code(), "snowflake.clock_rolled_back");
    assert_eq!(clock.now_millis(), EPOCH + 8_000, "too large to wait for");

    // A bound of 2 s waits out 2 s.
    let clock = ManualClock::new(0).advancing_on_pause();
    let patient = RollbackPolicy::Wait { max_millis: 2_000 };
    assert_eq!(after_rollback(patient, 2_000, &clock), Ok((10_000, 1)));
    assert_eq!(clock.now_millis(), EPOCH + 10_000);
}

#[test]
fn rollback_wait_gives_up_on_a_stalled_clock() {
    let clock = ManualClock::new(0);
    let error = after_rollback(RollbackPolicy::Wait { max_millis: 5 }, 1, &clock).unwrap_err();
    assert_eq!(error.code(), "snowflake.wait_exceeded");
}

#[test]
fn rollback_under_logical() {
    let policy = RollbackPolicy::Logical { max_millis: 5 };
    for back in [1, 5] {
        let clock = ManualClock::new(0);
        assert_eq!(after_rollback(policy, back, &clock), Ok((10_000, 1)));
        assert_eq!(clock.now_millis(), EPOCH + 10_000 - back, "no waiting");
    }
    let clock = ManualClock::new(0);
    assert_eq!(
        code(after_rollback(policy, 2_000, &clock)),
        "snowflake.clock_rolled_back"
    );
}

#[test]
fn logical_clock_carries_into_later_ticks_up_to_its_bound() {
    let layout = small_sequence();
    let clock = ManualClock::new(EPOCH + 100);
    let generator = Snowflake::builder(layout, WORKER, &clock)
        .rollback(RollbackPolicy::Logical { max_millis: 3 })
        .build()
        .unwrap();
    for sequence in 0..4 {
        assert_eq!(slot(&layout, generator.next_id().unwrap()), (100, sequence));
    }
    clock.rewind_millis(1); // the clock reads tick 99
    // Ticks 101 and 102 lie at most 3 ticks ahead of tick 99.
    for tick in 101..=102 {
        for sequence in 0..4 {
            assert_eq!(
                slot(&layout, generator.next_id().unwrap()),
                (tick, sequence)
            );
        }
    }
    // Tick 103 would be 4 ahead: the generator waits, and this clock never moves.
    assert_eq!(code(generator.next_id()), "snowflake.wait_exceeded");
    clock.set_millis(EPOCH + 100);
    assert_eq!(slot(&layout, generator.next_id().unwrap()), (103, 0));
}

#[test]
fn used_up_sequence_waits_for_the_next_tick() {
    let layout = small_sequence();
    let clock = ManualClock::new(EPOCH + 100).advancing_on_pause();
    let generator = Snowflake::builder(layout, WORKER, &clock).build().unwrap();
    let slots: Vec<_> = (0..9)
        .map(|_| slot(&layout, generator.next_id().unwrap()))
        .collect();
    let expected: Vec<_> = (0..9).map(|i| (100 + i / 4, i % 4)).collect();
    assert_eq!(slots, expected);
    // Each wait paused exactly until the next tick began.
    assert_eq!(clock.now_micros(), (EPOCH + 102) * 1000);
}

#[test]
fn used_up_sequence_on_a_stalled_clock_fails_instead_of_hanging() {
    let layout = small_sequence();
    let clock = ManualClock::new(EPOCH + 100);
    let generator = Snowflake::builder(layout, WORKER, &clock).build().unwrap();
    for _ in 0..4 {
        generator.next_id().unwrap();
    }
    let error = generator.next_id().unwrap_err();
    assert_eq!(error.code(), "snowflake.wait_exceeded");
    assert_eq!(
        generator.high_water(),
        layout.compose_tick(100, WORKER, 3).ok()
    );
}

#[test]
fn borrowing_ahead_is_bounded() {
    let layout = small_sequence();
    let clock = ManualClock::new(EPOCH + 100);
    let generator = Snowflake::builder(layout, WORKER, &clock)
        .sequence_policy(SequencePolicy::BorrowAhead { max_ticks: 2 })
        .build()
        .unwrap();
    // Ticks 100, 101 and 102 without the clock moving.
    let slots: Vec<_> = (0..12)
        .map(|_| slot(&layout, generator.next_id().unwrap()))
        .collect();
    let expected: Vec<_> = (0..12).map(|i| (100 + i / 4, i % 4)).collect();
    assert_eq!(slots, expected);
    assert_eq!(code(generator.next_id()), "snowflake.wait_exceeded");
    clock.advance_millis(1);
    assert_eq!(slot(&layout, generator.next_id().unwrap()), (103, 0));
    // When the clock jumps ahead, IDs follow it.
    clock.advance_millis(50);
    assert_eq!(slot(&layout, generator.next_id().unwrap()), (151, 0));
}

#[test]
fn borrowed_ticks_are_not_taken_for_a_rollback() {
    let layout = small_sequence();
    let clock = ManualClock::new(EPOCH + 100);
    let generator = Snowflake::builder(layout, WORKER, &clock)
        .rollback(RollbackPolicy::Fail)
        .sequence_policy(SequencePolicy::BorrowAhead { max_ticks: 2 })
        .build()
        .unwrap();
    for _ in 0..12 {
        generator.next_id().unwrap();
    }
    // The last ID is 2 ticks ahead, as borrowing allows; a clock 1 ms back
    // makes 3: a rollback of 1.
    clock.rewind_millis(1);
    let error = generator.next_id().unwrap_err();
    assert_eq!(error.code(), "snowflake.clock_rolled_back");
    assert!(error.to_string().contains("1 ms behind"), "{error}");
}

#[test]
fn fill_reserves_whole_runs() {
    let layout = small_sequence();
    let clock = ManualClock::new(EPOCH + 100).advancing_on_pause();
    let generator = Snowflake::builder(layout, WORKER, &clock)
        .sequence_policy(SequencePolicy::BorrowAhead { max_ticks: 1 })
        .build()
        .unwrap();
    generator.next_id().unwrap(); // (100, 0)
    let mut ids = [0u64; 10];
    generator.fill(&mut ids).unwrap();
    let slots: Vec<_> = ids
        .iter()
        .map(|&id| slot(&layout, SnowflakeId::new(id).unwrap()))
        .collect();
    // 7 slots left in ticks 100-101, then a one-tick wait for 3 more.
    let expected: Vec<_> = (1..11).map(|i| (100 + i / 4, i % 4)).collect();
    assert_eq!(slots, expected);
    assert_eq!(clock.now_millis(), EPOCH + 101);
    assert_eq!(generator.next_batch(0), Ok(vec![]));
}

#[test]
fn time_field_running_out() {
    // 4 time bits: ticks 0..=15.
    let layout = SnowflakeLayout::new(4, 10, 2, EPOCH, 1).unwrap();
    let clock = ManualClock::new(EPOCH + 15).advancing_on_pause();
    let generator = Snowflake::builder(layout, WORKER, &clock)
        .sequence_policy(SequencePolicy::BorrowAhead { max_ticks: 5 })
        .build()
        .unwrap();
    let ids: Vec<_> = (0..4).map(|_| generator.next_id().unwrap()).collect();
    assert_eq!(ids[3], layout.compose_tick(15, WORKER, 3).unwrap());
    // No tick 16 to borrow: an error, never a wrapped ID.
    let error = generator.next_id().unwrap_err();
    assert_eq!(error.code(), "snowflake.time_exhausted");
    assert!(
        error.to_string().contains(&(EPOCH + 16).to_string()),
        "{error}"
    );
    assert_eq!(clock.now_millis(), EPOCH + 15, "no pointless wait");
    clock.advance_millis(1);
    assert_eq!(code(generator.next_id()), "snowflake.time_exhausted");
    assert_eq!(layout.remaining_millis(clock.now_millis()), 0);

    let fresh = Snowflake::builder(layout, WORKER, &clock).build().unwrap();
    assert_eq!(code(fresh.next_id()), "snowflake.time_exhausted");
}

#[test]
fn epoch_in_the_future() {
    let clock = ManualClock::new(EPOCH - 1);
    let generator = Snowflake::builder(SnowflakeLayout::CLASSIC, WORKER, &clock)
        .build()
        .unwrap();
    let error = generator.next_id().unwrap_err();
    assert_eq!(error.code(), "snowflake.epoch_in_future");
    assert!(error.to_string().contains(&EPOCH.to_string()));
}

#[test]
fn worker_must_fit() {
    let clock = ManualClock::new(EPOCH);
    let result = Snowflake::builder(SnowflakeLayout::CLASSIC, 1024, &clock).build();
    assert_eq!(code(result), "snowflake.worker_out_of_range");
    let js = Snowflake::builder(SnowflakeLayout::JS_SAFE, 63, &clock).build();
    assert_eq!(js.unwrap().worker(), 63);
}

#[test]
fn first_id_of_a_fresh_generator() {
    let layout = SnowflakeLayout::CLASSIC;
    let clock = ManualClock::new(EPOCH);
    let generator = Snowflake::builder(layout, WORKER, &clock).build().unwrap();
    assert_eq!(generator.high_water(), None);
    assert_eq!(generator.high_water_unix_millis(), None);
    let id = generator.next_id().unwrap();
    assert_eq!(id.get(), WORKER << 12, "tick 0, sequence 0");
    assert_eq!(generator.high_water(), Some(id));
    assert_eq!(generator.high_water_unix_millis(), Some(EPOCH));
}

#[test]
fn restart_after_a_high_water_id() {
    let layout = SnowflakeLayout::CLASSIC;
    let clock = ManualClock::new(EPOCH + 500).advancing_on_pause();
    let before = Snowflake::builder(layout, WORKER, &clock).build().unwrap();
    let issued: Vec<_> = (0..4).map(|_| before.next_id().unwrap()).collect();
    let saved = before.high_water().unwrap();
    assert_eq!(saved, issued[3]);

    // Same tick after the restart: the sequence continues.
    let after = Snowflake::builder(layout, WORKER, &clock)
        .starting_after_id(saved)
        .build()
        .unwrap();
    assert_eq!(after.high_water(), Some(saved));
    assert_eq!(slot(&layout, after.next_id().unwrap()), (500, 4));

    // A clock 100 ms behind the saved mark is a rollback.
    clock.set_millis(EPOCH + 400);
    let behind = Snowflake::builder(layout, WORKER, &clock)
        .starting_after_id(saved)
        .build()
        .unwrap();
    assert_eq!(code(behind.next_id()), "snowflake.clock_rolled_back");
    let logical = Snowflake::builder(layout, WORKER, &clock)
        .rollback(RollbackPolicy::Logical { max_millis: 100 })
        .starting_after_id(saved)
        .build()
        .unwrap();
    assert_eq!(slot(&layout, logical.next_id().unwrap()), (500, 4));
}

#[test]
fn restart_after_a_high_water_time() {
    let layout = SnowflakeLayout::CLASSIC;
    let clock = ManualClock::new(EPOCH + 500).advancing_on_pause();
    let generator = Snowflake::builder(layout, WORKER, &clock)
        .starting_after_unix_millis(EPOCH + 500)
        .starting_after_id(layout.compose_tick(300, WORKER, 9).unwrap())
        .build()
        .unwrap();
    // The later bound holds; tick 501 is 1 ms ahead and waited out.
    assert_eq!(generator.high_water_unix_millis(), Some(EPOCH + 500));
    assert_eq!(slot(&layout, generator.next_id().unwrap()), (501, 0));
    assert_eq!(clock.now_millis(), EPOCH + 501);

    let before_epoch = Snowflake::builder(layout, WORKER, &clock)
        .starting_after_unix_millis(0)
        .build()
        .unwrap();
    assert_eq!(before_epoch.high_water(), None);

    let past_end = Snowflake::builder(layout, WORKER, &clock)
        .starting_after_unix_millis(layout.expires_at_unix_millis())
        .build();
    assert_eq!(code(past_end), "snowflake.time_exhausted");
    let misfit = Snowflake::builder(SnowflakeLayout::JS_SAFE, WORKER, &clock)
        .starting_after_id(SnowflakeId::MAX)
        .build();
    assert_eq!(code(misfit), "snowflake.id_out_of_range");
}

#[test]
fn coarse_ticks() {
    let layout = SnowflakeLayout::SONYFLAKE_LIKE;
    let clock = ManualClock::new(EPOCH + 1_234).advancing_on_pause();
    let generator = Snowflake::builder(layout, WORKER, &clock).build().unwrap();
    let ids = generator.next_batch(257).unwrap();
    let last = layout.decode(SnowflakeId::new(ids[256]).unwrap()).unwrap();
    assert_eq!(
        (last.tick, last.sequence, last.unix_millis),
        (124, 0, EPOCH + 1_240)
    );
    // The wait lasted until the next 10 ms tick began.
    assert_eq!(clock.now_millis(), EPOCH + 1_240);
}

#[test]
fn generator_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Snowflake<ManualClock>>();
    #[cfg(feature = "std")]
    shared::<Snowflake<mintid::SystemClock>>();
}
