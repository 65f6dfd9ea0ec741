//! One plain tensor moved from input to output: copied, or converted (after a first pass for
//! its scale when scaled).

use crate::block_convert::{self, Rounding};
use crate::error::Error;
use crate::options::Options;
use crate::pipeline::{self, Action, Files, Segment};
use crate::plan::Plan;
use lowp::fit::FitStats;

/// Runs one tensor whose data is `base` (input and output offsets, bytes; its action is
/// ignored): copies it when the plan keeps it, converts it otherwise (after a first pass for
/// its scale when scaled). Gives the statistics and the scale, when converted.
pub(crate) fn run_tensor(
    opts: &Options,
    files: &Files<'_>,
    base: Segment,
    plan: &Plan,
    swap: bool,
    elements: u64,
) -> Result<(Option<FitStats>, Option<f64>), Error> {
    let (Some(to), Some(from)) = (plan.target, plan.source) else {
        if files.output.is_some() {
            pipeline::run(&base, files)?;
        } else {
            files.progress.add(base.bytes);
        }
        return Ok((None, None));
    };
    debug_assert_eq!(base.bytes, elements * from.size() as u64);
    let mut segment = Segment {
        width: from.size(),
        action: Action::Convert {
            from,
            to,
            swap,
            rounding: Rounding {
                saturate: opts.saturate,
                scale: 1.0,
            },
        },
        ..base
    };
    let mut scale = None;
    if plan.scaled {
        let s = block_convert::fp8_scale(to, pipeline::amax(&segment, files)?);
        if let Action::Convert { rounding, .. } = &mut segment.action {
            rounding.scale = s;
        }
        scale = Some(s);
    }
    let stats = pipeline::run(&segment, files)?;
    Ok((Some(stats), scale))
}
