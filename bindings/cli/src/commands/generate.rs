//! `mintid snowflake` and `mintid uuid7`: new IDs, streamed to stdout.

use mintid::uuid::TextForm;
use mintid::{Snowflake, SnowflakeId, SnowflakeLayout, Uuid7Generator};

use crate::cli::{SnowflakeArgs, SnowflakeFormat, Uuid7Args, UuidFormat};
use crate::error::CliError;
use crate::layout;
use crate::output::Output;

/// IDs reserved from a Snowflake generator at a time.
const SNOWFLAKE_BATCH: usize = 4096;

/// `mintid snowflake`.
pub fn snowflake(args: &SnowflakeArgs, out: &mut Output) -> Result<(), CliError> {
    let layout = layout::resolve(&args.layout)?;
    let worker = worker_id(&layout, args.worker, args.datacenter)?;
    let generator = Snowflake::new(layout, worker)?;
    let mut batch = vec![0u64; SNOWFLAKE_BATCH];
    let mut list = out.id_list();
    let mut left = args.count;
    while left > 0 {
        let run = usize::try_from(left).map_or(SNOWFLAKE_BATCH, |left| left.min(SNOWFLAKE_BATCH));
        let ids = &mut batch[..run];
        generator.fill(ids)?;
        for &value in ids.iter() {
            let id = SnowflakeId::new(value)?;
            match args.format {
                SnowflakeFormat::Decimal => list.push(&id.to_string())?,
                SnowflakeFormat::Base32 => list.push(&id.to_base32())?,
            }
        }
        left -= run as u64;
    }
    list.finish()
}

/// The whole worker field from `--worker` and `--datacenter`: with a
/// datacenter split, `--worker` is the worker within the datacenter
/// (datacenter 0 unless given).
fn worker_id(
    layout: &SnowflakeLayout,
    worker: u64,
    datacenter: Option<u64>,
) -> Result<u64, CliError> {
    match (layout.datacenter_bits(), datacenter) {
        (0, Some(_)) => Err(CliError::usage(
            "--datacenter needs a layout that splits the worker field (twitter, datacenter-worker, or --bits T,D+W,S)",
        )),
        (0, None) => Ok(worker),
        (_, datacenter) => Ok(layout.worker_id(datacenter.unwrap_or(0), worker)?),
    }
}

/// `mintid uuid7`.
pub fn uuid7(args: &Uuid7Args, out: &mut Output) -> Result<(), CliError> {
    let form = match args.format {
        UuidFormat::Hyphenated => TextForm::Hyphenated,
        UuidFormat::Simple => TextForm::Simple,
        UuidFormat::Urn => TextForm::Urn,
        UuidFormat::Base32 => TextForm::Base32,
    };
    let mut generator = Uuid7Generator::new();
    let mut list = out.id_list();
    for _ in 0..args.count {
        list.push(generator.generate()?.format(form).as_str())?;
    }
    list.finish()
}
