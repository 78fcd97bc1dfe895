//! Random Brainfuck programs that always end, for differential tests of
//! the engines running the BF interpreters written in the language: a
//! program nobody shaped for the JIT, drawn from the loop shapes real BF
//! programs are made of.
//!
//! A program is a sequence of *pieces*, each written at cells chosen
//! near the current one:
//! - a run of `+` or `-` at a cell, an output `.` of one;
//! - a clear, `[-]` or `[+]`;
//! - a *transfer*: a loop stepping its own cell by 1 (down or up) and
//!   others at distances up to 9 by a few (`[->+<]`, `[-<<<+>>>]`, the
//!   moves of a mandelbrot's records of nine cells), its step at any
//!   point of the body;
//! - a *counted loop*: its cell set (`[-]` then a few `+`), then a body of
//!   pieces and one step of its cell by -1, anywhere among them
//!   (`[>+<-]` and `[->+<]` alike), back at its cell where it closes;
//! - a *once*: a loop around pieces that clears its cell last, an `if`;
//! - at the outermost level, a *scan* `[>]`, `[>>]` or `[>>>]` to the first
//!   0 cell to the right, which the tape always has (cells grown are 0).
//!
//! Why each ends: a loop's cell is stepped by one piece only, once a
//! round, by ±1, and no piece inside writes it (cells of the loops around
//! are *busy*: nothing inside writes them); so it reaches 0 within 256
//! rounds. Counted loops start at a few rounds, so a nest of three runs
//! some hundreds of innermost rounds.
//!
//! Where each goes: positions are counted from where the last scan
//! stopped, at the same position as it started (`pos`); cells left of the
//! scan's stop were the program's own, so a move left never passes the
//! tape's first cell (the BF model, [`super::bf::run`], rejects one).
//! The program ends by writing every cell from its first to the furthest
//! reached, so the checksum depends on the whole tape.

use crate::rng::Rng;

/// A random program from `seed`, of some `size` pieces at the outermost
/// level (nested pieces add to it): a short run, each loop going round a
/// few times.
pub fn program(seed: u64, size: usize) -> String {
    generate(seed, size, Rounds { outer: (1, 40), inner: (1, 6) })
}

/// [`program`] with hot loops: counted loops at the outermost level go
/// round 100 to 250 times, those inside them 4 to 20 times, so the
/// nests run some million rounds in all, which a JIT traces.
pub fn long_program(seed: u64, size: usize) -> String {
    generate(seed, size, Rounds { outer: (100, 250), inner: (4, 20) })
}

/// The rounds of counted loops, drawn from `lo..=hi`: at the outermost
/// level and inside loops.
struct Rounds {
    outer: (usize, usize),
    inner: (usize, usize),
}

fn generate(seed: u64, size: usize, rounds: Rounds) -> String {
    let mut g = Gen { rng: Rng::new(seed), out: String::new(), pos: 0, far: 0, busy: Vec::new(), rounds };
    for _ in 0..size {
        g.piece(0);
    }
    // Every cell, left to right, written.
    g.go(0);
    for k in 0..=g.far {
        g.go(k);
        g.out.push('.');
    }
    g.out
}

struct Gen {
    rng: Rng,
    out: String,
    /// Where the program is, counted from the cell the last scan started
    /// from (where it stopped, as far as later pieces can tell).
    pos: usize,
    /// The furthest cell reached.
    far: usize,
    /// The cells of the loops around the piece being written.
    busy: Vec<usize>,
    rounds: Rounds,
}

/// The most levels of loops inside one another.
const DEEPEST: usize = 3;

impl Gen {
    fn go(&mut self, to: usize) {
        let (c, n) = if to > self.pos { ('>', to - self.pos) } else { ('<', self.pos - to) };
        self.out.extend(std::iter::repeat_n(c, n));
        self.pos = to;
        self.far = self.far.max(to);
    }

    fn run(&mut self, c: char, n: usize) {
        self.out.extend(std::iter::repeat_n(c, n));
    }

    /// A cell within `reach` of the current one that no loop around
    /// steps, if the draw finds one.
    fn free_cell(&mut self, reach: usize) -> Option<usize> {
        for _ in 0..8 {
            let lo = self.pos.saturating_sub(reach);
            let at = lo + self.rng.below(self.pos + reach - lo + 1);
            if !self.busy.contains(&at) {
                return Some(at);
            }
        }
        None
    }

