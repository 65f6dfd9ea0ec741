//! `lowp plot`: PNG pictures where a picture says more than a table.
//!
//! * `layout.png`: the bit layout of every format (and f32 for reference);
//! * `values.png`: where each format's values lie on a log scale: one bar per binade whose
//!   height is the number of values in it (on a log scale: the bits of precision), the
//!   subnormal binades apart, the overflow threshold marked;
//! * `rounding-error.png`: the largest relative rounding error at each magnitude, one panel per
//!   format: the error of rounding the midpoint between each pair of neighbouring values, where
//!   it is largest;
//! * `accumulate-FORMAT.png` (by `lowp accumulate --plot` and `lowp report`): running sums;
//! * [`losses`]: training loss per epoch of several runs (`lowp train --compare`).
//!
//! plotters draws with DejaVu Sans embedded in the binary (`assets/`), so the pictures render
//! on machines with no font installed. Each picture is drawn into memory, encoded as PNG and
//! written to a temporary name that is renamed into place.

use crate::accumulate::Outcome;
use crate::error::Error;
use crate::format_grid::{midpoint_errors, pow2};
use crate::output::write_atomically;
use lowp::Format;
/// The drawing library, for callers that draw pictures of their own with [`picture`].
pub use plotters;

pub mod losses;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::collections::BTreeMap;
use std::ops::Range;
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

