//! The PNG of `lowp train --compare`: training loss per epoch of every precision, on a
//! logarithmic axis (f16-noscale stays near ln 10 while the others fall by three orders).
//!
//! Drawn like `lowp plot`'s pictures (`lowp_analysis::plot`: embedded font, PNG in memory); the
//! caller writes the bytes to a temporary name renamed into place.

use crate::error::CliError;
use lowp_amp::{Precision, RunResult, TrainConfig};
use lowp_analysis::plot::plotters::prelude::*;
use lowp_analysis::plot::{FAMILY, PALETTE, picture, s};

/// The picture's size in pixels.
const SIZE: (u32, u32) = (1000, 600);

/// The loss curves of `runs` as PNG bytes. Losses that are not positive and finite are left
/// out of the (logarithmic) plot.
pub fn loss_curves(runs: &[RunResult], config: &TrainConfig) -> Result<Vec<u8>, CliError> {
    // At least two epochs wide, so a one-epoch run still has an x range.
    let epochs = runs
        .iter()
        .map(|r| r.epochs.len())
        .max()
        .unwrap_or(0)
        .max(2);
    let losses = || {
        runs.iter()
            .flat_map(|r| r.epochs.iter().map(|e| e.train_loss))
            .filter(|l| l.is_finite() && *l > 0.0)
    };
    let lo = losses().fold(f64::INFINITY, f64::min);
    let hi = losses().fold(0.0, f64::max);
    let (lo, hi) = if lo < hi {
        (lo / 1.5, hi * 1.5)
    } else {
        (1e-3, 10.0)
    };
    let title = format!(
        "Training loss on digits, MLP {:?}, batch {}, seed {}",
        config.hidden, config.batch_size, config.seed
    );
    let drawn = picture("the loss curves", SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FAMILY, 22))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(1f64..epochs as f64, (lo..hi).log_scale())
            .map_err(s)?;
        chart
            .configure_mesh()
            .x_desc("epoch")
            // Whole epochs only: fractional ticks of a short run are left blank.
            .x_label_formatter(&|x| {
                if x.fract() == 0.0 {
                    format!("{x:.0}")
                } else {
                    String::new()
                }
            })
            .y_desc("mean cross entropy (log scale)")
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .draw()
            .map_err(s)?;
        for (k, r) in runs.iter().enumerate() {
            let colour = colour_of(r.precision, k);
            let points = r
                .epochs
                .iter()
                .filter(|e| e.train_loss.is_finite() && e.train_loss > 0.0)
                .map(|e| (e.epoch as f64, e.train_loss));
            let label = format!("{} ({:.2}%)", r.precision, 100.0 * r.test_accuracy);
            chart
                // Points marked too, so a one-epoch run still shows.
                .draw_series(LineSeries::new(points, colour.stroke_width(2)).point_size(3))
                .map_err(s)?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::MiddleRight)
            .label_font((FAMILY, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(s)?;
        Ok(())
    })?;
    Ok(drawn.png)
}

/// The colour of a precision's curve: its place in [`Precision::ALL`], so each precision keeps
/// its colour whichever runs are drawn (the run's index for one not in the list).
fn colour_of(precision: Precision, index: usize) -> RGBColor {
    let slot = Precision::ALL.iter().position(|&p| p == precision);
    PALETTE[slot.unwrap_or(index) % PALETTE.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use lowp_amp::EpochStats;

    #[test]
    fn draws_a_png_with_curves_and_text() {
        let run = |precision, scale: f64| RunResult {
            precision,
            epochs: (1..=5)
                .map(|epoch| EpochStats {
                    epoch,
                    train_loss: scale / epoch as f64,
                    test_loss: 1.0,
                    test_accuracy: 0.5,
                    loss_scale: 1.0,
                    skipped_steps: 0,
                    steps: 0,
                })
                .collect(),
            test_accuracy: 0.5,
            skipped_steps: 0,
            final_loss_scale: 1.0,
            seconds: 0.0,
        };
        let runs = [run(Precision::F32, 2.0), run(Precision::F16NoScale, 0.01)];
        let png = loss_curves(&runs, &TrainConfig::default()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // Width and height in the IHDR chunk.
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), SIZE.0);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), SIZE.1);
        // Decoded, the picture holds the curves' colours, not just the white background.
        let decoder = png::Decoder::new(std::io::Cursor::new(&png));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        for c in [
            colour_of(Precision::F32, 0),
            colour_of(Precision::F16NoScale, 1),
        ] {
            let found = buf.chunks(3).any(|p| p == [c.0, c.1, c.2]);
            assert!(found, "colour {c:?} missing");
        }
    }
}
