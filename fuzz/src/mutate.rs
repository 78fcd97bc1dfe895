//! Random damage to a text: the edits a fuzzer makes to valid IR.

use flowc_tests::rng::Rng;

/// Applies one to four random edits to `text`.
pub fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut s = text.to_owned();
    for _ in 0..1 + rng.below(4) {
        s = edit(&s, rng);
    }
    s
}

/// Tokens that mean something to the IR parser, to insert.
const TOKENS: &[&str] = &[
    "v0",
    "v1",
    "v99",
    "b0",
    "b1",
    "b42",
    "r0",
    "r7",
    "@0",
    "phi [",
    "]",
    "(",
    ")",
    ",",
    ":",
    "=",
    "jump",
    "branch",
    "trap",
    "exit",
    "guard_true",
    "call",
    "new",
    "get",
    "set",
    "add.int",
    "readlist.word",
    "main",
    "function",
    "trace",
    "resume",
    "frame",
    "{",
    "}",
    "\n",
    "-1",
    "99999999999999999999",
    ":atom",
    "[1, 2]",
];

fn edit(s: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = s.lines().collect();
    match rng.below(8) {
        // Delete a line.
        0 if !lines.is_empty() => {
            let k = rng.below(lines.len());
            join(lines.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, l)| *l))
        }
        // Repeat a line.
        1 if !lines.is_empty() => {
            let k = rng.below(lines.len());
            let mut v = lines.clone();
            v.insert(k, lines[k]);
            join(v.into_iter())
        }
        // Swap two lines.
        2 if lines.len() > 1 => {
            let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
            let mut v = lines.clone();
            v.swap(a, b);
            join(v.into_iter())
        }
        // Insert a token.
        3 => {
            let at = char_boundary(s, rng.below(s.len() + 1));
            format!("{}{}{}", &s[..at], rng.pick(TOKENS), &s[at..])
        }
        // Delete a span.
        4 if !s.is_empty() => {
            let a = char_boundary(s, rng.below(s.len()));
            let b = char_boundary(s, (a + 1 + rng.below(16)).min(s.len()));
            format!("{}{}", &s[..a], &s[b..])
        }
        // Renumber one reference (v3 → v17, b1 → b0, …).
        5 => renumber(s, rng),
        // Truncate.
        6 => s[..char_boundary(s, rng.below(s.len() + 1))].to_owned(),
        // Replace a byte by a random printable one.
        _ if !s.is_empty() => {
            let at = char_boundary(s, rng.below(s.len()));
            let c = (b' ' + rng.below(95) as u8) as char;
            let end = char_boundary(s, at + 1);
            format!("{}{}{}", &s[..at], c, &s[end..])
        }
        _ => s.to_owned(),
    }
}

fn renumber(s: &str, rng: &mut Rng) -> String {
    let bytes = s.as_bytes();
    let starts: Vec<usize> = (0..bytes.len().saturating_sub(1))
        .filter(|&i| matches!(bytes[i], b'v' | b'b' | b'r') && bytes[i + 1].is_ascii_digit())
        .filter(|&i| i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
        .collect();
    if starts.is_empty() {
        return s.to_owned();
    }
    let at = starts[rng.below(starts.len())] + 1;
    let end = at + bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    format!("{}{}{}", &s[..at], rng.below(40), &s[end..])
}

fn char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

fn join<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}
