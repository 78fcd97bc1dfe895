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
            for chunk in code.chunks(16) {
                let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
                writeln!(out, "    {}", hex.join(" ")).unwrap();
            }
        }
        out.push('\n');
    }
    out
}

fn function(out: &mut String, code: &[u8]) {
    // Offsets as addresses: intra-function branch targets read as offsets.
    let mut decoder = Decoder::with_ip(64, code, 0, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let options = formatter.options_mut();
    options.set_first_operand_char_index(8);
    options.set_hex_prefix("0x");
    options.set_hex_suffix("");
    options.set_branch_leading_zeros(false);
    options.set_leading_zeros(false);
    let mut text = String::new();
    let mut inst = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut inst);
        text.clear();
        formatter.format(&inst, &mut text);
        let start = inst.ip() as usize;
        let bytes: Vec<String> = code[start..start + inst.len()].iter().map(|b| format!("{b:02x}")).collect();
        writeln!(out, "  {start:6x}:  {:<30} {text}", bytes.join(" ")).unwrap();
    }
}
