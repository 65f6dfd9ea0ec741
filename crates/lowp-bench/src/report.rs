//! What a benchmark gives back: its table, what the table's columns mean, and every
//! measurement as JSON, for a front end to print and write.

use lowp_analysis::output::Table;
use serde_json::Value;

/// What a benchmark measured, as data.
pub struct Report {
    /// The line above the table (the paths the code took and the thread count), where the
    /// benchmark gives it with its results.
    pub header: Option<String>,
    /// A row per measurement, its baselines beside it.
    pub table: Table,
    /// What the columns mean and how the figures were taken.
    pub notes: String,
    /// Every measurement, baselines included.
    pub json: Value,
}

impl Report {
    /// The report as text: the header, the table, a blank line and the notes.
    pub fn to_text(&self) -> String {
        let header = self
            .header
            .as_ref()
            .map_or(String::new(), |h| format!("{h}\n"));
        format!("{header}{}\n{}", self.table.to_text(), self.notes)
    }
}
