//! `lowp plot`: PNG pictures where a picture says more than a table.
//!
//! * `layout.png`: the bit layout of every format (and f32 for reference);
//! * `values.png`: where each format's values lie on a log scale: one bar per binade whose
//!   height is the number of values in it (on a log scale: the bits of precision), the
//!   subnormal binades apart, the overflow threshold marked;
//! * `rounding-error.png`: the largest relative rounding error at each magnitude for f16, bf16
//!   and the FP8 formats: the error of rounding the midpoint between each pair of neighbouring
//!   values, where it is largest;
//! * `accumulate-FORMAT.png` (by `lowp accumulate --plot` and `lowp report`): running sums.
//!
//! plotters draws with DejaVu Sans embedded in the binary (`assets/`), so the pictures render
//! on machines with no font installed. Each picture is drawn into memory, encoded as PNG and
//! written to a temporary name that is renamed into place.

use crate::accumulate::Outcome;
use crate::error::Error;
use crate::kernels::{kernels, pow2};
use crate::output::write_atomically;
use lowp::Format;
/// The drawing library, for callers that draw pictures of their own with [`picture`].
pub use plotters;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};

/// DejaVu Sans (Debian's fonts-dejavu-core; licence in `assets/DejaVuSans-LICENSE`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The font family the pictures name.
pub const FAMILY: &str = "sans-serif";

/// Registers the embedded font once.
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font (a test draws with it); a failure would only
        // leave text out of the pictures.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

/// A categorical palette (Tableau 10), distinct in colour and in lightness.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// A drawn picture: its file name and PNG bytes.
pub struct Picture {
    /// File name, such as `layout.png`.
    pub name: String,
    /// The encoded PNG.
    pub png: Vec<u8>,
}

impl Picture {
    /// Writes the picture into `dir` (to a temporary name, renamed), and answers its path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, Error> {
        let path = dir.join(&self.name);
        write_atomically(&path, &self.png)?;
        Ok(path)
    }
}

/// The error of a failed drawing.
fn draw_error(name: &str, e: impl std::fmt::Display) -> Error {
    Error::failure(format!("cannot draw {name}: {e}"))
}

/// Draws a `width` x `height` picture with `draw` and encodes it.
pub fn picture(
    name: &str,
    (width, height): (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> Result<Picture, Error> {
    register_font();
    let mut pixels = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(name, e))?;
        draw(&root).map_err(|e| draw_error(name, e))?;
        root.present().map_err(|e| draw_error(name, e))?;
    }
    let mut png = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut png, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| draw_error(name, e))?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| draw_error(name, e))?;
    }
    Ok(Picture {
        name: name.to_string(),
        png,
    })
}

/// Turns any displayable error into the drawing closures' error (`.map_err(s)?`).
pub fn s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// The bit layout of f32 and every format: one box per bit, sign red, exponent green,
/// mantissa blue.
pub fn layout() -> Result<Picture, Error> {
    let rows: Vec<(String, u32, u32, u32, String)> = std::iter::once((
        "f32".to_string(),
        1,
        8,
        23,
        "bias 127, max ≈3.40282e38".to_string(),
    ))
    .chain(crate::registry::all().map(|f| {
        let fmt = f;
        (
            f.name.to_string(),
            fmt.signed as u32,
            fmt.exponent_bits,
            fmt.mantissa_bits,
            format!(
                "bias {}, max {}",
                fmt.bias,
                crate::number::readable(f.max_value())
            ),
        )
    }))
    .collect();
    let (width, row_h, top, left, cell) = (1200u32, 40i32, 70i32, 130i32, 24i32);
    let height = (top + row_h * rows.len() as i32 + 20) as u32;
    picture("layout.png", (width, height), |root| {
        let title = (FAMILY, 26).into_font();
        let label = (FAMILY, 18).into_font();
        let small = (FAMILY, 15).into_font();
        root.draw(&Text::new(
            "Bit layout: sign | exponent | mantissa",
            (left, 18),
            title,
        ))
        .map_err(s)?;
        let parts = [
            ("sign", PALETTE[3]),
            ("exponent", PALETTE[2]),
            ("mantissa", PALETTE[0]),
        ];
        for (i, (name, colour)) in parts.iter().enumerate() {
            let x = left + 560 + i as i32 * 150;
            root.draw(&Rectangle::new([(x, 22), (x + 18, 40)], colour.filled()))
                .map_err(s)?;
            root.draw(&Text::new(*name, (x + 24, 22), small.clone()))
                .map_err(s)?;
        }
        for (i, (name, sign, exp, mant, note)) in rows.iter().enumerate() {
            let y = top + i as i32 * row_h;
            root.draw(&Text::new(name.as_str(), (10, y + 6), label.clone()))
                .map_err(s)?;
            let fields = [(*sign, PALETTE[3]), (*exp, PALETTE[2]), (*mant, PALETTE[0])];
            let mut x = left;
            for (bits, colour) in fields {
                for _ in 0..bits {
                    root.draw(&Rectangle::new(
                        [(x + 1, y + 2), (x + cell - 1, y + row_h - 8)],
                        colour.filled(),
                    ))
                    .map_err(s)?;
                    x += cell;
                }
            }
            let text = format!("{sign}+{exp}+{mant}  {note}");
            root.draw(&Text::new(text, (x + 12, y + 6), small.clone()))
                .map_err(s)?;
        }
        Ok(())
    })
}

