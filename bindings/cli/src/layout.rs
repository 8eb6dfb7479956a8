//! Snowflake layouts from the command line: presets, `--bits`, `--epoch`,
//! `--tick`, and how a layout is described.

use mintid::SnowflakeLayout;
use serde_json::{Value, json};

use crate::cli::{LayoutArgs, LayoutTimeArgs};
use crate::error::CliError;
use crate::time::rfc3339;

/// The layout a command's options name: a preset or `--bits` (classic when
/// neither), with `--epoch` and `--tick` applied.
pub fn resolve(args: &LayoutArgs) -> Result<SnowflakeLayout, CliError> {
    resolve_parts(args.layout.as_deref(), args.bits.as_deref(), &args.time)
}

/// Whether the options name a layout at all.
pub fn is_given(args: &LayoutArgs) -> bool {
    args.layout.is_some()
        || args.bits.is_some()
        || args.time.epoch.is_some()
        || args.time.tick.is_some()
}

/// [`resolve`] from the separate options.
pub fn resolve_parts(
    preset: Option<&str>,
    bits: Option<&str>,
    time: &LayoutTimeArgs,
) -> Result<SnowflakeLayout, CliError> {
    let base = match (preset, bits) {
        (Some(name), _) => SnowflakeLayout::preset(name)?,
        (None, Some(bits)) => from_bits(bits)?,
        (None, None) => SnowflakeLayout::CLASSIC,
    };
    if !time.is_given() {
        return Ok(base);
    }
    let layout = SnowflakeLayout::new(
        base.time_bits(),
        base.worker_bits(),
        base.sequence_bits(),
        time.epoch.unwrap_or(base.epoch_millis()),
        time.tick.unwrap_or(base.tick_millis()),
    )?
    .with_datacenter_bits(base.datacenter_bits())?;
    Ok(layout)
}

/// Reads `T,W,S` or `T,D+W,S` into a layout from the mintid epoch with
/// 1 ms ticks.
fn from_bits(text: &str) -> Result<SnowflakeLayout, CliError> {
    let malformed = || {
        CliError::usage(format!(
            "invalid --bits {text:?}: expected TIME,WORKER,SEQUENCE or TIME,DATACENTER+WORKER,SEQUENCE, e.g. 41,10,12 or 41,5+5,12"
        ))
    };
    let number = |part: &str| part.parse::<u8>().map_err(|_| malformed());
    let parts: Vec<&str> = text.split(',').collect();
    let [time, worker, sequence] = parts.as_slice() else {
        return Err(malformed());
    };
    let (datacenter_bits, worker_bits) = match worker.split_once('+') {
        Some((datacenter, worker)) => {
            let (datacenter, worker) = (number(datacenter)?, number(worker)?);
            (
                datacenter,
                datacenter.checked_add(worker).ok_or_else(malformed)?,
            )
        }
        None => (0, number(worker)?),
    };
    let layout = SnowflakeLayout::new(
        number(time)?,
        worker_bits,
        number(sequence)?,
        SnowflakeLayout::MINTID_EPOCH_MS,
        1,
    )?
    .with_datacenter_bits(datacenter_bits)?;
    Ok(layout)
}

/// The name of the preset equal to `layout`, if any.
pub fn preset_name(layout: &SnowflakeLayout) -> Option<&'static str> {
    SnowflakeLayout::PRESETS
        .iter()
        .find(|(_, preset)| preset == layout)
        .map(|&(name, _)| name)
}

/// The widths as `--bits` reads them: `41,10,12` or `41,5+5,12`.
pub fn bits_text(layout: &SnowflakeLayout) -> String {
    let worker = match layout.datacenter_bits() {
        0 => layout.worker_bits().to_string(),
        datacenter => format!("{datacenter}+{}", layout.worker_bits() - datacenter),
    };
    format!("{},{worker},{}", layout.time_bits(), layout.sequence_bits())
}

/// One line: name, widths, tick and epoch.
pub fn summary(layout: &SnowflakeLayout) -> String {
    format!(
        "{} (bits {}, tick {} ms, epoch {})",
        preset_name(layout).unwrap_or("custom"),
        bits_text(layout),
        layout.tick_millis(),
        rfc3339(layout.epoch_millis())
    )
}

/// The layout's defining values as a JSON object.
pub fn to_json(layout: &SnowflakeLayout) -> Value {
    json!({
        "name": preset_name(layout),
        "bits": bits_text(layout),
        "time_bits": layout.time_bits(),
        "datacenter_bits": layout.datacenter_bits(),
        "worker_bits": layout.worker_bits(),
        "sequence_bits": layout.sequence_bits(),
        "epoch_ms": layout.epoch_millis(),
        "tick_ms": layout.tick_millis(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_time() -> LayoutTimeArgs {
        LayoutTimeArgs {
            epoch: None,
            tick: None,
        }
    }

    #[test]
    fn bits_name_the_presets_they_equal() {
        for &(name, preset) in SnowflakeLayout::PRESETS {
            let time = LayoutTimeArgs {
                epoch: Some(preset.epoch_millis()),
                tick: Some(preset.tick_millis()),
            };
            let rebuilt = resolve_parts(None, Some(&bits_text(&preset)), &time).unwrap();
            assert_eq!(rebuilt, preset, "{name}");
            assert_eq!(preset_name(&rebuilt), Some(name));
        }
        assert_eq!(
            resolve_parts(None, None, &no_time()).unwrap(),
            SnowflakeLayout::CLASSIC
        );
    }

    #[test]
    fn malformed_bits_are_usage_errors() {
        for bad in [
            "",
            "41,10",
            "41,10,12,1",
            "a,10,12",
            "41,5+,12",
            "41,200+200,12",
            "41,-1,12",
        ] {
            let error = resolve_parts(None, Some(bad), &no_time()).unwrap_err();
            assert_eq!(error.exit(), 2, "{bad:?}");
        }
        let too_wide = resolve_parts(None, Some("41,11,12"), &no_time()).unwrap_err();
        assert_eq!(too_wide.exit(), 1);
        assert!(
            too_wide
                .to_string()
                .starts_with("snowflake.invalid_layout: ")
        );
    }
}
