//! Rendering shared by the reports: aligned text tables, Markdown, CSV and JSON, and writing
//! files atomically.
//!
//! A command builds a [`Table`] of typed [`Cell`]s once; each renderer decides how a cell reads:
//! numbers are [`readable`](crate::number::readable) in text and Markdown, lossless in CSV and
//! JSON numbers in JSON.

use crate::error::Error;
use crate::number;
use serde_json::{Map, Value};

/// How a column's cells line up in a text table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right.
    Left,
    /// Padded on the left (counts).
    Right,
}

/// Which outputs show a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Every output.
    Always,
    /// Only text and Markdown tables (a summary a person reads).
    Human,
    /// Only CSV and JSON (a detail a program reads).
    Machine,
}

/// A column: its stable machine name (JSON key, CSV header) and its human heading.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// JSON key and CSV header, in snake_case; part of the stable output format.
    pub key: &'static str,
    /// Heading in text and Markdown tables.
    pub header: &'static str,
    /// Alignment in text and Markdown tables.
    pub align: Align,
    /// Which outputs show the column.
    pub shown: Shown,
}

impl Column {
    /// A left-aligned column shown everywhere.
    pub const fn left(key: &'static str, header: &'static str) -> Self {
        Column {
            key,
            header,
            align: Align::Left,
            shown: Shown::Always,
        }
    }

    /// A right-aligned column shown everywhere.
    pub const fn right(key: &'static str, header: &'static str) -> Self {
        Column {
            key,
            header,
            align: Align::Right,
            shown: Shown::Always,
        }
    }

    /// The column, shown only in text and Markdown.
    pub const fn human_only(self) -> Self {
        Column {
            shown: Shown::Human,
            ..self
        }
    }

    /// The column, shown only in CSV and JSON.
    pub const fn machine_only(self) -> Self {
        Column {
            shown: Shown::Machine,
            ..self
        }
    }
}

/// One value in a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Text, the same in every output.
    Text(String),
    /// An integer.
    Int(i64),
    /// A real number: readable in tables, shortest round-trip in CSV, a number in JSON.
    Number(f64),
    /// A real number known only approximately (a rounded error): as [`Cell::Number`], but
    /// always marked `≈` in tables.
    Approx(f64),
    /// A yes/no fact (`yes`/`no` in tables, `true`/`false` in CSV and JSON).
    Bool(bool),
    /// Not applicable (`-` in tables, empty in CSV, `null` in JSON).
    Empty,
}

impl Cell {
    /// The cell as a person reads it in a text or Markdown table.
    pub fn human(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Number(x) => number::readable(*x),
            Cell::Approx(x) => number::approximate(*x),
            Cell::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
            Cell::Empty => "-".to_string(),
        }
    }

    /// The cell in CSV, before quoting.
    fn csv(&self) -> String {
        match self {
            Cell::Number(x) | Cell::Approx(x) => number::lossless(*x),
            Cell::Bool(b) => b.to_string(),
            Cell::Empty => String::new(),
            other => other.human(),
        }
    }

    /// The cell as a JSON value (non-finite numbers become `null`).
    pub fn json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::String(s.clone()),
            Cell::Int(n) => Value::from(*n),
            Cell::Number(x) | Cell::Approx(x) => {
                serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number)
            }
            Cell::Bool(b) => Value::Bool(*b),
            Cell::Empty => Value::Null,
        }
    }
}