/// How many positive values of a format lie in each binade `[2^e, 2^(e+1))`: `(e, count,
/// subnormal)`, and the overflow threshold (`MAX` plus half its spacing).
pub fn binades(format: &Format) -> (Vec<(i32, u32, bool)>, f64) {
    let fmt = format;
    let mut out: Vec<(i32, u32, bool)> = Vec::new();
    for bits in 1..=fmt.max_finite_bits() {
        let v = format.to_f64(bits);
        if !(v.is_finite() && v > 0.0) {
            continue;
        }
        let e = v.log2().floor() as i32;
        let subnormal = fmt.subnormals && bits >> fmt.mantissa_bits == 0;
        match out.last_mut() {
            Some((last, count, _)) if *last == e => *count += 1,
            _ => out.push((e, 1, subnormal)),
        }
    }
    if !fmt.subnormals {
        // E8M0: bits 0 is 2^-127, a value of its own binade.
        out.insert(0, (fmt.min_exponent(), 1, false));
    }
    let threshold = format.max_value() + pow2(fmt.max_exponent() - fmt.mantissa_bits as i32) / 2.0;
    (out, threshold)
}

/// Where every format's values lie: one row per format, one bar per binade (height: values in
/// the binade on a log scale), subnormal binades in orange, the overflow threshold in red.
pub fn values(formats: &[&'static Format]) -> Result<Picture, Error> {
    let n = formats.len() as f64;
    picture(
        "values.png",
        (1400, 120 + 56 * formats.len() as u32),
        |root| {
            let mut chart = ChartBuilder::on(root)
                .caption(
                    "Representable values: bars per binade, height = log2(values in it)",
                    (FAMILY, 24),
                )
                .margin(14)
                .x_label_area_size(46)
                .y_label_area_size(110)
                .build_cartesian_2d(-46f64..40f64, 0f64..n)
                .map_err(s)?;
            let names: Vec<&str> = formats.iter().map(|f| f.name).collect();
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_labels(18)
                .y_labels(formats.len() * 2 + 1)
                .x_label_formatter(&|v| format!("1e{}", v.round()))
                .y_label_formatter(&|v| {
                    let i = (n - v - 0.5).round();
                    if (n - v - 0.5 - i).abs() < 0.01 && i >= 0.0 && (i as usize) < names.len() {
                        names[i as usize].to_string()
                    } else {
                        String::new()
                    }
                })
                .x_desc("magnitude (log scale)")
                .label_style((FAMILY, 16))
                .axis_desc_style((FAMILY, 18))
                .draw()
                .map_err(s)?;
            chart
                .draw_series(LineSeries::new(
                    [(0.0, 0.0), (0.0, n)],
                    BLACK.mix(0.3).stroke_width(1),
                ))
                .map_err(s)?;
            for (i, f) in formats.iter().enumerate() {
                let base = n - 1.0 - i as f64;
                let (bins, threshold) = binades(f);
                let log2_10 = std::f64::consts::LOG10_2;
                for (e, count, subnormal) in bins {
                    let height = 0.1 + 0.75 * (count as f64).log2().max(0.0) / 10.0;
                    let colour = if subnormal { PALETTE[1] } else { PALETTE[0] };
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [
                                (e as f64 * log2_10, base + 0.06),
                                ((e + 1) as f64 * log2_10, base + 0.06 + height.min(0.88)),
                            ],
                            colour.mix(0.85).filled(),
                        )))
                        .map_err(s)?;
                }
                let t = threshold.log10();
                chart
                    .draw_series(LineSeries::new(
                        [(t, base + 0.02), (t, base + 0.98)],
                        PALETTE[3].stroke_width(3),
                    ))
                    .map_err(s)?;
            }
            // The legend, drawn by hand: three swatches.
            let legend = [
                ("normal binades", PALETTE[0]),
                ("subnormal binades", PALETTE[1]),
                ("overflow threshold", PALETTE[3]),
            ];
            for (k, (text, colour)) in legend.iter().enumerate() {
                let x = 140 + k as i32 * 230;
                let y = 50;
                root.draw(&Rectangle::new([(x, y), (x + 18, y + 14)], colour.filled()))
                    .map_err(s)?;
                root.draw(&Text::new(*text, (x + 24, y), (FAMILY, 15).into_font()))
                    .map_err(s)?;
            }
            Ok(())
        },
    )
}

