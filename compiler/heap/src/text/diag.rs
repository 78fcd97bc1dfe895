//! Parse errors with a place: `file:line:column`, the message, and the
//! offending line with a caret under the column. A line longer than
//! [`EXCERPT_WIDTH`] characters is cut to a window around the column, marked
//! with `...` where it was cut: a generated program's 7 MB line gives a
//! two-line message, not 14 MB of source and spaces.

use std::fmt;

/// A parse error at a byte offset of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The source line the error is on, without its newline — or, for a
    /// long line, the window of it shown ([`EXCERPT_WIDTH`]).
    pub source_line: String,
    /// Where the caret goes under `source_line`, in characters.
    pub caret: usize,
}

/// The most characters of a source line an error shows.
pub const EXCERPT_WIDTH: usize = 100;

impl ParseError {
    /// Locates `offset` in `source` (1-based line and column, in characters).
    pub fn at(file: &str, source: &str, offset: usize, message: impl Into<String>) -> ParseError {
        let offset = offset.min(source.len());
        let offset = (0..=offset).rev().find(|&i| source.is_char_boundary(i)).unwrap_or(0);
        let line_start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[offset..].find('\n').map_or(source.len(), |i| offset + i);
        let line = source[..line_start].matches('\n').count() + 1;
        let column = source[line_start..offset].chars().count() + 1;
        let (source_line, caret) = excerpt(source[line_start..line_end].trim_end_matches('\r'), column - 1);
        ParseError { file: file.to_owned(), line, column, message: message.into(), source_line, caret }
    }
}

/// The most characters of a token or term a message quotes.
pub const QUOTE_WIDTH: usize = 40;

/// `text` for quoting in a message: cut to [`QUOTE_WIDTH`] characters with
/// `...` when longer (a 7 MB integer is named by its start).
pub fn clip(text: impl fmt::Display) -> String {
    let text = text.to_string();
    match text.char_indices().nth(QUOTE_WIDTH) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

/// The part of `line` to show for an error at character `col`, and the
/// caret's position in it: the whole line if it is short, else a window of
/// [`EXCERPT_WIDTH`] characters around the column with `...` at cut ends.
fn excerpt(line: &str, col: usize) -> (String, usize) {
    // Counting stops early: only whether the line is long matters.
    if line.chars().nth(EXCERPT_WIDTH).is_none() {
        return (line.to_owned(), col);
    }
    let start = col.saturating_sub(EXCERPT_WIDTH / 2);
    let mut out = String::new();
    if start > 0 {
        out.push_str("...");
    }
    let caret = out.len() + (col - start);
    let mut chars = line.chars().skip(start);
    out.extend(chars.by_ref().take(EXCERPT_WIDTH));
    if chars.next().is_some() {
        out.push_str("...");
    }
    (out, caret)
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}:{}:{}: parse error: {}", self.file, self.line, self.column, self.message)?;
        let gutter = self.line.to_string();
        writeln!(f, "{gutter} | {}", self.source_line)?;
        let pad: String =
            self.source_line.chars().take(self.caret).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        write!(f, "{} | {pad}^", " ".repeat(gutter.len()))
    }
}

impl std::error::Error for ParseError {}

/// An error inside a parser before it knows the file: a byte offset and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawError {
    pub offset: usize,
    pub message: String,
}

impl RawError {
    pub fn new(offset: usize, message: impl Into<String>) -> RawError {
        RawError { offset, message: message.into() }
    }

    pub fn locate(self, file: &str, source: &str) -> ParseError {
        ParseError::at(file, source, self.offset, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_line_and_caret() {
        let src = "block(a,\n  jump(b).\n";
        let e = ParseError::at("x.pl", src, 15, "expected `)`");
        assert_eq!(e.to_string(), "x.pl:2:7: parse error: expected `)`\n2 |   jump(b).\n  |       ^");
    }

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let src = format!("x = {}!{}\n", "1".repeat(7_000_000), "2".repeat(1000));
        let e = ParseError::at("big.fg", &src, 7_000_004, "unexpected `!`");
        let text = e.to_string();
        assert!(text.len() < 400, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "big.fg:1:7000005: parse error: unexpected `!`");
        // The caret is under the `!`.
        let caret = lines[2].find('^').unwrap();
        assert_eq!(&lines[1][caret..caret + 1], "!");
        assert!(lines[1].starts_with("1 | ...1") && lines[1].ends_with("2..."), "{}", lines[1]);
        // Near the start of a long line there is nothing cut before.
        let e = ParseError::at("big.fg", &src, 2, "here");
        assert!(e.to_string().lines().nth(1).unwrap().starts_with("1 | x = 111"));
    }
}
