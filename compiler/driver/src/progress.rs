//! Progress of long compilations, on a terminal: a spinner with the phase
//! under way (front end, the eight passes, code generation) and the time
//! so far, on stderr, for programs of at least [`LARGE`] statements (which
//! take a second or more to compile). Nothing is drawn when stderr is not
//! a terminal (indicatif's draw target hides itself), so scripts and tests
//! see the same output as before.
//!
//! Whether drawn or not, it times each phase ([`Progress::phases`]), which
//! `run --stats` reports.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Programs of at least this many statements show progress.
pub const LARGE: usize = 50_000;

/// The progress display of one compilation (nothing drawn for small
/// programs) and the time each phase took.
pub struct Progress {
    bar: Option<ProgressBar>,
    times: RefCell<Times>,
}

/// The phases finished, and the one under way with when it started.
#[derive(Default)]
struct Times(Vec<(&'static str, Duration)>, Option<(&'static str, Instant)>);

impl Progress {
    /// Progress for compiling `program`, shown if it is large.
    pub fn for_program(program: &flowc_lang::Program) -> Progress {
        let statements = program.statement_count();
        let times = RefCell::default();
        if statements < LARGE {
            return Progress { bar: None, times };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} compiling {prefix} statements: {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(statements.to_string());
        bar.enable_steady_tick(Duration::from_millis(100));
        Progress { bar: Some(bar), times }
    }

    /// The phase now under way. What the phases before it freed goes
    /// back to the operating system first
    /// ([`flowc_runtime::release_freed_memory`]): phase boundaries are
    /// where a compilation's temporaries die.
    pub fn phase(&self, what: &'static str) {
        self.end_phase();
        flowc_runtime::release_freed_memory();
        self.times.borrow_mut().1 = Some((what, Instant::now()));
        if let Some(bar) = &self.bar {
            bar.set_message(what);
        }
    }

    fn end_phase(&self) {
        let mut times = self.times.borrow_mut();
        if let Some((what, started)) = times.1.take() {
            times.0.push((what, started.elapsed()));
        }
    }

    /// Ends the display; returns each phase and the time it took, in order.
    pub fn finish(self) -> Vec<(&'static str, Duration)> {
        self.end_phase();
        std::mem::take(&mut self.times.borrow_mut().0)
    }
}

/// `phases` as one line: `front end 12.3 ms, the eight passes 4.5 ms, ...`.
pub fn describe(phases: &[(&'static str, Duration)]) -> String {
    let parts: Vec<String> = phases.iter().map(|(what, d)| format!("{what} {:.3} ms", d.as_secs_f64() * 1e3)).collect();
    parts.join(", ")
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