/// The bit layout of f32 (for reference) and each of `formats`: one box per bit, sign red,
/// exponent green, mantissa blue.
pub fn layout(formats: &[&'static Format]) -> Result<Picture, Error> {
    let rows: Vec<(String, u32, u32, u32, String)> = std::iter::once((
        "f32".to_string(),
        1,
        8,
        23,
        "bias 127, max ≈3.40282e38".to_string(),
    ))
    .chain(formats.iter().map(|f| {
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

/// A plotting area in pixels of the whole picture: its columns and its rows.
type Frame = (Range<i32>, Range<i32>);

/// The pixels a graph covers, column by column: `(x, top, bottom)` for each pixel column that
/// the polyline through `points` (pixel coordinates, in order of x) crosses.
///
/// plotters draws a polyline wider than one pixel as polygons with mitred joins, and a dense
/// saw-tooth or random walk turns back on itself within a pixel, where mitres shoot out as
/// spikes far past the data. Spans per column hold exactly the pixels the line passes through.
fn column_spans(points: impl IntoIterator<Item = (i32, i32)>) -> Vec<(i32, i32, i32)> {
    let mut spans: BTreeMap<i32, (i32, i32)> = BTreeMap::new();
    let mut cover = |x: i32, a: f64, b: f64| {
        let (top, bottom) = (a.min(b).round() as i32, a.max(b).round() as i32);
        let span = spans.entry(x).or_insert((top, bottom));
        *span = (span.0.min(top), span.1.max(bottom));
    };
    let mut previous: Option<(f64, f64)> = None;
    for (x, y) in points {
        let (x, y) = (f64::from(x), f64::from(y));
        match previous {
            Some((x0, y0)) if x0 != x => {
                // Each column gets the part of the segment within half a pixel of it, so
                // neighbouring columns join up however steep the segment.
                let at = |t: f64| y0 + (y - y0) * ((t - x0) / (x - x0)).clamp(0.0, 1.0);
                for c in (x0.min(x) as i32)..=(x0.max(x) as i32) {
                    let c64 = f64::from(c);
                    cover(c, at(c64 - 0.5), at(c64 + 0.5));
                }
            }
            Some((_, y0)) => cover(x as i32, y0, y),
            None => cover(x as i32, y, y),
        }
        previous = Some((x, y));
    }
    spans.into_iter().map(|(x, (t, b))| (x, t, b)).collect()
}

/// Draws the graph through `points` (pixel coordinates, in order of x) in `colour`,
/// `2 * radius + 1` pixels thick, clipped to `frame` (pixel ranges, on the whole picture).
fn draw_graph(
    screen: &DrawingArea<BitMapBackend<'_>, Shift>,
    frame: &Frame,
    points: impl IntoIterator<Item = (i32, i32)>,
    colour: RGBColor,
    radius: i32,
) -> Result<(), String> {
    let (xs, ys) = frame;
    let clamp = |(x, y): (i32, i32)| (x.clamp(xs.start, xs.end - 1), y.clamp(ys.start, ys.end - 1));
    for (x, top, bottom) in column_spans(points.into_iter().map(clamp)) {
        // The backend fills up to, not including, the second corner.
        let (x0, x1) = ((x - radius).max(xs.start), (x + radius + 1).min(xs.end));
        let (y0, y1) = (
            (top - radius).max(ys.start),
            (bottom + radius + 1).min(ys.end),
        );
        screen
            .draw(&Rectangle::new([(x0, y0), (x1, y1)], colour.filled()))
            .map_err(s)?;
    }
    Ok(())
}

/// `10^v` for a whole `v` (`1e-8`, `1`, `10`, `1e5`), and nothing between: the labels of a
/// log10 axis.
fn power_of_ten(v: f64) -> String {
    if (v - v.round()).abs() > 0.01 {
        return String::new();
    }
    match v.round() as i64 {
        0 => "1".to_string(),
        1 => "10".to_string(),
        k => format!("1e{k}"),
    }
}

/// Width and height of one panel of the rounding-error picture, and the height of its title.
const PANEL: (u32, u32, u32) = (430, 290, 64);

/// The vertical range of every rounding-error panel: log10 of the relative error, 1e-4 to 1
/// (the smallest error of every format, f16's `2^-12`, is above 1e-4).
const ERROR_RANGE: Range<f64> = -4.2..0.2;

/// One panel of the rounding-error picture: its format, its plotting area in pixels and the
/// ranges it maps there (log10 of the magnitude, log10 of the relative error).
#[derive(Clone, Debug)]
struct Panel {
    format: &'static Format,
    pixels: Frame,
    x: Range<f64>,
    y: Range<f64>,
}

/// How many panels to a row, and how many rows, for `n` formats.
fn grid(n: usize) -> (usize, usize) {
    let columns = n.clamp(1, 4);
    (columns, n.div_ceil(columns))
}

/// The largest relative rounding error against magnitude: one panel per format of `formats`
/// (small multiples, so formats with the same values, as the E4M3 variants, stay visible), each
/// with its own magnitude axis and the same error axis.
pub fn rounding_error(formats: &[&'static Format]) -> Result<Picture, Error> {
    Ok(rounding_error_panels(formats)?.0)
}

/// [`rounding_error`], and where it drew each panel.
fn rounding_error_panels(formats: &[&'static Format]) -> Result<(Picture, Vec<Panel>), Error> {
    let (columns, rows) = grid(formats.len());
    let (panel_w, panel_h, title_h) = PANEL;
    // Wide enough for the title even with one or two panels.
    let width = (columns as u32 * panel_w).max(960);
    let height = title_h + rows as u32 * panel_h;
    let mut data = Vec::new();
    for format in formats {
        let midpoints = lowp::with_format!(format, T => midpoint_errors::<T>(), else => return Err(Error::no_type(format)));
        let points: Vec<(f64, f64)> = midpoints
            .into_iter()
            .filter(|&(x, e)| x > 0.0 && e > 0.0)
            .map(|(x, e)| (x.log10(), e.log10()))
            .collect();
        data.push((*format, points));
    }
    let mut panels = Vec::new();
    let picture = picture("rounding-error.png", (width, height), |root| {
        root.draw(&Text::new(
            "Largest relative rounding error at each magnitude",
            (16, 10),
            (FAMILY, 24).into_font(),
        ))
        .map_err(s)?;
        root.draw(&Text::new(
            "The error of rounding the midpoint between neighbouring values, relative to it; \
             both axes on a log scale, each panel its own range of magnitudes.",
            (16, 40),
            (FAMILY, 15).into_font(),
        ))
        .map_err(s)?;
        let body = root.margin(title_h, 0, 0, 0);
        let areas = body.split_evenly((rows, columns));
        let screen = root.use_screen_coord();
        for (i, ((format, points), area)) in data.iter().zip(&areas).enumerate() {
            let (lo, hi) = points
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                    (lo.min(p.0), hi.max(p.0))
                });
            let (lo, hi) = if lo <= hi {
                (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
            } else {
                (0.0, 1.0)
            };
            let mut panel = Panel {
                format,
                pixels: (0..0, 0..0),
                x: lo..hi,
                y: ERROR_RANGE,
            };
            let colour = PALETTE[i % PALETTE.len()];
            let mut chart = ChartBuilder::on(area)
                .caption(
                    match panel.format.mantissa_bits + 1 {
                        1 => format!("{} (1 bit of precision)", panel.format.name),
                        p => format!("{} ({p} bits of precision)", panel.format.name),
                    },
                    (FAMILY, 17),
                )
                .margin(10)
                .x_label_area_size(42)
                .y_label_area_size(52)
                .build_cartesian_2d(panel.x.clone(), panel.y.clone())
                .map_err(s)?;
            chart
                .configure_mesh()
                .x_labels(6)
                .y_labels(9)
                .x_label_formatter(&|v| power_of_ten(*v))
                .y_label_formatter(&|v| power_of_ten(*v))
                .x_desc("magnitude")
                .label_style((FAMILY, 14))
                .axis_desc_style((FAMILY, 14))
                .draw()
                .map_err(s)?;
            panel.pixels = chart.plotting_area().get_pixel_range();
            let pixels: Vec<(i32, i32)> = points.iter().map(|p| chart.backend_coord(p)).collect();
            draw_graph(&screen, &panel.pixels, pixels.iter().copied(), colour, 1)?;
            // A few values are points, not a curve: mark them.
            if pixels.len() <= 64 {
                for &(x, y) in &pixels {
                    screen
                        .draw(&Rectangle::new(
                            [(x - 3, y - 3), (x + 4, y + 4)],
                            colour.filled(),
                        ))
                        .map_err(s)?;
                }
            }
            panels.push(panel);
        }
        Ok(())
    })?;
    Ok((picture, panels))
}

/// One line of the running-sums chart: its label, its `(step, sum)` points, its colour and how
/// many pixels it reaches either side of its centre line.
type Series<'a> = (&'a str, &'a [(usize, f64)], RGBColor, i32);

/// The width of the running-sums picture's legend, right of the chart, so that it covers no
/// line wherever the sums go.
const LEGEND_W: u32 = 250;

/// A count as a tick label: whole thousands and millions shortened (`50k`, `2M`), the rest in
/// full (`1500`), never with a decimal point.
fn count_label(v: u64) -> String {
    match v {
        0 => "0".to_string(),
        v if v % 1_000_000 == 0 => format!("{}M", v / 1_000_000),
        v if v % 1_000 == 0 => format!("{}k", v / 1_000),
        v => v.to_string(),
    }
}

/// A sum as a tick label: whole numbers without `.0` (`50000`), the rest as short as they read
/// (`0.5`, `-2.25`), without the binary noise of a tick computed in f64 (`0.30000000000000004`).
fn sum_label(v: f64) -> String {
    let rounded = (v * 1e9).round() / 1e9;
    if rounded == 0.0 {
        "0".to_string()
    } else {
        rounded.to_string()
    }
}

/// The running sums of `lowp accumulate`: in the format, Kahan in the format, in f32, and the
/// exact running sum, with the stall marked.
pub fn running_sums(outcome: &Outcome) -> Result<Picture, Error> {
    Ok(running_sums_framed(outcome)?.0)
}

/// [`running_sums`], and the pixels of its plotting area.
fn running_sums_framed(outcome: &Outcome) -> Result<(Picture, Frame), Error> {
    let name = format!("accumulate-{}.png", outcome.format);
    let n = outcome.setup.n as u64;
    // Drawn widest first, each narrower than the one below it, so that sums that agree (the
    // f32 and Kahan sums often follow the exact one to the pixel) still show every colour.
    let series: Vec<Series> = vec![
        ("exact", &outcome.exact_running[..], RGBColor(90, 90, 90), 4),
        (
            "f32 accumulator",
            &outcome.methods[3].running[..],
            PALETTE[0],
            3,
        ),
        (
            "Kahan in the format",
            &outcome.methods[1].running[..],
            PALETTE[2],
            2,
        ),
        (
            "in the format",
            &outcome.methods[0].running[..],
            PALETTE[3],
            1,
        ),
    ];
    let (lo, hi) = series
        .iter()
        .flat_map(|(_, pts, _, _)| pts.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold((0f64, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let pad = ((hi - lo) * 0.05).max(1e-9);
    let title = format!(
        "Running sum of {} values ({}) in {}",
        outcome.setup.n,
        outcome.setup.distribution.describe(),
        outcome.format
    );
    let mut frame = (0..0, 0..0);
    let picture = picture(&name, (1200, 700), |root| {
        let body = root
            .margin(8, 0, 0, 0)
            .titled(&title, (FAMILY, 24))
            .map_err(s)?;
        let (left, right) = body.split_horizontally(1200 - LEGEND_W);
        let mut chart = ChartBuilder::on(&left)
            .margin(14)
            .x_label_area_size(58)
            .y_label_area_size(90)
            .build_cartesian_2d(0u64..n.max(1), (lo - pad)..(hi + pad))
            .map_err(s)?;
        chart
            .configure_mesh()
            .x_labels(8)
            .x_label_formatter(&|v| count_label(*v))
            .y_label_formatter(&|v| sum_label(*v))
            .x_desc("values added")
            .y_desc("running sum")
            .label_style((FAMILY, 16))
            .axis_desc_style((FAMILY, 18))
            .draw()
            .map_err(s)?;
        frame = chart.plotting_area().get_pixel_range();
        let screen = root.use_screen_coord();
        for (_, pts, colour, radius) in &series {
            let pixels = pts
                .iter()
                .filter(|p| p.1.is_finite())
                .map(|&(i, v)| chart.backend_coord(&(i as u64, v)));
            draw_graph(&screen, &frame, pixels, *colour, *radius)?;
        }
        if let Some((step, sum)) = outcome.stall.frozen {
            let text = format!(
                "stalls at {} after {step} values",
                crate::number::readable(sum)
            );
            let (x, y) = chart.backend_coord(&(step as u64, sum));
            screen
                .draw(&Circle::new((x, y), 7, PALETTE[3].filled()))
                .map_err(s)?;
            // Above the line, towards the middle of the chart so the text stays inside it.
            let style: TextStyle = (FAMILY, 16).into();
            let (w, _) = root.estimate_text_size(&text, &style).map_err(s)?;
            let x = if x + 12 + w as i32 <= frame.0.end {
                x + 12
            } else {
                x - 12 - w as i32
            };
            let y = if y - 30 >= frame.1.start {
                y - 30
            } else {
                y + 12
            };
            screen.draw(&Text::new(text, (x, y), style)).map_err(s)?;
        }
        // The legend, drawn by hand beside the chart.
        let font = (FAMILY, 16).into_font();
        for (k, (label, _, colour, radius)) in series.iter().enumerate() {
            let y = 40 + k as i32 * 30;
            right
                .draw(&Rectangle::new(
                    [(10, y + 8 - radius), (40, y + 9 + radius)],
                    colour.filled(),
                ))
                .map_err(s)?;
            right
                .draw(&Text::new(*label, (50, y), font.clone()))
                .map_err(s)?;
        }
        if outcome.stall.frozen.is_some() {
            let y = 40 + series.len() as i32 * 30;
            right
                .draw(&Circle::new((25, y + 8), 7, PALETTE[3].filled()))
                .map_err(s)?;
            right
                .draw(&Text::new("stall", (50, y), font.clone()))
                .map_err(s)?;
        }
        Ok(())
    })?;
    Ok((picture, frame))
}

/// The pictures of `lowp plot`, drawn (not yet written).
pub fn all() -> Result<Vec<Picture>, Error> {
    let formats: Vec<&'static Format> = crate::registry::all().collect();
    Ok(vec![
        layout(&formats)?,
        values(&formats)?,
        rounding_error(&formats)?,
    ])
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

/// A decoder of the pictures for tests, here and in the modules that make pictures through
/// this one (report), so each can check what a person would see.
#[cfg(test)]
pub(crate) mod test_image {
    use super::Frame;
    use plotters::style::RGBColor;

    /// A decoded RGB picture.
    pub(crate) struct Image {
        pub(crate) width: i32,
        pub(crate) height: i32,
        rgb: Vec<u8>,
    }

    impl Image {
        pub(crate) fn decode(png: &[u8]) -> Image {
            let mut reader = png::Decoder::new(png).read_info().unwrap();
            let mut rgb = vec![0; reader.output_buffer_size()];
            let info = reader.next_frame(&mut rgb).unwrap();
            assert_eq!(info.color_type, png::ColorType::Rgb);
            Image {
                width: info.width as i32,
                height: info.height as i32,
                rgb,
            }
        }

        pub(crate) fn at(&self, x: i32, y: i32) -> (u8, u8, u8) {
            let i = 3 * (y * self.width + x) as usize;
            (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
        }

        /// The pixels of exactly `colour` in the region.
        pub(crate) fn pixels(&self, (xs, ys): &Frame, colour: RGBColor) -> Vec<(i32, i32)> {
            let mut out = Vec::new();
            for y in ys.clone() {
                for x in xs.clone() {
                    if self.at(x, y) == (colour.0, colour.1, colour.2) {
                        out.push((x, y));
                    }
                }
            }
            out
        }

        /// The whole picture as a region.
        pub(crate) fn all(&self) -> Frame {
            (0..self.width, 0..self.height)
        }

        /// How many separate vertical runs of `colour` column `x` crosses.
        pub(crate) fn runs_down(&self, x: i32, colour: RGBColor) -> usize {
            let hit: Vec<bool> = (0..self.height)
                .map(|y| self.at(x, y) == (colour.0, colour.1, colour.2))
                .collect();
            hit.windows(2).filter(|w| w[1] && !w[0]).count() + usize::from(hit[0])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_image::Image;
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
        let e = crate::format_grid::midpoint_errors::<lowp::f16>();
        assert_eq!(e.len(), 0x7bff);
        assert_eq!(e[0], (pow2(-25), 1.0));
        let at_one = e.iter().find(|p| p.0 > 1.0).unwrap();
        assert_eq!(at_one.1, pow2(-11) / (1.0 + pow2(-11)));
    }

    /// Where `v` lies between `range.start` (at pixel `pixels.start`) and `range.end` (at
    /// `pixels.end - 1`), reversed when `flip` (a y axis grows upwards).
    fn pixel(v: f64, range: &Range<f64>, pixels: &Range<i32>, flip: bool) -> f64 {
        let t = (v - range.start) / (range.end - range.start);
        let t = if flip { 1.0 - t } else { t };
        f64::from(pixels.start) + t * f64::from(pixels.end - 1 - pixels.start)
    }

    #[test]
    fn column_spans_cover_the_line_and_nothing_else() {
        // Down and back up within one column: the span is the data's, no further.
        assert_eq!(column_spans([(5, 10), (5, 40), (5, 20)]), [(5, 10, 40)]);
        // A steep segment over three columns reaches every row between, in halves.
        assert_eq!(
            column_spans([(0, 0), (2, 40)]),
            [(0, 0, 10), (1, 10, 30), (2, 30, 40)]
        );
        assert_eq!(column_spans([]), []);
    }

    #[test]
    fn rounding_error_has_one_clean_panel_per_format() {
        let formats: Vec<&'static Format> = crate::registry::all().collect();
        let (picture, panels) = rounding_error_panels(&formats).unwrap();
        let image = Image::decode(&picture.png);
        assert_eq!((image.width, image.height), (4 * 430, 64 + 3 * 290));
        let names: Vec<&str> = panels.iter().map(|p| p.format.name).collect();
        let all: Vec<&str> = Format::ALL.iter().map(|f| f.name).collect();
        assert_eq!(names, all);
        for (i, panel) in panels.iter().enumerate() {
            let name = panel.format.name;
            let colour = PALETTE[i % PALETTE.len()];
            let drawn = image.pixels(&panel.pixels, colour);
            assert!(drawn.len() >= 40, "{name}: {} pixels", drawn.len());
            // Every pixel of the line lies within the data (give or take the line's width and
            // the markers of sparse formats): no spikes past the smallest error.
            let midpoints = lowp::with_format!(panel.format, T => midpoint_errors::<T>());
            let logs = midpoints.iter().map(|&(x, e)| (x.log10(), e.log10()));
            let (x_lo, x_hi, e_lo, e_hi) = logs.fold(
                (
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                ),
                |(a, b, c, d), (x, e)| (a.min(x), b.max(x), c.min(e), d.max(e)),
            );
            let (xs, ys) = &panel.pixels;
            let left = pixel(x_lo, &panel.x, xs, false) - 5.0;
            let right = pixel(x_hi, &panel.x, xs, false) + 5.0;
            let top = pixel(e_hi, &panel.y, ys, true) - 5.0;
            let bottom = pixel(e_lo, &panel.y, ys, true) + 5.0;
            for &(x, y) in &drawn {
                let (x, y) = (f64::from(x), f64::from(y));
                assert!(
                    (left..=right).contains(&x) && (top..=bottom).contains(&y),
                    "{name}: a pixel at ({x}, {y}) outside the data's {left}..{right} x \
                     {top}..{bottom}"
                );
            }
            // No other format's line strays into the panel.
            for other in PALETTE.iter().filter(|&&c| c != colour) {
                assert!(image.pixels(&panel.pixels, *other).is_empty(), "{name}");
            }
        }
        // Each format of the same values gets its own line: bf16's normal errors lie between
        // 2^-9 and 2^-8, with nothing near 1e-3.
        let bf16 = &panels[1];
        let lowest = image
            .pixels(&bf16.pixels, PALETTE[1])
            .iter()
            .map(|p| p.1)
            .max()
            .unwrap();
        let at_1e3 = pixel(-3.0, &bf16.y, &bf16.pixels.1, true);
        assert!(f64::from(lowest) < at_1e3 - 5.0, "{lowest} {at_1e3}");
    }

    #[test]
    fn tick_labels_are_whole_numbers() {
        assert_eq!(count_label(50_000), "50k");
        assert_eq!(count_label(2_000_000), "2M");
        assert_eq!(count_label(1500), "1500");
        assert_eq!(count_label(0), "0");
        assert_eq!(sum_label(50000.0), "50000");
        assert_eq!(sum_label(0.1 + 0.2), "0.3");
        assert_eq!(sum_label(-2.25), "-2.25");
        assert_eq!(sum_label(-1e-12), "0");
        assert_eq!(power_of_ten(-8.0), "1e-8");
        assert_eq!(power_of_ten(0.0), "1");
        assert_eq!(power_of_ten(0.5), "");
    }

    #[test]
    fn running_sums_show_every_line_with_the_legend_beside_them() {
        use crate::accumulate::{Distribution, Setup};
        use crate::progress::Control;
        let colours = [
            ("exact", RGBColor(90, 90, 90)),
            ("f32", PALETTE[0]),
            ("Kahan", PALETTE[2]),
            ("in the format", PALETTE[3]),
        ];
        for distribution in [Distribution::Uniform, Distribution::Normal] {
            let setup = Setup {
                n: 100_000,
                distribution,
                seed: 0,
            };
            let f16 = lookup("f16").unwrap();
            let outcome = crate::accumulate::run(f16, &setup, &Control::none()).unwrap();
            let (picture, frame) = running_sums_framed(&outcome).unwrap();
            let image = Image::decode(&picture.png);
            assert_eq!((image.width, image.height), (1200, 700));
            // The legend lies right of the chart, over no line.
            assert!(frame.0.end <= 1200 - LEGEND_W as i32, "{frame:?}");
            let legend = (frame.0.end + 1..1200, 0..700);
            for (name, colour) in colours {
                let inside = image.pixels(&frame, colour).len();
                assert!(inside >= 300, "{distribution:?} {name}: {inside} pixels");
                let swatch = image.pixels(&legend, colour).len();
                assert!(swatch >= 30, "{distribution:?} {name}: swatch {swatch}");
            }
            // The last tick label, centred on the axis' end, is whole: it reaches past the end
            // and stops short of the picture's edge.
            let dark = |(r, g, b): (u8, u8, u8)| r < 100 && g < 100 && b < 100;
            let mut rightmost = 0;
            for y in frame.1.end + 3..frame.1.end + 26 {
                for x in 0..1200 {
                    if dark(image.at(x, y)) {
                        rightmost = rightmost.max(x);
                    }
                }
            }
            assert!(
                rightmost > frame.0.end && rightmost < 1200 - 4,
                "{rightmost} {frame:?}"
            );
            // The x axis' description is whole: below the tick labels, clear of the edge.
            let dark = |y: i32| (0..1200).any(|x| dark(image.at(x, y)));
            let label_rows: Vec<i32> = (frame.1.end + 28..700).filter(|&y| dark(y)).collect();
            assert!(label_rows.len() >= 10, "{label_rows:?}");
            assert!(
                (694..700).all(|y| (0..1200).all(|x| image.at(x, y) == (255, 255, 255))),
                "the bottom rows are not blank"
            );
        }
    }

    #[test]
    fn pictures_are_pngs_with_text() {
        let pictures = all().unwrap();
        let names: Vec<&str> = pictures.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["layout.png", "values.png", "rounding-error.png"]);
        // Every format, and f32 for reference, in the layout.
        let layout = Image::decode(&pictures[0].png);
        let signs = layout.runs_down(142, PALETTE[3]);
        assert_eq!(signs, 1 + Format::ALL.iter().filter(|f| f.signed).count());
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