/// Rows of cells under a list of columns.
#[derive(Clone, Debug, Default)]
pub struct Table {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows; each has one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// The table without the columns hidden from a human (`human`) or machine reader.
    fn for_reader(&self, human: bool) -> Table {
        let hidden = if human { Shown::Machine } else { Shown::Human };
        let keep: Vec<bool> = self.columns.iter().map(|c| c.shown != hidden).collect();
        let pick = |cells: &[Cell]| -> Vec<Cell> {
            cells
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(c, _)| c.clone())
                .collect()
        };
        Table {
            columns: self
                .columns
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(c, _)| *c)
                .collect(),
            rows: self.rows.iter().map(|r| pick(r)).collect(),
        }
    }

    /// An aligned plain-text table: headings, a rule of dashes, one line per row.
    pub fn to_text(&self) -> String {
        let table = self.for_reader(true);
        table.text_unfiltered()
    }

    /// [`Table::to_text`] of every column.
    fn text_unfiltered(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(Cell::human).collect())
            .collect();
        let headers: Vec<String> = self.columns.iter().map(|c| c.header.to_string()).collect();
        let widths = self.widths(&headers, &cells);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        let mut out = String::new();
        for line in std::iter::once(&headers)
            .chain(std::iter::once(&rule))
            .chain(&cells)
        {
            let padded: Vec<String> = line
                .iter()
                .zip(&self.columns)
                .zip(&widths)
                .map(|((s, c), &w)| pad(s, w, c.align))
                .collect();
            out.push_str(padded.join("  ").trim_end());
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured Markdown table.
    pub fn to_markdown(&self) -> String {
        self.for_reader(true).markdown_unfiltered()
    }

    /// [`Table::to_markdown`] of every column.
    fn markdown_unfiltered(&self) -> String {
        let escape = |s: &str| s.replace('|', "\\|");
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| escape(&c.human())).collect())
            .collect();
        let headers: Vec<String> = self.columns.iter().map(|c| escape(c.header)).collect();
        let widths = self.widths(&headers, &cells);
        let rule: Vec<String> = self
            .columns
            .iter()
            .zip(&widths)
            .map(|(c, &w)| match c.align {
                Align::Left => "-".repeat(w.max(3)),
                Align::Right => format!("{}:", "-".repeat(w.max(3) - 1)),
            })
            .collect();
        let line = |cells: &[String]| -> String {
            let padded: Vec<String> = cells
                .iter()
                .zip(&self.columns)
                .zip(&widths)
                .map(|((s, c), &w)| pad(s, w.max(3), c.align))
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let mut out = line(&headers);
        out.push_str(&line(&rule));
        for row in &cells {
            out.push_str(&line(row));
        }
        out
    }

    /// CSV (RFC 4180) with the column keys as the header line.
    pub fn to_csv(&self) -> String {
        self.for_reader(false).csv_unfiltered()
    }

    /// [`Table::to_csv`] of every column.
    fn csv_unfiltered(&self) -> String {
        let mut out = String::new();
        let keys: Vec<String> = self.columns.iter().map(|c| csv_field(c.key)).collect();
        out.push_str(&keys.join(","));
        out.push('\n');
        for row in &self.rows {
            let fields: Vec<String> = row.iter().map(|c| csv_field(&c.csv())).collect();
            out.push_str(&fields.join(","));
            out.push('\n');
        }
        out
    }

    /// The rows as JSON objects keyed by the column keys.
    pub fn to_json_records(&self) -> Vec<Value> {
        self.for_reader(false).json_unfiltered()
    }

    /// [`Table::to_json_records`] of every column.
    fn json_unfiltered(&self) -> Vec<Value> {
        self.rows
            .iter()
            .map(|row| {
                let map: Map<String, Value> = self
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(c, cell)| (c.key.to_string(), cell.json()))
                    .collect();
                Value::Object(map)
            })
            .collect()
    }

    /// Width in characters of each column over the headings and the cells.
    fn widths(&self, headers: &[String], cells: &[Vec<String>]) -> Vec<usize> {
        (0..self.columns.len())
            .map(|i| {
                std::iter::once(&headers[i])
                    .chain(cells.iter().map(|r| &r[i]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }
}

/// `s` padded with spaces to `width` characters.
fn pad(s: &str, width: usize, align: Align) -> String {
    let fill = " ".repeat(width.saturating_sub(s.chars().count()));
    match align {
        Align::Left => format!("{s}{fill}"),
        Align::Right => format!("{fill}{s}"),
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Pretty-printed JSON followed by a newline.
pub fn json_text(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_string());
    s.push('\n');
    s
}

/// Writes `contents` to `file` through [`lowp_fs::write_atomically`]: a new temporary file
/// beside it (created exclusively, under an unpredictable name), renamed into place, so a
/// failure never leaves a half-written file; a `file` that is a device, FIFO, socket or
/// directory is refused, never replaced.
pub fn write_atomically(file: &std::path::Path, contents: &[u8]) -> Result<(), Error> {
    Ok(lowp_fs::write_atomically(file, contents)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table {
            columns: vec![
                Column::left("name", "name"),
                Column::right("max", "max value"),
                Column::left("note", "note").human_only(),
                Column::left("id", "id").machine_only(),
            ],
            rows: vec![
                vec![
                    Cell::Text("f16".into()),
                    Cell::Number(65504.0),
                    Cell::Text("hi".into()),
                    Cell::Int(1),
                ],
                vec![
                    Cell::Text("a,b".into()),
                    Cell::Empty,
                    Cell::Text("x".into()),
                    Cell::Int(2),
                ],
            ],
        }
    }

    #[test]
    fn text_is_aligned() {
        assert_eq!(
            sample().to_text(),
            "name  max value  note\n----  ---------  ----\nf16       65504  hi\na,b           -  x\n"
        );
    }

    #[test]
    fn markdown_has_alignment_row() {
        let md = sample().to_markdown();
        assert!(
            md.starts_with("| name | max value | note |\n| ---- | --------: | ---- |\n"),
            "{md}"
        );
    }

    #[test]
    fn csv_quotes_and_leaves_empty() {
        assert_eq!(sample().to_csv(), "name,max,id\nf16,65504,1\n\"a,b\",,2\n");
    }

    #[test]
    fn json_records_use_keys() {
        let recs = sample().to_json_records();
        assert_eq!(recs[0]["max"], 65504.0);
        assert!(recs[1]["max"].is_null());
        assert_eq!(recs[1]["id"], 2);
        assert!(recs[1].get("note").is_none());
    }
}
