//! Training loss per epoch of several runs (`lowp train --compare`'s picture), on a
//! logarithmic axis: f16 without loss scaling stays near ln 10 while the others fall by three
//! orders.

use crate::error::Error;
use crate::plot::plotters::prelude::*;
use crate::plot::{FAMILY, PALETTE, Picture, picture, s};

/// The picture's size in pixels.
const SIZE: (u32, u32) = (1000, 600);

/// One run's curve.
#[derive(Clone, Debug)]
pub struct Curve {
    /// The legend's text.
    pub label: String,
    /// (epoch, training loss) of every epoch.
    pub points: Vec<(f64, f64)>,
    /// The curve's colour: a place in [`PALETTE`] (taken modulo its length), so that a run
    /// keeps its colour whichever others are drawn.
    pub colour: usize,
}

/// The curves as a picture titled `title`. Losses that are not positive and finite are left
/// out of the (logarithmic) plot.
pub fn loss_curves(curves: &[Curve], title: &str) -> Result<Picture, Error> {
    // At least two epochs wide, so a one-epoch run still has an x range.
    let epochs = curves
        .iter()
        .map(|c| c.points.len())
        .max()
        .unwrap_or(0)
        .max(2);
    let losses = || {
        curves
            .iter()
            .flat_map(|c| c.points.iter().map(|&(_, loss)| loss))
            .filter(|l| l.is_finite() && *l > 0.0)
    };
    let lo = losses().fold(f64::INFINITY, f64::min);
    let hi = losses().fold(0.0, f64::max);
    let (lo, hi) = if lo < hi {
        (lo / 1.5, hi * 1.5)
    } else {
        (1e-3, 10.0)
    };
    picture("the loss curves", SIZE, |root| {
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
            .y_label_formatter(&|v| loss_label(*v))
            .y_desc("mean cross entropy (log scale)")
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .draw()
            .map_err(s)?;
        for c in curves {
            let colour = PALETTE[c.colour % PALETTE.len()];
            let points = c
                .points
                .iter()
                .copied()
                .filter(|(_, loss)| loss.is_finite() && *loss > 0.0);
            chart
                // Points marked too, so a one-epoch run still shows.
                .draw_series(LineSeries::new(points, colour.stroke_width(2)).point_size(3))
                .map_err(s)?
                .label(&c.label)
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
    })
}

/// The label of a tick of the logarithmic loss axis: the ticks at one significant digit (0.2,
/// 0.5, 1, 3), printed as such, and nothing at the others, whose labels would crowd those
/// (plotters places ticks between them, at values such as `0.7000000001`).
fn loss_label(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return String::new();
    }
    let exp = v.log10().floor() as i32;
    let scaled = v / 10f64.powi(exp);
    let digit = scaled.round();
    if (scaled - digit).abs() > 1e-6 {
        return String::new();
    }
    // A tick just below a power of ten (0.9999999999) is that power, one decade up.
    let (digit, exp) = if digit >= 10.0 {
        (1.0, exp + 1)
    } else {
        (digit, exp)
    };
    let value = digit * 10f64.powi(exp);
    // As many decimals as the decade needs, so `0.30000000000000004` reads `0.3`.
    let digits = (-exp).max(0) as usize;
    format!("{value:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_png_with_curves_and_text() {
        let curve = |label: &str, scale: f64, colour| Curve {
            label: label.to_string(),
            points: (1..=5).map(|e| (e as f64, scale / e as f64)).collect(),
            colour,
        };
        let curves = [curve("f32", 2.0, 0), curve("f16-noscale", 0.01, 11)];
        let png = loss_curves(&curves, "losses").unwrap().png;
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // Width and height in the IHDR chunk.
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), SIZE.0);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), SIZE.1);
        // Decoded, the picture holds the curves' colours, not just the white background.
        let decoder = png::Decoder::new(std::io::Cursor::new(&png));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        for c in [PALETTE[0], PALETTE[1]] {
            let found = buf.chunks(3).any(|p| p == [c.0, c.1, c.2]);
            assert!(found, "colour {c:?} missing");
        }
    }

    #[test]
    fn loss_axis_labels_only_the_ticks_at_one_significant_digit() {
        assert_eq!(loss_label(0.7000000001), "0.7");
        assert_eq!(loss_label(0.30000000000000004), "0.3");
        assert_eq!(loss_label(1.0), "1");
        assert_eq!(loss_label(3.0), "3");
        assert_eq!(loss_label(0.02), "0.02");
        assert_eq!(loss_label(20.0), "20");
        assert_eq!(loss_label(0.002), "0.002");
        assert_eq!(loss_label(0.9999999999), "1");
        assert_eq!(loss_label(0.0999999999), "0.1");
        assert_eq!(loss_label(0.75), "");
        assert_eq!(loss_label(1.5), "");
        assert_eq!(loss_label(0.0), "");
        assert_eq!(loss_label(f64::NAN), "");
    }
}
