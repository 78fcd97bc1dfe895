//! Progress of long compilations, on a terminal: a spinner with the phase
//! under way (front end, the eight passes, code generation) and the time
//! so far, on stderr, for programs of at least [`LARGE`] statements (which
//! take a second or more to compile). Nothing is drawn when stderr is not
//! a terminal (indicatif's draw target hides itself), so scripts and tests
//! see the same output as before.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Programs of at least this many statements show progress.
pub const LARGE: usize = 50_000;

/// The progress display of one compilation (nothing for small programs).
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// Progress for compiling `program`, shown if it is large.
    pub fn for_program(program: &flowc_lang::Program) -> Progress {
        let statements = program.statement_count();
        if statements < LARGE {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} compiling {prefix} statements: {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(statements.to_string());
        bar.enable_steady_tick(Duration::from_millis(100));
        Progress(Some(bar))
    }

    /// The phase now under way.
    pub fn phase(&self, what: &'static str) {
        if let Some(bar) = &self.0 {
            bar.set_message(what);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}