/// The formats the rounding-error picture shows: the 16-bit formats and the FP8 value formats
/// (every signed format of at least 8 bits), in [`Format::ALL`]'s order.
pub fn rounding_formats() -> Vec<&'static Format> {
    Format::ALL
        .iter()
        .filter(|f| f.signed && f.total_bits() >= 8)
        .collect()
}

/// The largest relative rounding error against magnitude, for [`rounding_formats`].
pub fn rounding_error() -> Result<Picture, Error> {
    picture("rounding-error.png", (1400, 760), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Largest relative rounding error at each magnitude (midpoints between neighbours)",
                (FAMILY, 24),
            )
            .margin(14)
            .x_label_area_size(46)
            .y_label_area_size(70)
            .build_cartesian_2d(-42f64..40f64, -4.2f64..0.2f64)
            .map_err(s)?;
        chart
            .configure_mesh()
            .x_labels(18)
            .y_labels(10)
            .x_label_formatter(&|v| format!("1e{}", v.round()))
            .y_label_formatter(&|v| {
                if (v - v.round()).abs() < 0.01 {
                    format!("1e{}", v.round())
                } else {
                    String::new()
                }
            })
            .x_desc("magnitude (log scale)")
            .y_desc("relative error (log scale)")
            .label_style((FAMILY, 16))
            .axis_desc_style((FAMILY, 18))
            .draw()
            .map_err(s)?;
        for (i, format) in rounding_formats().into_iter().enumerate() {
            let name = format.name;
            let midpoints = kernels(format).map_err(s)?.midpoint_errors;
            let points: Vec<(f64, f64)> = midpoints()
                .into_iter()
                .map(|(x, e)| (x.log10(), e.log10()))
                .collect();
            let colour = PALETTE[i % PALETTE.len()];
            let width = if i < 4 { 2 } else { 1 };
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(width)))
                .map_err(s)?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font((FAMILY, 16))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(s)?;
        Ok(())
    })
}

/// One line of the running-sums chart: its label, its `(step, sum)` points and its colour.
type Series<'a> = (&'a str, &'a [(usize, f64)], RGBColor);

