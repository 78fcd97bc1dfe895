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
//! IR lines longer than [`LINE_LIMIT`] bytes are cut (a resume record of
//! an interpreter holding its program as a list prints the whole list:
//! uncut, the log of a BF Mandelbrot run was 5.4 GB). Lists longer than
//! [`LIST_LIMIT`] are named, not printed ([`brief`]): cut lines still
//! had every list formatted first, and the log of public mandelbrot.b
//! took 26 s to write against a 3 s run.

use flowc_ir::Function;
use flowc_lang::{Symbol, Value};

use std::io::Write;
use std::time::Instant;

/// Longest IR line the log writes whole.
pub const LINE_LIMIT: usize = 1_000;

/// Longest constant list the log prints; a longer one prints as
/// `:list_of_N`.
pub const LIST_LIMIT: usize = 16;

/// `f` as the log shows it: each constant list longer than
/// [`LIST_LIMIT`] an atom naming its length (`:list_of_11669`), so that
/// printing costs what the code's size does, not its programs' lengths.
pub fn brief(f: &Function) -> Function {
    let mut f = f.clone();
    f.each_constant_mut(&mut |c| {
        if let Value::List(l) = c {
            if l.len() > LIST_LIMIT {
                *c = Value::Atom(Symbol::intern(&format!("list_of_{}", l.len())));
            }
        }
    });
    f
}

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
            if line.len() <= LINE_LIMIT {
                let _ = writeln!(self.out, "    {line}");
                continue;
            }
            let cut = (0..=LINE_LIMIT).rev().find(|&k| line.is_char_boundary(k)).unwrap_or(0);
            let _ = writeln!(self.out, "    {} ... ({} more bytes)", &line[..cut], line.len() - cut);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn long_lists_are_named_not_printed() {
        let text = "trace t(v0:p) {\nb0:\n    guard_value v0, [1, 2, 3], r0 else t\n    \
                    guard_value v0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], r0 else t\n    \
                    exit r0 to t\nresume r0 {\n    frame [p = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]]\n}\n}\n";
        let m = flowc_ir::parse::module("log", text).unwrap();
        let printed = flowc_ir::print::function(&brief(&m.functions[0]));
        assert!(printed.contains("guard_value v0, [1, 2, 3], r0"), "{printed}");
        assert!(printed.contains("guard_value v0, :list_of_17, r0"), "{printed}");
        assert!(printed.contains("frame [p = :list_of_17]"), "{printed}");
    }

    #[test]
    fn long_ir_lines_are_cut() {
        let out = Rc::new(RefCell::new(Vec::new()));
        let mut log = Log::new(Box::new(Shared(out.clone())));
        let long = format!("frame [prog = [{}]]", vec!["43"; 2_000].join(", "));
        log.indented(&format!("short line\n{long}"));
        let text = String::from_utf8(out.borrow().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    short line");
        assert_eq!(lines[1].len(), 4 + LINE_LIMIT + format!(" ... ({} more bytes)", long.len() - LINE_LIMIT).len());
        assert!(lines[1].ends_with(&format!(" ... ({} more bytes)", long.len() - LINE_LIMIT)), "{}", lines[1]);
    }
}
