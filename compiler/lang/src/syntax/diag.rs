//! Parse errors with a place: `file:line:column`, the message, and the
//! offending line with a caret under the column.

use std::fmt;

/// A parse error at a byte offset of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The source line the error is on, without its newline.
    pub source_line: String,
}

impl ParseError {
    /// Locates `offset` in `source` (1-based line and column, in characters).
    pub fn at(file: &str, source: &str, offset: usize, message: impl Into<String>) -> ParseError {
        let offset = offset.min(source.len());
        let offset = (0..=offset).rev().find(|&i| source.is_char_boundary(i)).unwrap_or(0);
        let line_start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[offset..].find('\n').map_or(source.len(), |i| offset + i);
        let line = source[..line_start].matches('\n').count() + 1;
        let column = source[line_start..offset].chars().count() + 1;
        ParseError {
            file: file.to_owned(),
            line,
            column,
            message: message.into(),
            source_line: source[line_start..line_end].trim_end_matches('\r').to_owned(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}:{}:{}: parse error: {}", self.file, self.line, self.column, self.message)?;
        let gutter = self.line.to_string();
        writeln!(f, "{gutter} | {}", self.source_line)?;
        let pad: String =
            self.source_line.chars().take(self.column - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
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
}
