//! The common environment list read a byte at a time: `[name/value, ...]`
//! where each value is an integer or a list of such values, with plain
//! layout between the tokens. An interpreter's program given as an
//! environment is that: a BF program of 100,000 instructions and its
//! bracket map are half a megabyte of digits and commas, which the term
//! reader ([`super::term`]) took 170 million instructions to read (a
//! token and a term built per integer), a tenth of a second's run.
//!
//! What it reads it reads as the term reader and [`super::env_list`] do:
//! the same integers ([`super::machine_int`], as [`super::parse_int`]
//! reads them), lists
//! ([`Value::list`]) and names. Anything else — atoms as values, quoted
//! names, comments, digit separators, integers of more than 18 digits, a
//! name of letters past ASCII, lists nested deeper than [`MOST_DEPTH`],
//! and every error — it leaves to the term reader (`None`), which reads
//! the whole text again and says where an error is.

use crate::symbol::Symbol;
use crate::value::Value;

/// Lists nested deeper than this are left to the term reader (which
/// bounds nesting and says so).
const MOST_DEPTH: usize = 64;

/// The environment `src` holds, if it is of the common shape (see the
/// module docs); `None` to leave it to the term reader.
pub(super) fn read(src: &str) -> Option<Vec<(Symbol, Value)>> {
    let mut r = Bytes { s: src.as_bytes(), pos: 0 };
    r.layout();
    r.eat(b'[')?;
    let mut env = Vec::new();
    r.layout();
    if !r.eat_if(b']') {
        loop {
            r.layout();
            let name = r.name()?;
            r.layout();
            r.eat(b'/')?;
            r.layout();
            env.push((name, r.value(0)?));
            r.layout();
            if r.eat_if(b']') {
                break;
            }
            r.eat(b',')?;
        }
    }
    r.layout();
    // An optional final `.`, then nothing but layout.
    if r.eat_if(b'.') {
        r.layout();
    }
    (r.pos == r.s.len()).then_some(env)
}

struct Bytes<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn layout(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat_if(&mut self, b: u8) -> bool {
        let here = self.peek() == Some(b);
        self.pos += usize::from(here);
        here
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        self.eat_if(b).then_some(())
    }

    /// A name the term reader reads as an atom: a lower-case ASCII letter,
    /// then ASCII letters, digits and `_`, not followed by `(` (a compound
    /// term) nor by a letter past ASCII (which would continue it).
    fn name(&mut self) -> Option<Symbol> {
        let start = self.pos;
        if !self.peek()?.is_ascii_lowercase() {
            return None;
        }
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            self.pos += 1;
        }
        if self.peek().is_some_and(|b| b == b'(' || !b.is_ascii()) {
            return None;
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).ok()?;
        Some(Symbol::intern(text))
    }

    /// An integer of at most 18 digits, or a list of values.
    fn value(&mut self, depth: usize) -> Option<Value> {
        match self.peek()? {
            b'[' if depth < MOST_DEPTH => {
                self.pos += 1;
                let mut items = Vec::new();
                self.layout();
                if !self.eat_if(b']') {
                    loop {
                        self.layout();
                        items.push(self.value(depth + 1)?);
                        self.layout();
                        if self.eat_if(b']') {
                            break;
                        }
                        self.eat(b',')?;
                    }
                }
                // (Grown by doubling: a BF program of 96,000 instructions
                // and its bracket map kept 1 MB they did not use.)
                items.shrink_to_fit();
                Some(Value::list(items))
            }
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                self.pos += usize::from(self.peek() == Some(b'-'));
                let digits = self.pos;
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                }
                // A separator or a letter after the digits: the term
                // reader's, and so are more digits than a machine word
                // surely holds (`machine_int`).
                if self.peek().is_some_and(|b| b == b'_' || b.is_ascii_alphabetic() || !b.is_ascii()) {
                    return None;
                }
                super::machine_int(&self.s[digits..self.pos], digits > start)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::term::Reader;

    /// What the term reader reads of `src` as an environment.
    fn by_terms(src: &str) -> Option<Vec<(Symbol, Value)>> {
        Reader::new(src).whole_term().and_then(|t| crate::text::env_list(&t)).ok()
    }

    /// Every environment it reads, the term reader reads alike; what it
    /// leaves, the term reader still reads (or rejects) as before. A fixed
    /// pseudo-random walk over the shapes environments take, and the edge
    /// cases of each token.
    #[test]
    fn it_reads_what_the_term_reader_reads() {
        // Read here.
        let fast = [
            "[]",
            " [ ] . ",
            "[x/1]",
            "[x/-5, y/0, z/-0, w/007]",
            "[x/999999999999999999, y/-999999999999999999]",
            "[prog/[43,45,62,[],[1,[2,[3]]]], map/[0, 5, -1]]",
            "[x/1].",
            "[x/1].\n",
            "[a_1B/2]",
            "[\tx\n/\r3\n]",
        ];
        // Left to the term reader (each read, or rejected, alike in the end).
        let left = [
            "[x/1000000000000000000]",
            "[x/1_000]",
            "[x/foo]",
            "['X'/1]",
            "[x/1] % a comment",
            "[x/1 /* a comment */]",
            "[é/1]",
            "[xé/1]",
            "[f(x)/1]",
            "[x/f(1)]",
            "[x/- 5]",
            "[x/1,]",
            "[x/1",
            "x/1",
            "[X/1]",
            "[x/1] y",
            "[x/1.]",
            "[x/12a]",
            "[x/[1|[]]]",
        ];
        for src in fast.iter().chain(&left) {
            if let Some(env) = read(src) {
                assert_eq!(Some(env), by_terms(src), "{src}");
            }
            assert_eq!(
                crate::text::parse_env(src).map_err(|e| e.to_string()),
                Reader::new(src)
                    .whole_term()
                    .and_then(|t| crate::text::env_list(&t))
                    .map_err(|e| e.locate("--env", src).to_string()),
                "{src}"
            );
        }
        assert!(fast.iter().all(|src| read(src).is_some()), "the common shape read fast");
        assert!(left.iter().all(|src| read(src).is_none()), "the rest left to the term reader");
        // Generated: integers of every length, lists nested and empty,
        // layout of every kind.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..500 {
            let mut src = String::from("[");
            let bindings = next() % 5;
            for b in 0..bindings {
                if b > 0 {
                    src.push(',');
                }
                src.push_str(["", " ", "\n", "\t "][(next() % 4) as usize]);
                src.push_str(&format!("v{b}/"));
                value(&mut src, &mut next, 0);
            }
            src.push(']');
            let fast = read(&src).unwrap_or_else(|| panic!("left to the term reader: {src}"));
            assert_eq!(Some(fast), by_terms(&src), "{src}");
        }
    }

    fn value(src: &mut String, next: &mut impl FnMut() -> u64, depth: usize) {
        if depth < 3 && next().is_multiple_of(3) {
            src.push('[');
            for k in 0..next() % 4 {
                if k > 0 {
                    src.push_str([",", ", ", " ,\n"][(next() % 3) as usize]);
                }
                value(src, next, depth + 1);
            }
            src.push(']');
        } else {
            let digits = 1 + next() % 18;
            let n = next() % 10u64.pow(digits as u32);
            if next().is_multiple_of(2) {
                src.push('-');
            }
            src.push_str(&n.to_string());
        }
    }
}
