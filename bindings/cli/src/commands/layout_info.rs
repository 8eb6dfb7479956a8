//! `mintid layout`: a layout's bits, rate and lifetime.

use mintid::SnowflakeLayout;
use serde_json::Value;

use crate::cli::LayoutCommandArgs;
use crate::error::CliError;
use crate::layout;
use crate::output::{Output, Report};
use crate::time::{human_span, now_unix_millis, rfc3339};

/// `mintid layout`: one layout, or every preset when none is named.
pub fn run(args: &LayoutCommandArgs, out: &mut Output) -> Result<(), CliError> {
    let now = now_unix_millis();
    if args.preset.is_some() || args.bits.is_some() || args.time.is_given() {
        let layout =
            layout::resolve_parts(args.preset.as_deref(), args.bits.as_deref(), &args.time)?;
        return out.report(&report(&layout, now));
    }
    let reports: Vec<Report> = SnowflakeLayout::PRESETS
        .iter()
        .map(|(_, preset)| report(preset, now))
        .collect();
    if out.is_json() {
        return out.json_value(&Value::Array(reports.iter().map(Report::to_json).collect()));
    }
    for (index, report) in reports.iter().enumerate() {
        if index > 0 {
            out.line("")?;
        }
        out.report(report)?;
    }
    Ok(())
}

fn report(layout: &SnowflakeLayout, now: u64) -> Report {
    let ids_per_second = layout.ids_per_tick() as f64 * 1000.0 / layout.tick_millis() as f64;
    let remaining = layout.remaining_millis(now);
    let mut report = Report::new();
    report
        .field("layout", layout::preset_name(layout).unwrap_or("custom"))
        .field_with_text(
            "bits",
            layout::bits_text(layout),
            format!(
                "{} (time, worker, sequence: {} of 63 bits)",
                layout::bits_text(layout),
                layout.time_bits() + layout.worker_bits() + layout.sequence_bits()
            ),
        )
        .json_only("time_bits", layout.time_bits())
        .json_only("datacenter_bits", layout.datacenter_bits())
        .json_only("worker_bits", layout.worker_bits())
        .json_only("sequence_bits", layout.sequence_bits())
        .field("epoch", rfc3339(layout.epoch_millis()))
        .field("epoch_ms", layout.epoch_millis())
        .field("tick_ms", layout.tick_millis());
    if layout.datacenter_bits() > 0 {
        let (datacenters, workers) = layout.split_worker_id(layout.max_worker());
        report
            .field("datacenters", datacenters + 1)
            .field("workers_per_datacenter", workers + 1);
    }
    report
        .field("workers", layout.max_worker() + 1)
        .field("ids_per_tick", layout.ids_per_tick())
        .field_with_text(
            "ids_per_second",
            ids_per_second,
            format!("{ids_per_second} per worker"),
        )
        .field("max_id", layout.max_id().to_string())
        .field_with_text(
            "js_safe",
            layout.is_js_safe(),
            if layout.is_js_safe() {
                "yes (every ID is below 2^53)"
            } else {
                "no (IDs reach past 2^53: pass them to JavaScript as strings or BigInt)"
            },
        )
        .field("expires", rfc3339(layout.expires_at_unix_millis()))
        .field("expires_ms", layout.expires_at_unix_millis())
        .field("lifetime", human_span(layout.lifetime_millis()))
        .json_only("lifetime_ms", layout.lifetime_millis())
        .field(
            "remaining",
            if remaining == 0 {
                "none: the time field has run out, no IDs can be issued".to_owned()
            } else {
                human_span(remaining)
            },
        )
        .json_only("remaining_ms", remaining);
    report
}
