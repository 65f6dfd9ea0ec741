//! The progress bars of the analyses: `lowp_analysis::Progress` drawn with indicatif on stderr
//! when it is a terminal, and the Ctrl-C flag as the cancel flag.

use crate::interrupt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lowp_analysis::{Control, Progress};
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
        let template = format!(
            "{{bar:40}} {{human_pos}}/{{human_len}} {unit} {{per_sec}} eta {{eta}} {{msg}}"
        );
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
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