    fn piece(&mut self, depth: usize) {
        let deeper = depth < DEEPEST;
        match self.rng.below(if depth == 0 { 9 } else { 8 }) {
            0 | 1 => {
                if let Some(at) = self.free_cell(4) {
                    self.go(at);
                    let n = 1 + self.rng.below(6);
                    let c = if self.rng.chance(70) { '+' } else { '-' };
                    self.run(c, n);
                }
            }
            2 => {
                let reach = 4;
                let lo = self.pos.saturating_sub(reach);
                let at = lo + self.rng.below(self.pos + reach - lo + 1);
                self.go(at);
                self.out.push('.');
            }
            3 => {
                if let Some(at) = self.free_cell(4) {
                    self.go(at);
                    self.out.push_str(if self.rng.chance(80) { "[-]" } else { "[+]" });
                }
            }
            4 => self.transfer(),
            5 | 6 if deeper => self.counted(depth),
            7 if deeper => self.once(depth),
            8 => {
                let stride = 1 + self.rng.below(3);
                self.out.push('[');
                self.run('>', stride);
                self.out.push(']');
            }
            _ => {
                if let Some(at) = self.free_cell(2) {
                    self.go(at);
                    self.run('+', 1);
                }
            }
        }
    }

    /// `[->+<]` and its kin: the loop's own cell stepped by one, cells at
    /// distances up to 9 stepped by a few each round.
    fn transfer(&mut self) {
        let Some(at) = self.free_cell(3) else { return };
        let others: Vec<(usize, char, usize)> = (0..1 + self.rng.below(3))
            .filter_map(|_| {
                let d = 1 + self.rng.below(9);
                let to = if self.rng.chance(60) { at + d } else { at.checked_sub(d)? };
                let c = if self.rng.chance(75) { '+' } else { '-' };
                (!self.busy.contains(&to)).then_some((to, c, 1 + self.rng.below(3)))
            })
            .collect();
        let step = if self.rng.chance(85) { '-' } else { '+' };
        let first = self.rng.below(others.len() + 1);
        self.go(at);
        self.out.push('[');
        for (k, &(to, c, n)) in others.iter().enumerate() {
            if k == first {
                self.go(at);
                self.out.push(step);
            }
            self.go(to);
            self.run(c, n);
        }
        self.go(at);
        if first == others.len() {
            self.out.push(step);
        }
        self.out.push(']');
    }

    /// A loop of a few rounds around pieces, its cell stepped down once a
    /// round among them.
    fn counted(&mut self, depth: usize) {
        let Some(at) = self.free_cell(3) else { return };
        self.go(at);
        let (lo, hi) = if depth == 0 && self.rng.chance(30) { self.rounds.outer } else { self.rounds.inner };
        let rounds = lo + self.rng.below(hi - lo + 1);
        self.out.push_str("[-]");
        self.run('+', rounds);
        self.out.push('[');
        self.busy.push(at);
        let n = 1 + self.rng.below(4);
        let step = self.rng.below(n + 1);
        for k in 0..=n {
            if k == step {
                self.go(at);
                self.out.push('-');
            }
            if k < n {
                self.piece(depth + 1);
            }
        }
        self.busy.pop();
        self.go(at);
        self.out.push(']');
    }

    /// `[ ... [-]]`: pieces run once if the cell is not 0.
    fn once(&mut self, depth: usize) {
        let Some(at) = self.free_cell(3) else { return };
        self.go(at);
        self.out.push('[');
        self.busy.push(at);
        for _ in 0..1 + self.rng.below(3) {
            self.piece(depth + 1);
        }
        self.busy.pop();
        self.go(at);
        self.out.push_str("[-]]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated programs are valid (brackets matched, never left of the
    /// first cell), end within a bound, and differ by seed; the same seed
    /// gives the same program.
    #[test]
    fn generated_programs_end_and_vary() {
        let mut texts = std::collections::HashSet::new();
        let mut loops = 0;
        for seed in 0..200 {
            let text = program(seed, 12);
            assert_eq!(text, program(seed, 12));
            let (_, steps) = crate::bf::run(&text).unwrap_or_else(|| panic!("seed {seed}: invalid: {text}"));
            assert!(steps < 20_000_000, "seed {seed}: {steps} steps");
            loops += text.matches('[').count();
            texts.insert(text);
        }
        assert_eq!(texts.len(), 200);
        assert!(loops > 1_000, "only {loops} loops in 200 programs");
        // Long programs run long: ten times the steps of short ones.
        let steps = |make: fn(u64, usize) -> String| -> u64 {
            (0..20).map(|seed| crate::bf::run(&make(seed, 30)).map_or(0, |(_, n)| n)).sum()
        };
        let (short, long) = (steps(program), steps(long_program));
        assert!(long > 10 * short, "{long} steps against {short}");
    }
}