/// The running sums of `lowp accumulate`: in the format, Kahan in the format, in f32, and the
/// exact running sum, with the stall marked.
pub fn running_sums(outcome: &Outcome) -> Result<Picture, Error> {
    let name = format!("accumulate-{}.png", outcome.format);
    let n = outcome.setup.n as f64;
    let series: Vec<Series> = vec![
        ("exact", &outcome.exact_running[..], BLACK),
        (
            "f32 accumulator",
            &outcome.methods[3].running[..],
            PALETTE[0],
        ),
        (
            "Kahan in the format",
            &outcome.methods[1].running[..],
            PALETTE[2],
        ),
        ("in the format", &outcome.methods[0].running[..], PALETTE[3]),
    ];
    let (lo, hi) = series
        .iter()
        .flat_map(|(_, pts, _)| pts.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold((0f64, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let pad = ((hi - lo) * 0.05).max(1e-9);
    let title = format!(
        "Running sum of {} values ({}) in {}",
        outcome.setup.n,
        outcome.setup.distribution.describe(),
        outcome.format
    );
    picture(&name, (1200, 700), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FAMILY, 24))
            .margin(14)
            .x_label_area_size(46)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..n, (lo - pad)..(hi + pad))
            .map_err(s)?;
        chart
            .configure_mesh()
            .x_desc("values added")
            .y_desc("running sum")
            .label_style((FAMILY, 16))
            .axis_desc_style((FAMILY, 18))
            .draw()
            .map_err(s)?;
        for (label, pts, colour) in &series {
            let colour = *colour;
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|&(i, v)| (i as f64, v)),
                    colour.stroke_width(2),
                ))
                .map_err(s)?
                .label(*label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
                });
        }
        if let Some((step, sum)) = outcome.stall.frozen {
            let text = format!(
                "stalls at {} after {step} values",
                crate::number::readable(sum)
            );
            chart
                .draw_series(std::iter::once(Circle::new(
                    (step as f64, sum),
                    6,
                    PALETTE[3].filled(),
                )))
                .map_err(s)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (step as f64 + n * 0.01, sum + pad * 0.6),
                    (FAMILY, 16).into_font(),
                )))
                .map_err(s)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FAMILY, 16))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(s)?;
        Ok(())
    })
}

/// The pictures of `lowp plot`, drawn (not yet written).
pub fn all() -> Result<Vec<Picture>, Error> {
    let formats: Vec<&'static Format> = crate::registry::all().collect();
    Ok(vec![layout()?, values(&formats)?, rounding_error()?])
}

/// Writes `pictures` into `dir` (created if missing), and answers the paths.
pub fn write_all(dir: &Path, pictures: &[Picture]) -> Result<Vec<PathBuf>, Error> {
    create_dir(dir)?;
    pictures.iter().map(|p| p.write(dir)).collect()
}

/// Creates `dir` and its parents, unless it exists; a file, device or FIFO in the way is a
/// usage error ([`lowp_fs::create_dir`]).
pub fn create_dir(dir: &Path) -> Result<(), Error> {
    Ok(lowp_fs::create_dir(dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::lookup;

    /// The width, height and colour type of a PNG.
    fn header(png: &[u8]) -> (u32, u32) {
        let decoder = png::Decoder::new(png);
        let reader = decoder.read_info().unwrap();
        let info = reader.info();
        (info.width, info.height)
    }

    #[test]
    fn f16_binades_and_threshold() {
        let (bins, threshold) = binades(lookup("f16").unwrap());
        assert_eq!(threshold, 65520.0);
        // 10 subnormal binades of 1, 2, ..., 512 values, then 30 binades of 1024.
        assert_eq!(bins.len(), 40);
        assert_eq!(bins[0], (-24, 1, true));
        assert_eq!(bins[9], (-15, 512, true));
        assert_eq!(bins[10], (-14, 1024, false));
        assert_eq!(bins[39], (15, 1024, false)); // 32768..=65504
        let (bins, _) = binades(lookup("f8e8m0fnu").unwrap());
        assert_eq!(bins.len(), 255);
        assert!(bins.iter().all(|&(_, c, sub)| c == 1 && !sub));
    }

    #[test]
    fn midpoints_reach_one_at_zero_and_u_at_one() {
        let e = crate::kernels::midpoint_errors::<lowp::f16>();
        assert_eq!(e.len(), 0x7bff);
        assert_eq!(e[0], (pow2(-25), 1.0));
        let at_one = e.iter().find(|p| p.0 > 1.0).unwrap();
        assert_eq!(at_one.1, pow2(-11) / (1.0 + pow2(-11)));
    }

    #[test]
    fn pictures_are_pngs_with_text() {
        let pictures = all().unwrap();
        let names: Vec<&str> = pictures.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["layout.png", "values.png", "rounding-error.png"]);
        for p in &pictures {
            let (w, h) = header(&p.png);
            assert!(w >= 1000 && h >= 500, "{}: {w}x{h}", p.name);
        }
        // The font is embedded and draws: a caption leaves dark pixels at the top.
        let decoder = png::Decoder::new(&pictures[0].png[..]);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        let top_dark = buf[..1200 * 3 * 45].iter().filter(|&&b| b < 100).count();
        assert!(top_dark > 200, "{top_dark}");
    }
}
