//! The JIT log (`flowc run --jit-log FILE`, or `FLOWC_JIT_LOG=FILE`), in
//! the manner of PyPy's `PYPYLOG=jit-summary` and LuaJIT's `-jv`: one line
//! per event — a recording started, a trace or bridge compiled, a
//! recording aborted and why, a hot spot given up — and at the end the
//! [`super::Stats`], per piece of code. After each "compiled" line comes
//! the code's optimized IR, indented (PyPy's `jit-log-opt`), so the log
//! alone shows what a trace does.
//!
//! Lines start with the milliseconds since the JIT started, so the log
//! shows where the time goes; everything after the time is deterministic.

use std::io::Write;
use std::time::Instant;

pub struct Log {
    out: Box<dyn Write>,
    started: Instant,
}

impl Log {
    pub fn new(out: Box<dyn Write>) -> Log {
        Log { out, started: Instant::now() }
    }

    /// Writes one event. A log that cannot be written is not an error of
    /// the program: failures are ignored.
    pub fn event(&mut self, text: std::fmt::Arguments) {
        let t = self.started.elapsed().as_secs_f64() * 1e3;
        let _ = writeln!(self.out, "[{t:10.3}] {text}");
    }

    /// Writes a block of text indented by four spaces (a trace's IR).
    pub fn indented(&mut self, text: &str) {
        for line in text.lines() {
            let _ = writeln!(self.out, "    {line}");
        }
    }

    /// Writes a block of text (the summary) as it is.
    pub fn text(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Log")
    }
}
