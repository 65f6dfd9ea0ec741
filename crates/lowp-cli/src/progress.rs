//! The progress bars of the analyses: `lowp_analysis::Progress` drawn with indicatif on stderr
//! when it is a terminal, and the Ctrl-C flag as the cancel flag.

use crate::interrupt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use lowp_analysis::{Control, Progress};
use lowp_io::report::significant;
use std::io::IsTerminal;
use std::sync::Mutex;

/// A bar per phase on stderr, drawn only when stderr is a terminal.
pub struct Bar {
    /// The bar of the running phase (hidden between phases).
    bar: Mutex<ProgressBar>,
    /// Whether bars are drawn.
    shown: bool,
}

impl Bar {
    /// Bars shown if stderr is a terminal.
    pub fn new() -> Bar {
        Bar {
            bar: Mutex::new(ProgressBar::hidden()),
            shown: std::io::stderr().is_terminal(),
        }
    }

    /// The running bar (a clone: indicatif's bars share their state).
    fn current(&self) -> ProgressBar {
        match self.bar.lock() {
            Ok(bar) => bar.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Progress for Bar {
    fn start(&self, total: u64, unit: &str) {
        if !self.shown {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let template =
            format!("{{bar:40}} {{human_pos}}/{{human_len}} {unit} {{rate}} eta {{eta}} {{msg}}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.with_key(
                "rate",
                |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}/s", significant(finite_rate(s.per_sec())));
                },
            ));
        }
        match self.bar.lock() {
            Ok(mut slot) => *slot = bar,
            Err(poisoned) => *poisoned.into_inner() = bar,
        }
    }

    fn advance(&self, n: u64) {
        self.current().inc(n);
    }

    fn message(&self, text: &str) {
        self.current().set_message(text.to_string());
    }

    fn finish(&self) {
        self.current().finish_and_clear();
    }
}

/// Runs `f` with progress bars and Ctrl-C (or SIGTERM) as the cancel flag.
pub fn with_control<T>(f: impl FnOnce(&Control<'_>) -> T) -> T {
    interrupt::watch_interrupts();
    let bar = Bar::new();
    f(&Control::new(&bar, interrupt::flag()))
}

/// A byte rate with three significant digits in binary units: `1.23 GiB/s`, `456 MiB/s`.
pub(crate) fn byte_rate(bytes_per_second: f64) -> String {
    let mut value = finite_rate(bytes_per_second);
    let mut unit = 0;
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{} {}/s", significant(value), UNITS[unit])
}

/// A measured rate, 0 while there is none yet (indicatif answers infinity or NaN then).
fn finite_rate(per_second: f64) -> f64 {
    if per_second.is_finite() && per_second > 0.0 {
        per_second
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::byte_rate;

    #[test]
    fn byte_rates_keep_three_significant_digits() {
        assert_eq!(byte_rate(1.5 * 1024.0 * 1024.0 * 1024.0), "1.50 GiB/s");
        assert_eq!(byte_rate(456.7 * 1024.0 * 1024.0), "457 MiB/s");
        assert_eq!(byte_rate(12.0), "12.0 B/s");
        assert_eq!(byte_rate(f64::NAN), "0 B/s");
        assert_eq!(byte_rate(f64::INFINITY), "0 B/s");
    }
}
