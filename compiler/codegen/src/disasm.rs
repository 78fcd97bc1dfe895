//! The final machine code of compiled functions, disassembled (iced-x86,
//! Intel syntax): what `flowc opt --disasm` prints ([`crate::Native::code`])
//! and `FLOWC_DISASM=1` shows for every function compiled. Each instruction shows
//! its offset in the function, its bytes and its text; branch targets
//! inside the function are offsets too. Calls and constants that hold
//! absolute addresses differ from run to run; everything else is
//! deterministic.

use std::fmt::Write;

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};

/// The listing of `functions` (name, address, code).
pub fn listing(functions: &[(flowc_lang::Symbol, u64, &[u8])]) -> String {
    let mut out = String::new();
    if !cfg!(target_arch = "x86_64") {
        out.push_str("; --disasm decodes x86-64 only; the code's bytes follow\n");
    }
    for (name, address, code) in functions {
        writeln!(out, "; function {name}: {} bytes at {address:#x}", code.len()).unwrap();
        if cfg!(target_arch = "x86_64") {
            function(&mut out, code);
        } else {
            for l in instructions(code) {
                writeln!(out, "    {}", l.bytes).unwrap();
            }
        }
        out.push('\n');
    }
    out
}

/// One decoded instruction: its offset in the function, length, bytes
/// (hex) and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub offset: u32,
    pub len: u32,
    pub bytes: String,
    pub text: String,
}

/// The instructions of one function's code, in order (x86-64; elsewhere,
/// 16 bytes per line with no text).
pub fn instructions(code: &[u8]) -> Vec<Line> {
    let mut lines = Vec::new();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    if !cfg!(target_arch = "x86_64") {
        for (k, chunk) in code.chunks(16).enumerate() {
            let offset = 16 * k as u32;
            lines.push(Line { offset, len: chunk.len() as u32, bytes: hex(chunk), text: String::new() });
        }
        return lines;
    }
    // Offsets as addresses: intra-function branch targets read as offsets.
    let mut decoder = Decoder::with_ip(64, code, 0, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let options = formatter.options_mut();
    options.set_first_operand_char_index(8);
    options.set_hex_prefix("0x");
    options.set_hex_suffix("");
    options.set_branch_leading_zeros(false);
    options.set_leading_zeros(false);
    let mut inst = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut inst);
        let mut text = String::new();
        formatter.format(&inst, &mut text);
        let start = inst.ip() as usize;
        let bytes = hex(&code[start..start + inst.len()]);
        lines.push(Line { offset: start as u32, len: inst.len() as u32, bytes, text });
    }
    lines
}

fn function(out: &mut String, code: &[u8]) {
    for l in instructions(code) {
        writeln!(out, "  {:6x}:  {:<30} {}", l.offset, l.bytes, l.text).unwrap();
    }
}
