//! The baseline trace compiler's code (`flowc_codegen::baseline`): what a
//! tape cell's `v = (v + 1) % 256` compiles to, one instruction at a time,
//! and where a loop's variables live.

use flowc_codegen::compile::Tier;
use flowc_codegen::{Options, TraceCache};

/// A cell's value incremented modulo 256, as the BF interpreters' traces
/// do it, proven small (`.word`); then the loop goes on while it is not 0.
const TRACE: &str = "trace bump(v0:c) {
b0:
    guard_class v0, cell, r0 else out
    jump b1
b1 loop:
    v1:v = get v0, v
    v2:v = add.word v1, 1
    v3:v = mod.word v2, 256
    set v0, v, v3
    guard_true v3, r0 else out
    jump b1
resume r0 {
    frame [c = v0]
}
}
";

/// The disassembled instructions of `TRACE` compiled by the baseline
/// compiler.
fn listing() -> Vec<String> {
    listing_of(TRACE)
}

/// The disassembled instructions of trace `text` compiled by the baseline
/// compiler.
fn listing_of(text: &'static str) -> Vec<String> {
    flowc_codegen::with_stack(move || {
        let module = flowc_ir::parse::module("trace", text).unwrap();
        let cache = TraceCache::new(&module, module.layout(), Options::default()).unwrap();
        let id = cache.compile_all(&[&module.functions[0]], Tier::Baseline).unwrap()[0];
        let code = cache.code(id);
        flowc_codegen::disasm::instructions(&code.bytes).into_iter().map(|l| l.text).collect()
    })
}

/// The instructions of the loop's block: from the iteration count in the
/// context to the jump back.
fn loop_block(lines: &[String]) -> Vec<String> {
    let start = lines.iter().position(|l| l.starts_with("add") && l.contains("qword ptr")).expect("the loop counts");
    let end = start + lines[start..].iter().position(|l| l.starts_with("jmp")).expect("a jump back");
    lines[start..=end].iter().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect()
}

/// Adding a small constant is one instruction with the constant's
/// untagged double as an immediate (the words of n and m add to the word
/// of n + m plus one), not a load of the constant's word and its untagging.
#[cfg(target_arch = "x86_64")]
#[test]
fn adding_a_small_constant_takes_an_immediate() {
    let body = loop_block(&listing());
    assert!(body.iter().any(|l| l == "add rax,2"), "{body:#?}");
    assert!(!body.iter().any(|l| l.starts_with("lea")), "{body:#?}");
}

/// The value a `set` stores comes from the register the operation before
/// left it in, not back from the frame word it was just stored to (a
/// round trip through memory on the path from the computation to the
/// heap).
#[cfg(target_arch = "x86_64")]
#[test]
fn a_stored_value_comes_from_its_register() {
    let body = loop_block(&listing());
    let and = body.iter().position(|l| l.starts_with("and rax,")).expect("the modulo is a mask");
    let store = and + body[and..].iter().position(|l| l.starts_with("mov [rax+")).expect("the field is stored");
    let between = &body[and + 1..store];
    assert!(between.iter().any(|l| l == "mov rcx,rax"), "{body:#?}");
    assert!(!between.iter().any(|l| l.starts_with("mov rcx,[")), "{body:#?}");
}

/// A loop summing a countdown: two variables carried round it in phis,
/// each given its next value after its last use.
const COUNT: &str = "trace count(v0:n, v1:s) {
b0:
    jump b1
b1 loop:
    v2:n = phi [b0: v0, b1: v5]
    v3:s = phi [b0: v1, b1: v4]
    guard_true v2, r0 else out
    v4:s = add.word v3, v2
    v5:n = sub.word v2, 1
    jump b1
resume r0 {
    frame [n = v2, s = v3]
}
}
";

/// A loop's variables live in registers (r8, r9) while it runs: an
/// iteration reads them there, and its operations computing their next
/// values (after the last use of the current ones) write them there, so
/// no iteration reads a frame word; the exit writes them to their words
/// (where the exit's values are read from) before it leaves.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_loops_variables_live_in_registers() {
    let lines = listing_of(COUNT);
    let body = loop_block(&lines);
    let reads_frame = |l: &&String| l.starts_with("mov r") && l.contains(",[rsp");
    assert!(!body.iter().any(|l| reads_frame(&l)), "{body:#?}");
    assert!(body.iter().any(|l| l == "mov rax,r8"), "{body:#?}");
    let exit =
        lines.iter().skip_while(|l| !l.starts_with("jmp")).map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    let spills: Vec<String> =
        exit.filter(|l| l.starts_with("mov [rsp") && (l.ends_with(",r8") || l.ends_with(",r9"))).collect();
    assert!(spills.len() >= 2, "the exit writes both variables to their words:\n{lines:#?}");
}
