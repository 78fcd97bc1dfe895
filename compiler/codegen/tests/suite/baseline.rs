//! The baseline trace compiler's code (`flowc_codegen::baseline`): what a
//! tape cell's `v = (v + 1) % 256` compiles to, one instruction at a time,
//! and where a loop's variables live.

use flowc_codegen::compile::Codegen;
use flowc_codegen::{Options, TraceCache, TraceEnd, TraceId};
use flowc_lang::Value;

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

/// Trace `text` (the first function of its module) compiled by the
/// baseline compiler into a cache of its own, and its number there. (Run
/// inside [`flowc_codegen::with_stack`].)
fn compiled(text: &str) -> (TraceCache, TraceId) {
    let module = flowc_ir::parse::module("trace", text).unwrap();
    let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
    let id = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
    (cache, id)
}

/// The disassembled instructions of trace `text` compiled by the baseline
/// compiler, their blanks each made one space.
fn listing_of(text: &'static str) -> Vec<String> {
    flowc_codegen::with_stack(move || {
        let (cache, id) = compiled(text);
        code_listing(&cache, id)
    })
}

/// The disassembled instructions of trace `id` of `cache`, their blanks
/// each made one space.
fn code_listing(cache: &TraceCache, id: TraceId) -> Vec<String> {
    let code = cache.code(id);
    let lines = flowc_codegen::disasm::instructions(&code.bytes).into_iter();
    lines.map(|l| l.text.split_whitespace().collect::<Vec<_>>().join(" ")).collect()
}

/// The context's word of the iteration count, as the listing writes it.
fn iterations_word() -> String {
    format!("[rbx+{:#x}]", flowc_runtime::runtime::offsets::ITERATIONS)
}

/// The instructions of the loop's block: from the iteration count in the
/// context to the jump back.
fn loop_block(lines: &[String]) -> Vec<String> {
    // The header counts the round: in the register the iteration count is
    // read into on the way in (`Emit::counter`), else in the context.
    let count = iterations_word();
    let counter = lines.iter().find_map(|l| {
        let r = l.strip_prefix("mov ")?.strip_suffix(&format!(",{count}"))?;
        ["r8", "r9", "r10", "r11"].contains(&r).then(|| format!("add {r},1"))
    });
    let start = match counter {
        Some(add) => lines.iter().position(|l| *l == add),
        None => lines.iter().position(|l| l.starts_with("add") && l.contains("qword ptr")),
    }
    .expect("the loop counts");
    let end = start + lines[start..].iter().position(|l| l.starts_with("jmp")).expect("a jump back");
    lines[start..=end].to_vec()
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

/// A result only the next operation reads, as its first operand, is not
/// written to its word: `add.word`'s sum goes on to the mask in rax,
/// with no store between (the modulo's result, which the guard's record
/// does not hold but the guard reads too, is stored).
#[cfg(target_arch = "x86_64")]
#[test]
fn a_result_only_the_next_operation_reads_stays_in_its_register() {
    let body = loop_block(&listing());
    let add = body.iter().position(|l| l == "add rax,2").expect("the increment");
    assert!(body[add + 1].starts_with("and rax,"), "{body:#?}");
    assert_eq!(run_baseline(TRACE_RUN, &[3]), vec![0]);
}

/// TRACE's loop over a plain integer: counts `n` up to 256 by 1 modulo
/// 256, its sum unstored.
const TRACE_RUN: &str = "trace up(v0:n) {
b0:
    jump b1
b1 loop:
    v1:n = phi [b0: v0, b1: v3]
    v2:n = add.word v1, 1
    v3:n = mod.word v2, 256
    guard_true v3, r0 else out
    jump b1
resume r0 {
    frame [n = v3]
}
}
";

/// A result left in rax for an operation whose slow path reads its
/// operands back from their words (an `add` of integers not proven small
/// overflows into the runtime): the code that would load a word never
/// written is found, and the trace is written again with every result
/// stored, so the slow path adds the right value.
#[test]
fn a_result_a_slow_path_reads_back_is_stored() {
    const SLOW: &str = "trace slow(v0:a, v1:b) {
b0:
    v2:a = add.word v0, 1
    v3:s = add.int v2, v1
    v4:s = sub.int v3, v1
    guard_false v4, r0 else out
    jump b0
resume r0 {
    frame [s = v4]
}
}
";
    assert_eq!(run_baseline(SLOW, &[4, 5]), vec![5]);
    // At the top of small integers, a + 1 + b overflows them: the runtime
    // adds a + 1, read back from its word, to b, and takes b away again.
    const TOP: i64 = (1 << 62) - 10;
    assert_eq!(run_baseline(SLOW, &[TOP, 100]), vec![TOP + 1]);
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

/// The loop block counts its rounds in a register its variables leave
/// free (`Emit::counter`), not by an add to the context's word, which made
/// each round wait for the store of the one before; the exit writes the
/// register back to the word, where the driver reads the count.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_loop_counts_its_rounds_in_a_register() {
    let lines = listing_of(COUNT);
    let body = loop_block(&lines);
    let word = iterations_word();
    let reg = body[0].strip_prefix("add ").and_then(|l| l.strip_suffix(",1")).expect("the header counts");
    assert!(["r8", "r9", "r10", "r11"].contains(&reg), "{body:#?}");
    assert!(!body.iter().any(|l| l.contains(&word)), "{body:#?}");
    assert!(lines.iter().any(|l| *l == format!("mov {word},{reg}")), "the exit writes the count back:\n{lines:#?}");
}

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
    let exit = lines.iter().skip_while(|l| !l.starts_with("jmp"));
    let spills: Vec<&String> =
        exit.filter(|l| l.starts_with("mov [rsp") && (l.ends_with(",r8") || l.ends_with(",r9"))).collect();
    assert!(spills.len() >= 2, "the exit writes both variables to their words:\n{lines:#?}");
}

/// A value defined before the loop block lives in a register while the
/// loop runs, and a runtime call (the slow path of an addition that
/// leaves the small integers) may clobber it: it is read back after the
/// call. `k` near the top of the small integers makes `n + k` overflow at
/// every round; `n + k - k` must still be `n`, and the exit must find `k`.
#[test]
fn a_value_kept_in_a_register_is_read_back_after_a_runtime_call() {
    const BIG: &str = "trace big(v0:n, v1:k) {
b0:
    jump b1
b1 loop:
    v2:n = phi [b0: v0, b1: v5]
    v3:s = add.int v2, v1
    v4:t = sub.int v3, v1
    v5:n = sub.word v4, 1
    guard_true v5, r0 else out
    jump b1
resume r0 {
    frame [n = v5, k = v1]
}
}
";
    const TOP: i64 = (1 << 62) - 2;
    assert_eq!(run_baseline(BIG, &[3, TOP]), vec![0, TOP]);
}

/// A loop block with no variables counts its rounds in a register too, and
/// keeps what it reads of the values defined before it (here the cell
/// parameter, as a BF loop's tape cell) in another, loaded on the way in:
/// the field is read through the register, and the write's object taken
/// from it, not from the parameter's frame word.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_loop_keeps_the_values_defined_before_it_in_registers() {
    const DOWN: &str = "trace down(v0:c) {
b0:
    jump b1
b1 loop:
    v1:v = get.object v0, v
    v2:v = sub.word v1, 1
    set.object v0, v, v2
    guard_true v2, r0 else out
    jump b1
resume r0 {
    frame [c = v0]
}
}
";
    let lines = listing_of(DOWN);
    let body = loop_block(&lines);
    assert_eq!(body[0], "add r8,1", "{body:#?}");
    assert!(!body.iter().any(|l| l.contains(&iterations_word())), "{body:#?}");
    assert!(body.iter().any(|l| l.starts_with("mov rax,[r9+")), "{body:#?}");
    assert!(body.iter().any(|l| l == "mov rax,r9"), "{body:#?}");
    assert!(lines.iter().any(|l| l.starts_with("mov r9,[rsp")), "loaded on the way in:\n{lines:#?}");
}

/// On entry only the words of values that may point into the heap are
/// zeroed (the collector's view, which safepoints list), and of those not
/// the parameters', which are loaded before anything reads them: with a
/// cell made before COUNT's loop (which may collect), its two phis and the
/// cell (words 2 to 4), not its two parameters (words 0 and 1) nor the
/// sums of `add.word` and `sub.word`, certainly small integers. COUNT
/// itself cannot collect: no safepoint of it reads a word before it is
/// written, and it zeroes none.
#[cfg(target_arch = "x86_64")]
#[test]
fn only_the_words_that_may_hold_pointers_are_zeroed() {
    let entry = |lines: &[String]| -> Vec<String> {
        let start = lines.iter().position(|l| l == "mov rbx,rdi").expect("the context taken");
        lines[start + 1..].iter().take_while(|l| !l.starts_with("mov [rbx+")).cloned().collect()
    };
    let lines = listing_of(COUNT);
    assert!(entry(&lines).is_empty(), "{lines:#?}");
    let collecting: &'static str = Box::leak(COUNT.replace("b0:\n", "b0:\n    v6:o = new cell\n").into_boxed_str());
    assert!(collecting.contains("new cell"));
    let lines = listing_of(collecting);
    let zeroed = entry(&lines);
    assert_eq!(zeroed, ["xor rax,rax", "mov [rsp+0x10],rax", "mov [rsp+0x18],rax", "mov [rsp+0x20],rax"], "{lines:#?}");
}

/// Seven sums that may be big integers, so their words are scanned and
/// zeroed on entry: more words than a store of `rax` each zeroes, so two
/// at a time from `xmm0`, the odd one in a pair with the word before it;
/// not the parameters' words (0 and 1). The sums come out right.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_wider_frame_is_zeroed_sixteen_bytes_a_store() {
    const WIDE: &str = "trace wide(v0:a, v1:b) {
b0:
    v2:c = add v0, v1
    v3:c = add v2, v1
    v4:c = add v3, v1
    v5:c = add v4, v1
    v6:c = add v5, v1
    v7:c = add v6, v1
    v8:c = add v7, v1
    exit r0 to out
resume r0 {
    frame [c = v8, a = v0]
}
}
";
    let lines = listing_of(WIDE);
    let start = lines.iter().position(|l| l == "xorps xmm0,xmm0").expect("the frame is zeroed from xmm0");
    let zeroed: Vec<&str> =
        lines[start + 1..].iter().take_while(|l| l.starts_with("movups")).map(String::as_str).collect();
    let expected =
        ["movups [rsp+0x10],xmm0", "movups [rsp+0x20],xmm0", "movups [rsp+0x30],xmm0", "movups [rsp+0x38],xmm0"];
    assert_eq!(zeroed, expected, "{lines:#?}");
    assert!(!lines.iter().any(|l| l.starts_with("rep")), "{lines:#?}");
    assert_eq!(run_baseline(WIDE, &[5, 3]), vec![26, 5]);
}

/// Runs trace `text` compiled by the baseline compiler from integers
/// `args`; the integers its exit stores, or the error it stopped with (its
/// term).
fn try_baseline(text: &'static str, args: &'static [i64]) -> Result<Vec<i64>, String> {
    flowc_codegen::with_stack(move || {
        let (cache, id) = compiled(text);
        let args: Vec<Value> = args.iter().map(|&k| Value::Int(k)).collect();
        let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
        match cache.run(id, &args, &mut run) {
            TraceEnd::Exit { values, .. } => Ok(values
                .into_iter()
                .map(|v| match v {
                    Some(Value::Int(k)) => k,
                    other => panic!("an integer, not {other:?}"),
                })
                .collect()),
            TraceEnd::Error(e) => Err(e.kind.term()),
            TraceEnd::Printed(v) => panic!("a trace printed {v:?}"),
        }
    })
}

/// [`try_baseline`] of a trace that leaves by its exit.
fn run_baseline(text: &'static str, args: &'static [i64]) -> Vec<i64> {
    try_baseline(text, args).expect("the trace leaves by its exit")
}

/// Two loop variables whose next value is one operation's result, each
/// computed after the last use of its current value: both get it.
#[test]
fn two_variables_given_one_result_both_get_it() {
    const TWO: &str = "trace two(v0:n, v1:a, v2:b) {
b0:
    jump b1
b1 loop:
    v3:n = phi [b0: v0, b1: v7]
    v4:a = phi [b0: v1, b1: v6]
    v5:b = phi [b0: v2, b1: v6]
    guard_true v3, r0 else out
    v6:a = add.word v4, v3
    v7:n = sub.word v3, 1
    jump b1
resume r0 {
    frame [n = v3, a = v4, b = v5]
}
}
";
    // n = 3: a = 0 + 3 + 2 + 1, and b the last a.
    assert_eq!(run_baseline(TWO, &[3, 0, 100]), vec![0, 6, 6]);
}

/// A fifth loop variable (kept in its word) whose next value is another
/// variable's current one, which that variable's own next value replaces
/// in its register during the iteration: the fifth gets the current one.
#[test]
fn a_variable_in_a_word_reads_the_current_value_of_one_in_a_register() {
    const FIVE: &str = "trace five(v0:n, v1:a, v2:b, v3:c, v4:prev) {
b0:
    jump b1
b1 loop:
    v5:n = phi [b0: v0, b1: v11]
    v6:a = phi [b0: v1, b1: v6]
    v7:b = phi [b0: v2, b1: v7]
    v8:c = phi [b0: v3, b1: v8]
    v9:prev = phi [b0: v4, b1: v5]
    guard_true v5, r0 else out
    v11:n = sub.word v5, 1
    jump b1
resume r0 {
    frame [n = v5, a = v6, b = v7, c = v8, prev = v9]
}
}
";
    // n = 3, 2, 1, 0: prev is the n before the last.
    assert_eq!(run_baseline(FIVE, &[3, 7, 8, 9, 100]), vec![0, 7, 8, 9, 1]);
}

/// Floored division and its remainder by a divisor only known at run time,
/// inline: every sign of dividend and divisor, against Rust's truncated
/// operations floored by hand; a zero divisor and a quotient by -1 go to
/// the runtime, which gives the same answers or the error.
#[test]
fn division_by_a_variable_divisor_floors() {
    const DIVIDE: &str = "trace divide(v0:a, v1:b) {
b0:
    v2:q = div v0, v1
    v3:r = mod v0, v1
    exit r0 to out
resume r0 {
    frame [q = v2, r = v3]
}
}
";
    let floored = |a: i64, b: i64| {
        let (q, r) = (a / b, a % b);
        if r != 0 && ((r < 0) != (b < 0)) {
            vec![q - 1, r + b]
        } else {
            vec![q, r]
        }
    };
    let cases: &'static [[i64; 2]] = &[
        [7, 2],
        [-7, 2],
        [7, -2],
        [-7, -2],
        [6, 3],
        [-6, 3],
        [0, -5],
        [123_456_789, -1000],
        [5, -1],
        [-4_611_686_018_427_387_904, 7],
    ];
    for &[a, b] in cases {
        let args: &'static [i64] = Box::leak(Box::new([a, b]));
        assert_eq!(run_baseline(DIVIDE, args), floored(a, b), "{a} and {b}");
    }
    assert_eq!(try_baseline(DIVIDE, &[7, 0]), Err("division_by_zero".to_string()));
}

/// A read of a constant list (`readlist.int` of a list the trace
/// assumed: an interpreter's program in the dispatch tier) reads its
/// table where it is, with no test of the list's kind: its code loads
/// the table's address and tests the index's tag and bounds only. Read
/// alike, the same list given as a parameter is tested. Both read each
/// element, and an index outside the list, or not an integer, goes to the
/// runtime, which raises the error.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_read_of_a_constant_list_reads_its_table_where_it_is() {
    const CONSTANT: &str = "trace read(v0:i) {
b0:
    v1:e = readlist.int [10, 20, 30], v0
    exit r0 to out
resume r0 {
    frame [e = v1]
}
}
";
    const GENERIC: &str = "trace read(v0:i, v1:l) {
b0:
    v2:e = readlist v1, v0
    exit r0 to out
resume r0 {
    frame [e = v2]
}
}
";
    for (i, e) in [(0, 10), (1, 20), (2, 30)] {
        let args: &'static [i64] = Box::leak(Box::new([i]));
        assert_eq!(run_baseline(CONSTANT, args), vec![e], "element {i}");
    }
    for i in [-1, 3, 1 << 40] {
        let args: &'static [i64] = Box::leak(Box::new([i]));
        assert_eq!(try_baseline(CONSTANT, args), Err("index_out_of_range".to_string()), "index {i}");
    }
    // Kind tests: the list's tag, its cell's kind. Without them, the
    // constant list's read is shorter by those.
    let kind_tests = |text: &'static str| {
        let lines = listing_of(text);
        lines.iter().filter(|l| l.starts_with("test") || l.starts_with("cmp") || l.starts_with("and")).count()
    };
    assert!(kind_tests(CONSTANT) + 3 <= kind_tests(GENERIC), "{:#?}\n{:#?}", listing_of(CONSTANT), listing_of(GENERIC));
}

/// Floored division and its remainder by a positive constant, inline
/// with no `idiv`: by a multiplication, or a shift for a power of two
/// (1, 2, 4, 65,536 and 2^29 here); divisors from 1 up to the largest the
/// inline path takes, against Rust's Euclidean operations (floored ones,
/// for a positive divisor) on dividends of every sign up to the least and
/// greatest small integers.
#[test]
fn division_by_a_constant_floors_by_a_multiplication() {
    const MIN: i64 = -(1 << 62);
    const MAX: i64 = (1 << 62) - 1;
    let divisors = [1, 2, 3, 4, 7, 10, 256 + 1, 1000, 65_536, 1_000_003, 1 << 29, (1 << 29) + 1, (1 << 30) - 1];
    let mut dividends = vec![0, 1, -1, MIN, MIN + 1, MAX, MAX - 1, 123_456_789_012, -987_654_321];
    for k in divisors {
        for d in [-1, 0, 1] {
            for m in [1, 2, 1000, 1 << 32] {
                dividends.extend([k * m + d, -(k * m) + d]);
            }
        }
    }
    for k in divisors {
        let text: &'static str = Box::leak(
            format!(
                "trace divide(v0:a) {{
b0:
    v1:q = div v0, {k}
    v2:r = mod v0, {k}
    exit r0 to out
resume r0 {{
    frame [q = v1, r = v2]
}}
}}
"
            )
            .into_boxed_str(),
        );
        let listing = listing_of(text);
        assert!(!listing.iter().any(|l| l.starts_with("idiv")), "{k}: {listing:#?}");
        for &a in &dividends {
            let args: &'static [i64] = Box::leak(Box::new([a]));
            assert_eq!(run_baseline(text, args), vec![a.div_euclid(k), a.rem_euclid(k)], "{a} by {k}");
        }
    }
}

/// `new` is a bump of the heap's run when it has room: no runtime call
/// before the first object's field is set; the object works as any.
#[test]
fn new_objects_are_bumped_inline() {
    const NEW: &str = "trace make(v0:x) {
b0:
    v1:o = new cell
    set v1, v, v0
    v2:y = get v1, v
    exit r0 to out
resume r0 {
    frame [y = v2]
}
}
";
    assert_eq!(run_baseline(NEW, &[42]), vec![42]);
    let lines = listing_of(NEW);
    let bump = lines.iter().position(|l| l == "cmp rdx,rsi").expect("a bump's room test");
    assert!(lines[bump + 1].starts_with("ja "), "{lines:#?}");
    let first_call = lines.iter().position(|l| l.starts_with("call")).expect("the runtime when out of room");
    let past_bump = lines[bump..first_call].iter().any(|l| l.starts_with("jmp"));
    assert!(past_bump, "the inline path jumps over the runtime call:\n{lines:#?}");
}

/// A loop made of a trace and its bridge: `count` leaves by its exit at
/// 0, else steps its argument down and leaves by its `exit`, which is
/// linked to `again`, a bridge that jumps back to `count`.
pub(super) const LINKED: &str = "trace count(v0:n) {
b0:
    guard_true v0, r0 else out
    v1:n = sub.int v0, 1
    exit r1 to next
resume r0 {
    frame [n = v0]
}
resume r1 {
    frame [n = v1]
}
}
trace again(v0:n) {
b0:
    jump_trace count(v0)
}
";

/// Runs `LINKED`, compiled by `tier`, from 5,000 with the exit linked,
/// linked exits checking in every `link_check` crossings: where the run
/// returned (whether by the linked exit, and its value), and how many
/// crossings went through the link.
fn linked_run(tier: Codegen, link_check: Option<u64>) -> (bool, i64, u64) {
    flowc_codegen::with_stack(move || {
        let module = flowc_ir::parse::module("linked", LINKED).unwrap();
        let options = Options { link_check, ..Options::default() };
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), options).unwrap();
        let ids = cache.compile_all(&[&module.functions[0], &module.functions[1]], tier).unwrap();
        let exits = cache.exits_of(ids[0]);
        let linked = *exits.iter().find(|&&e| !cache.exit(e).0.guard).expect("the exit terminator's exit");
        cache.link(linked, ids[1]).unwrap();
        let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
        match cache.run(ids[0], &[Value::Int(5000)], &mut run) {
            TraceEnd::Exit { exit, values } => {
                let Some(Some(Value::Int(n))) = values.first().cloned() else { panic!("an integer, not {values:?}") };
                (exit == linked, n, cache.linked_failures(linked))
            }
            _ => panic!("the run leaves by an exit"),
        }
    })
}

/// The code checks a linked exit in with the driver as often as the JIT
/// asks (an interval rounded up to a power of two: the code's test is a
/// mask), and never when it asks for nothing (`Options::link_check`);
/// baseline code and Cranelift's alike.
#[test]
fn linked_exits_check_in_as_often_as_asked() {
    let tiers: &[Codegen] =
        if cfg!(target_arch = "x86_64") { &[Codegen::Baseline, Codegen::Cheap] } else { &[Codegen::Cheap] };
    for &tier in tiers {
        // Every 8th crossing returns by the linked exit, n stepped down 8 times.
        assert_eq!(linked_run(tier, Some(8)), (true, 4992, 8), "{tier:?}");
        // Asked for every 6th: every 8th.
        assert_eq!(linked_run(tier, Some(6)), (true, 4992, 8), "{tier:?}");
        // Never (not at the JIT's interval either, 4,096): the loop runs
        // down to the guard's exit through 5,000 crossings.
        assert_eq!(linked_run(tier, None), (false, 0, 5000), "{tier:?}");
    }
}

/// Three guards, each leaving with three values: which one leaves decides
/// the values the exit buffer gets.
const THREE_EXITS: &str = "trace three(v0:a, v1:b, v2:c) {
b0:
    guard_true v0, r0 else first
    guard_true v1, r1 else second
    v3:c = add.word v2, 1
    guard_false v3, r2 else third
    exit r2 to third
resume r0 {
    frame [a = v0, b = v1, c = v2]
}
resume r1 {
    frame [c = v2, b = v1, a = v0]
}
resume r2 {
    frame [b = v1, c = v3, a = v0]
}
}
";

/// An exit stub stores nothing: it jumps to its bridge's direct entry, if
/// any, else to the trace's one tail that copies the exit's values into
/// the exit buffer from the words its link slot lists. So the code has a
/// single store into the buffer (`[rcx]`, in the tail's copy loop), for
/// any number of exits and values.
#[cfg(target_arch = "x86_64")]
#[test]
fn exit_stubs_share_one_tail_that_stores_their_values() {
    let lines = listing_of(THREE_EXITS);
    let buffer_stores: Vec<&String> = lines.iter().filter(|l| l.starts_with("mov [rcx")).collect();
    assert_eq!(buffer_stores.len(), 1, "{lines:#?}");
}

/// Every exit stub is its spills, its link slot's address and a jump to
/// one tail the trace's exits share (`baseline::Emit::exit_common_tail`),
/// which looks for the exit's bridge: the trace leaves by three exits (by
/// four stubs) and reads a link slot's direct entry in one place.
#[cfg(target_arch = "x86_64")]
#[test]
fn exit_stubs_find_their_bridges_in_one_shared_tail() {
    let lines = listing_of(THREE_EXITS);
    let stubs: Vec<usize> = (0..lines.len()).filter(|&k| lines[k].starts_with("mov rdx,0x")).collect();
    assert!(stubs.len() >= 3, "a stub per exit at least: {lines:#?}");
    let tails: std::collections::BTreeSet<&str> = stubs.iter().map(|&k| lines[k + 1].as_str()).collect();
    assert_eq!(tails.len(), 1, "one jump target for every stub: {lines:#?}");
    assert!(tails.iter().all(|t| t.starts_with("jmp 0x")), "{tails:?}");
    let direct = format!("mov rcx,[rdx+{:#x}]", std::mem::offset_of!(flowc_codegen::lower::ExitSlot, direct));
    assert_eq!(lines.iter().filter(|l| **l == direct).count(), 1, "{direct}: {lines:#?}");
}

/// Each exit stores its own values, in its record's order, through the
/// shared tail.
#[test]
fn each_exit_stores_its_own_values_in_order() {
    assert_eq!(run_baseline(THREE_EXITS, &[0, 7, 8]), vec![0, 7, 8]);
    assert_eq!(run_baseline(THREE_EXITS, &[5, 0, 8]), vec![8, 0, 5]);
    assert_eq!(run_baseline(THREE_EXITS, &[5, 7, 8]), vec![7, 9, 5]);
}

/// A bridge compiled in its exit's frame (`TraceCache::compile_bridge`):
/// linking it overwrites the exit's stub with a jump into the bridge
/// (`jmp rel32`, five bytes: nothing else of the code changes), so a
/// crossing loads no link slot and jumps through no register; the loop
/// made of `LINKED`'s trace and that bridge runs down to the guard's
/// exit, its crossings uncounted.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_direct_link_makes_the_exit_stub_a_jump_into_the_bridge() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("linked", LINKED).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let count = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
        let exits = cache.exits_of(count);
        let linked = *exits.iter().find(|&&e| !cache.exit(e).0.guard).expect("the exit terminator's exit");
        let again = cache.compile_bridge(&module.functions[1], linked, Codegen::Baseline).unwrap();
        let before = cache.code(count);
        cache.link(linked, again).unwrap();
        assert!(cache.linked_directly(linked));
        let after = cache.code(count);
        let changed: Vec<usize> = (0..before.bytes.len()).filter(|&k| before.bytes[k] != after.bytes[k]).collect();
        let at = changed[0];
        assert!(changed.iter().all(|&k| k < at + 5), "{changed:?}");
        assert_eq!(after.bytes[at], 0xe9, "a jmp rel32");
        let rel = i32::from_le_bytes(after.bytes[at + 1..at + 5].try_into().unwrap());
        let target = (after.address + at as u64 + 5).wrapping_add(rel as i64 as u64);
        let bridge = cache.code(again);
        assert!((bridge.address..bridge.address + bridge.bytes.len() as u64).contains(&target), "{target:#x}");
        let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
        match cache.run(count, &[Value::Int(5000)], &mut run) {
            TraceEnd::Exit { exit, values } => {
                assert!(exit != linked && cache.exit(exit).0.guard, "left by the guard");
                assert_eq!(values.first().cloned(), Some(Some(Value::Int(0))));
            }
            _ => panic!("the run leaves by an exit"),
        }
        assert_eq!(cache.linked_failures(linked), 0);
    })
}

/// A link undone (`TraceCache::unlink`) puts back what the direct link
/// overwrote: the trace's code is byte for byte what it was, and the
/// trace leaves by the exit it was linked at, storing its value, instead
/// of running round through the bridge.
#[cfg(target_arch = "x86_64")]
#[test]
fn an_unlinked_exit_leaves_again_as_before_it_was_linked() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("linked", LINKED).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let count = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
        let linked = *cache.exits_of(count).iter().find(|&&e| !cache.exit(e).0.guard).expect("the exit's");
        let again = cache.compile_bridge(&module.functions[1], linked, Codegen::Baseline).unwrap();
        let before = cache.code(count);
        cache.link(linked, again).unwrap();
        assert_ne!(cache.code(count).bytes, before.bytes, "linked directly");
        cache.unlink(linked).unwrap();
        assert!(!cache.linked_directly(linked));
        assert_eq!(cache.code(count).bytes, before.bytes);
        let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
        match cache.run(count, &[Value::Int(5000)], &mut run) {
            TraceEnd::Exit { exit, values } => {
                assert_eq!(exit, linked, "left by the exit once unlinked");
                assert_eq!(values.first().cloned(), Some(Some(Value::Int(4999))));
            }
            _ => panic!("the run leaves by an exit"),
        }
        // Linked again, it runs round through the bridge as before.
        cache.link(linked, again).unwrap();
        match cache.run(count, &[Value::Int(5000)], &mut run) {
            TraceEnd::Exit { exit, values } => {
                assert!(exit != linked, "left by the guard");
                assert_eq!(values.first().cloned(), Some(Some(Value::Int(0))));
            }
            _ => panic!("the run leaves by an exit"),
        }
    })
}

/// `c = n OP 10` and `GUARD c`, with `c` in the guard's record, leaving
/// at `out`; else `m = n + 1`, leaving at `next`.
fn compared(op: &str, guard: &str) -> &'static str {
    let text = format!(
        "trace compared(v0:n) {{
b0:
    v1:c = {op} v0, 10
    {guard} v1, r0 else out
    v2:m = add v0, 1
    exit r1 to next
resume r0 {{
    frame [n = v0, c = v1]
}}
resume r1 {{
    frame [m = v2]
}}
}}
"
    );
    Box::leak(text.into_boxed_str())
}

/// `c = n < 10; if c ...`, with `c` in the guard's record: the comparison
/// sets the flags the guard jumps on (no `setl`, no word of 0 or 1 made
/// on the way through), and the guard's exit writes what its failing
/// implies, `c = 0`. An integer too big to be small goes to the runtime,
/// whose answer the guard tests.
#[test]
fn a_comparison_sets_the_flags_its_guard_jumps_on() {
    let below = compared("lt", "guard_true");
    assert_eq!(run_baseline(below, &[3]), vec![4]);
    assert_eq!(run_baseline(below, &[12]), vec![12, 0]);
    assert_eq!(run_baseline(below, &[-(1 << 62) - 5]), vec![-(1 << 62) - 4]);
    assert_eq!(run_baseline(below, &[1 << 62]), vec![1 << 62, 0]);
    // `guard_false` of `n >= 10`: its failing implies `c = 1`.
    let not_above = compared("ge", "guard_false");
    assert_eq!(run_baseline(not_above, &[3]), vec![4]);
    assert_eq!(run_baseline(not_above, &[12]), vec![12, 1]);
    assert_eq!(run_baseline(not_above, &[1 << 62]), vec![1 << 62, 1]);
    if cfg!(target_arch = "x86_64") {
        for text in [below, not_above] {
            let lines = listing_of(text);
            assert!(!lines.iter().any(|l| l.starts_with("set")), "{lines:#?}");
        }
    }
}

/// Traces given their shapes made ahead (`TraceCache::compile_shaped`,
/// as the JIT makes them on the thread that optimizes) compile to the
/// same code as traces whose shapes the cache makes; a shape missing
/// for one of them is an error, not a guess.
#[test]
fn traces_compile_the_same_from_shapes_made_ahead() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("linked", LINKED).unwrap();
        let fs = [&module.functions[0], &module.functions[1]];
        let make =
            || TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let (plain, shaped) = (make(), make());
        let a = plain.compile_all(&fs, Codegen::Baseline).unwrap();
        let shapes = fs.iter().map(|f| flowc_codegen::lower::Shape::new(f)).collect();
        let b = shaped.compile_shaped(&fs, shapes, Codegen::Baseline, None).unwrap();
        let (x, y) = (plain.code(a[0]).bytes, shaped.code(b[0]).bytes);
        // The code holds absolute addresses (link slots, the runtime): the
        // lengths and the instructions' kinds agree.
        assert_eq!(x.len(), y.len());
        let kinds = |bytes: &[u8]| -> Vec<String> {
            flowc_codegen::disasm::instructions(bytes)
                .into_iter()
                .map(|l| l.text.split(' ').next().unwrap_or("").to_string())
                .collect()
        };
        assert_eq!(kinds(&x), kinds(&y));
        let one = vec![flowc_codegen::lower::Shape::new(fs[0])];
        let err = shaped.compile_shaped(&fs, one, Codegen::Baseline, None).unwrap_err();
        assert!(err.contains("a shape for each trace"), "{err}");
    })
}

/// A comparison whose result is also a loop variable's next value (a phi
/// input) is not fused: its word must hold it when the back edge moves
/// it. Here `c` carries the last test round the loop; the guard leaves
/// at n = 10 with the `c` of the iteration before, 1.
#[test]
fn a_comparison_a_phi_takes_is_not_fused() {
    const CARRIED: &str = "trace carried(v0:n, v1:c) {
b0:
    jump b1
b1 loop:
    v2:n = phi [b0: v0, b1: v5]
    v3:c = phi [b0: v1, b1: v4]
    v4:c = lt v2, 10
    guard_true v4, r0 else out
    v5:n = add v2, 1
    jump b1
resume r0 {
    frame [n = v2, c = v3]
}
}
";
    assert_eq!(run_baseline(CARRIED, &[3, 7]), vec![10, 1]);
    assert_eq!(run_baseline(CARRIED, &[12, 7]), vec![12, 7]);
}

/// Two cells, `a.r = b` and `b.l` set to `back` (`a`, `b` or 0); then
/// the way out from `a` and back, as a recording of a BF `>` then `<`
/// makes it: `b.l` checked to be a cell (or 0: a link) and to be `a`.
fn there_and_back(back: &str) -> &'static str {
    let text = format!(
        "trace back(v0:x) {{
b0:
    v1:a = new cell
    v2:b = new cell
    set v1, r, v2
    set v2, l, {back}
    v3:r = get.object v1, r
    guard_link v3, cell, r0 else no_r
    v4:l = get.object v3, l
    guard_link v4, cell, r0 else no_l
    v5:c = eq.word v4, v1
    guard_true v5, r0 else elsewhere
    exit r0 to fine
resume r0 {{
    frame [n = v0]
}}
}}
"
    );
    Box::leak(text.into_boxed_str())
}

/// The label trace `text`, compiled by the baseline compiler and run,
/// leaves at.
fn left_at(text: &'static str) -> String {
    flowc_codegen::with_stack(move || {
        let (cache, id) = compiled(text);
        let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
        match cache.run(id, &[Value::Int(7)], &mut run) {
            TraceEnd::Exit { exit, .. } => cache.exit(exit).0.label.to_string(),
            _ => panic!("the run leaves by an exit"),
        }
    })
}

/// A link read, checked to be a cell and to be the cell the walk came
/// from (`baseline::fused_returns`): one comparison with that cell, and
/// out of line the tests that tell which guard fails.
#[test]
fn a_link_that_comes_back_is_one_comparison() {
    assert_eq!(left_at(there_and_back("v1")), "fine");
    assert_eq!(left_at(there_and_back("v2")), "elsewhere");
    assert_eq!(left_at(there_and_back("0")), "no_l");
    if cfg!(target_arch = "x86_64") {
        // The one test of a link against 0 (the integer's word, 1) on the
        // way through is `a.r`'s: `b.l`'s is out of line.
        let lines = listing_of(there_and_back("v1"));
        // The first exit stub loads its link slot's address.
        let inline_end = lines.iter().position(|l| l.starts_with("mov rdx,0x")).expect("the exit stub");
        let tests = lines[..inline_end].iter().filter(|l| *l == "cmp rax,1").count();
        assert_eq!(tests, 1, "{lines:#?}");
    }
}

/// `make` leaves with a new cell; `lazy` and `eager` are bridges of its
/// exit: `lazy` only reads the cell (its result's word may point into the
/// heap), `eager` makes another cell, which may collect; `again`, as
/// `eager`, for `lazy`'s exit; `listed` reads an element of a list.
fn bridged() -> &'static str {
    let allocating = |name: &str| {
        format!(
            "trace {name}(v0:o) {{
b0:
    v1:p = new cell
    set v1, v, v0
    exit r0 to out
resume r0 {{
    frame [p = v1]
}}
}}
"
        )
    };
    let text = format!(
        "trace make(v0:n) {{
b0:
    v1:o = new cell
    set v1, v, v0
    exit r0 to next
resume r0 {{
    frame [o = v1]
}}
}}
trace lazy(v0:o) {{
b0:
    v1:x = get v0, v
    exit r0 to out
resume r0 {{
    frame [x = v1]
}}
}}
{}{}trace listed(v0:o) {{
b0:
    v1:e = readlist.word [[1, 2], [3]], 1
    exit r0 to out
resume r0 {{
    frame [e = v1, o = v0]
}}
}}
",
        allocating("eager"),
        allocating("again")
    );
    Box::leak(text.into_boxed_str())
}

/// A bridge that cannot collect does not zero its words on the way in
/// from its exit (its direct entry): no safepoint reads them before they
/// are written. One that can zeroes them first, and, on top of one that
/// did not, that one's words too.
#[cfg(target_arch = "x86_64")]
#[test]
fn only_a_bridge_that_may_collect_zeroes_its_words_at_each_crossing() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("bridged", bridged()).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let make = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
        let exit = cache.exits_of(make)[0];
        // The instructions of bridge `k` of `exit`'s direct entry, after it
        // reserves its words (the second `sub rsp`: the first is the
        // standard entry's), up to its storing the frame pointer.
        let direct_entry = |k: usize, exit| {
            let bridge = cache.compile_bridge(&module.functions[k], exit, Codegen::Baseline).unwrap();
            let lines = code_listing(&cache, bridge);
            let subs: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("sub rsp,")).collect();
            let entry: Vec<String> =
                lines[subs[1] + 1..].iter().take_while(|l| !l.starts_with("mov [rbx")).cloned().collect();
            (bridge, entry)
        };
        let (lazy, zeroes) = direct_entry(1, exit);
        assert!(zeroes.is_empty(), "lazy: {zeroes:?}");
        let (_, on_make) = direct_entry(2, exit);
        assert!(!on_make.is_empty(), "eager: {on_make:?}");
        // On top of the bridge that left its words as they were, the one
        // that may collect zeroes them too (but the exit's value, which
        // the lazy bridge wrote).
        let (_, on_lazy) = direct_entry(3, cache.exits_of(lazy)[0]);
        assert!(on_lazy.len() > on_make.len(), "{on_lazy:?}\n{on_make:?}");
        // An element of a list, even read as a word, may be a value the
        // runtime boxes: that bridge may collect.
        let (_, listed) = direct_entry(4, exit);
        assert!(!listed.is_empty(), "listed: {listed:?}");
    })
}

/// Four cells in a row (`v` 10, 20, 30, 40; `r` each the next, the last's
/// 0), walked two links a round from the first while the cell's `v` is
/// not 0, each link checked to be the cell `size` (the layout's cell) or
/// twice that bytes past the round's first (`guard_at`); `fetch`, a bridge
/// of the walk's end, reads the `v` of the cell it stopped at.
fn walk_in_a_row(size: i64) -> &'static str {
    let two = 2 * size;
    let text = format!(
        "trace walk(v0:n) {{
b0:
    v1:a = new cell
    v2:b = new cell
    v3:c = new cell
    v4:d = new cell
    set v1, v, 10
    set v2, v, 20
    set v3, v, 30
    set v4, v, 40
    set v1, r, v2
    set v2, r, v3
    set v3, r, v4
    set v4, r, 0
    jump b1
b1 loop:
    v5:p = phi [b0: v1, b1: v10]
    v6:v = get.object v5, v
    guard_true v6, r0 else zero
    v7:r = get.object v5, r
    guard_link v7, cell, r0 else end
    v8:q = guard_at v7, v5, {size}, r0 else apart
    v9:r = get.object v8, r
    guard_link v9, cell, r1 else end
    v10:q = guard_at v9, v5, {two}, r1 else apart
    jump b1
resume r0 {{
    frame [p = v5]
}}
resume r1 {{
    frame [p = v8]
}}
}}
trace fetch(v0:p) {{
b0:
    v1:v = get v0, v
    exit r0 to out
resume r0 {{
    frame [x = v1]
}}
}}
"
    );
    Box::leak(text.into_boxed_str())
}

/// A link checked to be the cell a distance past the walk's base is that
/// address wherever it is read (`baseline::rematerialized`): no word is
/// written for it on the way round the loop, the next link is read from
/// the base's register plus the distance, and the exit leaving with it
/// computes its word — which the bridge in the loop's frame reads: the
/// walk stops at the fourth cell, whose `r` is 0, and the bridge finds
/// its 40 there. (Storing every link, as before, writes a word a link.)
#[cfg(target_arch = "x86_64")]
#[test]
fn links_in_a_row_are_computed_not_stored() {
    flowc_codegen::with_stack(|| {
        let size = 8 * flowc_ir::parse::module("walk", walk_in_a_row(0)).unwrap().layout().words() as i64;
        let module = flowc_ir::parse::module("walk", walk_in_a_row(size)).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let walk = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
        let lines = code_listing(&cache, walk);
        let body = loop_block(&lines);
        // The one word written is the `v` read (tested for unset).
        let stores: Vec<&String> = body.iter().filter(|l| l.starts_with("mov [rsp")).collect();
        assert_eq!(stores.len(), 1, "{body:#?}");
        assert!(stores[0].ends_with(",rax"), "{body:#?}");
        // The exit of the second link's test, whose record holds the
        // first link.
        let exits = cache.exits_of(walk);
        let end = *exits.iter().rfind(|&&e| cache.exit(e).0.label.as_str() == "end").expect("the walk's end");
        let fetch = cache.compile_bridge(&module.functions[1], end, Codegen::Baseline).unwrap();
        cache.link(end, fetch).unwrap();
        let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
        match cache.run(walk, &[Value::Int(0)], &mut run) {
            TraceEnd::Exit { values, .. } => assert_eq!(values, vec![Some(Value::Int(40))]),
            _ => panic!("the run leaves by an exit"),
        }
    })
}

/// Five values rotated a place a round (four loop variables in registers,
/// the fifth and the count in words), and one that keeps its value: the
/// back edge's moves form one cycle through registers and a word, which
/// the parallel copy breaks with one scratch word.
#[test]
fn a_cycle_of_loop_variables_rotates() {
    const ROTATE: &str = "trace rotate(v0:a, v1:b, v2:c, v3:d, v4:e, v5:n, v6:k) {
b0:
    jump b1
b1 loop:
    v7:a = phi [b0: v0, b1: v8]
    v8:b = phi [b0: v1, b1: v9]
    v9:c = phi [b0: v2, b1: v10]
    v10:d = phi [b0: v3, b1: v11]
    v11:e = phi [b0: v4, b1: v7]
    v12:n = phi [b0: v5, b1: v14]
    v13:k = phi [b0: v6, b1: v13]
    guard_true v12, r0 else out
    v14:n = sub.word v12, 1
    jump b1
resume r0 {
    frame [a = v7, b = v8, c = v9, d = v10, e = v11, k = v13]
}
}
";
    // Seven rounds: two places left.
    assert_eq!(run_baseline(ROTATE, &[1, 2, 3, 4, 5, 7, 9]), vec![3, 4, 5, 1, 2, 9]);
    assert_eq!(run_baseline(ROTATE, &[1, 2, 3, 4, 5, 0, 9]), vec![1, 2, 3, 4, 5, 9]);
}

/// `sum` counts `n` down carrying `s`, which its exit leaves as it was;
/// `round`, the bridge of that exit, jumps back to `sum` in its frame.
const CARRY: &str = "trace sum(v0:n, v1:s) {
b0:
    guard_true v0, r0 else out
    v2:n = sub.int v0, 1
    exit r1 to next
resume r0 {
    frame [n = v0, s = v1]
}
resume r1 {
    frame [n = v2, s = v1]
}
}
trace round(v0:n, v1:s) {
b0:
    jump_trace sum(v0, v1)
}
";

/// A bridge's jump back to its loop moves only the argument that changed:
/// `s` is already in the loop's parameter word (the exit's value is that
/// word), so the jump is one load and one store, not every argument twice
/// through the scratch words; the loop run through the linked bridge
/// still counts down to 0 with `s` kept.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_jump_back_to_the_loop_moves_what_changed() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("carry", CARRY).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let sum = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
        let next = *cache.exits_of(sum).iter().find(|&&e| !cache.exit(e).0.guard).expect("the exit terminator's exit");
        let round = cache.compile_bridge(&module.functions[1], next, Codegen::Baseline).unwrap();
        cache.link(next, round).unwrap();
        let lines = code_listing(&cache, round);
        // The direct entry's code, from its `sub rsp` (the second) to the
        // `add rsp` that pops the bridge's words.
        let subs: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("sub rsp,")).collect();
        let pop = lines.iter().position(|l| l.starts_with("add rsp,")).expect("the jump back pops the bridge");
        let moves: Vec<&String> =
            lines[subs[1]..pop].iter().filter(|l| l.starts_with("mov [rsp") || l.contains(",[rsp")).collect();
        assert_eq!(moves.len(), 2, "{lines:#?}");
        let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
        match cache.run(sum, &[Value::Int(500), Value::Int(7)], &mut run) {
            TraceEnd::Exit { exit, values } => {
                assert!(exit != next, "left by the guard");
                assert_eq!(values, vec![Some(Value::Int(0)), Some(Value::Int(7))]);
            }
            _ => panic!("the run leaves by an exit"),
        }
    })
}

/// `peek` reads two fields of its cell and leaves with one: it cannot
/// collect, so it zeroes none of its words; `grow`, a bridge of its exit,
/// makes a cell, so it may collect, and its direct entry zeroes the words
/// `peek` left unwritten below it (the second field's), for its
/// safepoints list them. (Without that, the collector would read what
/// the stack held there before.)
#[cfg(target_arch = "x86_64")]
#[test]
fn a_bridge_that_may_collect_zeroes_the_words_its_trace_left() {
    const PEEK: &str = "trace peek(v0:o) {
b0:
    v1:x = get v0, v
    v2:y = get v0, l
    exit r0 to out
resume r0 {
    frame [o = v0, x = v1]
}
}
trace grow(v0:o, v1:x) {
b0:
    v2:p = new cell
    exit r0 to out
resume r0 {
    frame [p = v2, x = v1]
}
}
";
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("peek", PEEK).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let peek = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
        let lines = code_listing(&cache, peek);
        let entry = lines.iter().position(|l| l == "mov rbx,rdi").expect("the context taken");
        assert!(lines[entry + 1].starts_with("mov [rbx+"), "nothing zeroed: {lines:#?}");
        let exit = cache.exits_of(peek)[0];
        let grow = cache.compile_bridge(&module.functions[1], exit, Codegen::Baseline).unwrap();
        let lines = code_listing(&cache, grow);
        let subs: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("sub rsp,")).collect();
        let hex = |s: &str| i64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
        let own = hex(&lines[subs[1]]["sub rsp,".len()..]);
        // The zeroing stores of the direct entry, up to its storing the
        // frame pointer: one of them below the bridge's own words.
        let below = lines[subs[1] + 1..]
            .iter()
            .take_while(|l| !l.starts_with("mov [rbx+"))
            .filter_map(|l| l.strip_prefix("mov [rsp+")?.strip_suffix("],rax").map(hex))
            .any(|d| d >= own);
        assert!(below, "{lines:#?}");
    })
}

/// A dispatch loop's `guard_cold` (the JIT's dispatch tier): each round
/// counts its position's word in the run's table down, and the trace
/// leaves where a word is 0, where the position is past the table, or
/// without a table; baseline code and Cranelift's alike.
const COLD: &str = "trace cold(v0:pc, v1:n) {
b0:
    jump b1
b1 loop:
    v2:pc = phi [b0: v0, b1: v4]
    v3:n = phi [b0: v1, b1: v5]
    guard_cold v2, r0 else loop
    v4:pc = add.word v2, 1
    v5:n = add.word v3, 1
    jump b1
resume r0 {
    frame [pc = v2, n = v3]
}
}
";

/// Runs [`COLD`] from position `pc` compiled by `tier` with table `words`
/// (counts, no links; none when `None`): where it left (the position and
/// the rounds run), and the counts afterwards.
fn cold_run(tier: Codegen, pc: i64, words: Option<Vec<u64>>) -> (Vec<i64>, Option<Vec<u64>>) {
    flowc_codegen::with_stack(move || {
        let module = flowc_ir::parse::module("cold", COLD).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let id = cache.compile_all(&[&module.functions[0]], tier).unwrap()[0];
        // Two words a position: its count and its link (none here).
        let mut table: Option<Vec<[u64; 2]>> = words.map(|w| w.into_iter().map(|n| [n, 0]).collect());
        // No object positions: an empty table.
        let mut none: Vec<u64> = Vec::new();
        let objects = (std::ptr::NonNull::new(none.as_mut_ptr()).unwrap(), 0);
        let positions =
            table.as_mut().map(|w| [(std::ptr::NonNull::new(w.as_mut_ptr().cast::<u64>()).unwrap(), w.len()), objects]);
        let mut run = flowc_codegen::RunState { max_depth: 1000, positions, ..Default::default() };
        let left = match cache.run(id, &[Value::Int(pc), Value::Int(0)], &mut run) {
            TraceEnd::Exit { exit, values } => {
                assert!(cache.exit(exit).0.cold, "the trace leaves by its guard_cold");
                values.into_iter().map(|v| if let Some(Value::Int(k)) = v { k } else { panic!("{v:?}") }).collect()
            }
            _ => panic!("the run leaves by an exit"),
        };
        (left, table.map(|t| t.into_iter().map(|[n, _]| n).collect()))
    })
}

#[test]
fn guard_cold_counts_positions_down_and_leaves_where_one_is_zero() {
    let tiers: &[Codegen] =
        if cfg!(target_arch = "x86_64") { &[Codegen::Baseline, Codegen::Cheap] } else { &[Codegen::Cheap] };
    for &tier in tiers {
        // Positions 1 and 2 take one arrival each, 3 none: left at 3.
        let (left, words) = cold_run(tier, 1, Some(vec![5, 1, 1, 0, 7]));
        assert_eq!(left, vec![3, 2], "{tier:?}");
        assert_eq!(words, Some(vec![5, 0, 0, 0, 7]), "{tier:?}");
        // Past the table's end: left there, every word on the way counted.
        let (left, words) = cold_run(tier, 2, Some(vec![9, 9, 9, 9]));
        assert_eq!(left, vec![4, 2], "{tier:?}");
        assert_eq!(words, Some(vec![9, 9, 8, 8]), "{tier:?}");
        // A negative position is none; and without a table, none is.
        assert_eq!(cold_run(tier, -1, Some(vec![9])).0, vec![-1, 0], "{tier:?}");
        assert_eq!(cold_run(tier, 0, None).0, vec![0, 0], "{tier:?}");
    }
}

/// The code a `guard_cold` links to ([`COLD_LINKED`]'s `linked`): it leaves at
/// once, by an exit of its own.
const COLD_LINKED: &str = "trace linked(v0:pc, v1:n) {
b0:
    exit r0 to linked
resume r0 {
    frame [pc = v0, n = v1, linked = 1]
}
}
";

/// Runs [`COLD`] from position 1 with counts `[5, 1, 1, 0, 7]`, position
/// 3 linked to [`COLD_LINKED`], `pins` (exit buffer offset and word pairs)
/// checked on the way: the label the run left at, its values, and where
/// the run says it linked.
fn cold_linked_run(tier: Codegen, pins: &[[u64; 2]]) -> (String, Vec<i64>, Option<flowc_codegen::Linked>) {
    let pins = pins.to_vec();
    flowc_codegen::with_stack(move || {
        let text = format!("{COLD}{COLD_LINKED}");
        let module = flowc_ir::parse::module("cold", &text).unwrap();
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let ids = cache.compile_all(&[&module.functions[0], &module.functions[1]], tier).unwrap();
        let slot = cache.code_slot(ids[1]).expect("the linked trace's slot");
        let mut table: Vec<[u64; 2]> = vec![[5, 0], [1, 0], [1, 0], [0, slot], [7, 0]];
        let mut none: Vec<u64> = Vec::new();
        let objects = (std::ptr::NonNull::new(none.as_mut_ptr()).unwrap(), 0);
        let ints = (std::ptr::NonNull::new(table.as_mut_ptr().cast::<u64>()).unwrap(), table.len());
        let mut pins: Vec<[u64; 2]> = pins.into_iter().chain([[u64::MAX, 0]]).collect();
        let mut run = flowc_codegen::RunState {
            max_depth: 1000,
            positions: Some([ints, objects]),
            link_pins: std::ptr::NonNull::new(pins.as_mut_ptr().cast::<u64>()),
            ..Default::default()
        };
        match cache.run(ids[0], &[Value::Int(1), Value::Int(0)], &mut run) {
            TraceEnd::Exit { exit, values } => {
                let ints = values.into_iter().map(|v| if let Some(Value::Int(k)) = v { k } else { panic!("{v:?}") });
                (cache.exit(exit).0.label.to_string(), ints.collect(), run.linked)
            }
            _ => panic!("the run leaves by an exit"),
        }
    })
}

/// Baseline code and Cranelift's alike (the dispatch tier's tree is
/// Cranelift's).
#[test]
fn guard_cold_enters_a_linked_positions_code_where_its_pins_hold() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    for tier in [Codegen::Baseline, Codegen::Cheap, Codegen::Optimized] {
        // Position 3 is linked: the code goes on in the linked trace, with
        // the loop's values (pc 3 after 2 rounds), and says so.
        let (label, values, linked) = cold_linked_run(tier, &[]);
        assert_eq!((label.as_str(), values), ("linked", vec![3, 2]), "{tier:?}");
        assert!(linked.is_some_and(|l| l.slot != 0 && l.links == 1), "{tier:?}: {linked:?}");
        // A pin that holds (n, the second value, is 2 there) keeps the
        // link; one that does not leaves by the guard_cold, as without a
        // link.
        let two = flowc_codegen::word::immediate(&Value::Int(2)).unwrap().bits();
        let three = flowc_codegen::word::immediate(&Value::Int(3)).unwrap().bits();
        assert_eq!(cold_linked_run(tier, &[[8, two]]).0, "linked", "{tier:?}");
        let (label, values, linked) = cold_linked_run(tier, &[[8, two], [0, two]]);
        assert_eq!((label.as_str(), values, linked), ("loop", vec![3, 2], None), "{tier:?}");
        assert_eq!(cold_linked_run(tier, &[[8, three]]).0, "loop", "{tier:?}");
    }
}

/// A field the program never reads unset (`TraceCache::assume_always_set`)
/// is read from an object known to be one by its load alone: the loop
/// block of `TRACE` loses the test of the loaded word against 0 and its
/// branch to the runtime. (The BF interpreters' runs under the JIT, which
/// assume their cells' fields set, check what such code computes.)
#[cfg(target_arch = "x86_64")]
#[test]
fn an_always_set_field_is_read_without_the_unset_test() {
    let (plain, assumed) = flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("trace", TRACE).unwrap();
        let listing = |always: Vec<flowc_lang::Symbol>| {
            let cache =
                TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
            cache.assume_always_set(always);
            let id = cache.compile_all(&[&module.functions[0]], Codegen::Baseline).unwrap()[0];
            loop_block(&code_listing(&cache, id))
        };
        (listing(Vec::new()), listing(vec![flowc_lang::Symbol::intern("v")]))
    });
    let tests = |l: &[String]| l.iter().filter(|l| l.as_str() == "test rax,rax").count();
    assert_eq!(tests(&plain), tests(&assumed) + 1, "{plain:#?}\n{assumed:#?}");
    assert_eq!(plain.len(), assumed.len() + 2, "{plain:#?}\n{assumed:#?}");
}

/// `guard_int` over every small integer is its tag test alone (the
/// bounds hold for every tagged word), and its failure goes straight to
/// the exit where the word cannot be unbound; a narrower range still
/// compares with its bounds.
#[cfg(target_arch = "x86_64")]
#[test]
fn an_integer_guard_over_every_small_integer_tests_the_tag_alone() {
    const WIDE: &str = "trace wide(v0:n) {
b0:
    guard_int v0, -4611686018427387904, 4611686018427387903, r0 else out
    v1:n = add.word v0, 1
    exit r0 to out
resume r0 {
    frame [n = v0]
}
}
";
    const NARROW: &str = "trace narrow(v0:n) {
b0:
    guard_int v0, 0, 255, r0 else out
    v1:n = add.word v0, 1
    exit r0 to out
resume r0 {
    frame [n = v0]
}
}
";
    let compares = |text: &'static str| listing_of(text).iter().filter(|l| l.starts_with("cmp rax,rcx")).count();
    assert_eq!(compares(WIDE), 0, "{:#?}", listing_of(WIDE));
    assert_eq!(compares(NARROW), 2, "{:#?}", listing_of(NARROW));
}

/// Two targets of `jump_trace`: `three` of three parameters, whose
/// arguments a baseline jumper passes in registers, and `seven`, of more
/// than there are registers for, whose go through the exit buffer; and
/// `three_again`, which computes `b - a` where `three` computes `a - b`.
const JUMPS: &str = "trace three(v0:a, v1:b, v2:c) {
b0:
    v3:x = sub.int v0, v1
    exit r0 to out
resume r0 {
    frame [x = v3, c = v2]
}
}
trace seven(v0:a, v1:b, v2:c, v3:d, v4:e, v5:f, v6:g) {
b0:
    v7:x = sub.int v0, v6
    exit r0 to out
resume r0 {
    frame [x = v7, d = v3]
}
}
trace three_again(v0:a, v1:b, v2:c) {
b0:
    v3:x = sub.int v1, v0
    exit r0 to out
resume r0 {
    frame [x = v3, c = v2]
}
}
trace into_three(v0:a, v1:b, v2:c) {
b0:
    jump_trace three(v2, v0, v1)
}
trace into_seven(v0:a, v1:b, v2:c, v3:d, v4:e, v5:f, v6:g) {
b0:
    jump_trace seven(v6, v5, v4, v3, v2, v1, v0)
}
";

/// A baseline `jump_trace` reaches its target with its arguments in order,
/// permuted as it passes them: in registers into baseline code's register
/// entry, through the adapter into Cranelift's code (which has none), and
/// into code that replaced the target's (`TraceCache::install`: the
/// slot's two words set together); through the exit buffer for seven.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_jump_passes_its_arguments_in_order_to_any_code() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("jumps", JUMPS).unwrap();
        let f = &module.functions;
        for tier in [Codegen::Baseline, Codegen::Cheap] {
            let cache =
                TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
            let targets = cache.compile_all(&[&f[0], &f[1]], tier).unwrap();
            let jumpers = cache.compile_all(&[&f[3], &f[4]], Codegen::Baseline).unwrap();
            let run = |t: TraceId, args: &[i64]| {
                let args: Vec<Value> = args.iter().map(|&a| Value::Int(a)).collect();
                let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
                match cache.run(t, &args, &mut run) {
                    TraceEnd::Exit { values, .. } => values,
                    _ => panic!("the run leaves by an exit"),
                }
            };
            let ints = |v: &[i64]| v.iter().map(|&n| Some(Value::Int(n))).collect::<Vec<_>>();
            // three(100, 10, 3): x = 90, c = 3.
            assert_eq!(run(jumpers[0], &[10, 3, 100]), ints(&[90, 3]), "{tier:?}");
            // seven(7, 6, 5, 4, 3, 2, 1): x = 6, d = 4.
            assert_eq!(run(jumpers[1], &[1, 2, 3, 4, 5, 6, 7]), ints(&[6, 4]), "{tier:?}");
            // `three` replaced by `three_again`, compiled by the other tier:
            // the jump runs it.
            let other = if matches!(tier, Codegen::Baseline) { Codegen::Cheap } else { Codegen::Baseline };
            let again = cache.compile_all(&[&f[2]], other).unwrap()[0];
            cache.install(targets[0], again).unwrap();
            assert_eq!(run(jumpers[0], &[10, 3, 100]), ints(&[-90, 3]), "{tier:?} replaced");
        }
    })
}

/// A guard that a value is one integer (`guard_int v, k, k`, an entry
/// trace's key) or one atom (`guard_value`) is a comparison with its word
/// and a branch on the way that holds: no tag test, no second bound, the
/// unbound word tested only where the comparison fails. It holds for its
/// value alone.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_guard_of_one_value_is_one_comparison() {
    const KEY: &str = "trace key(v0:pc) {
b0:
    guard_int v0, 7661, 7661, r0 else out
    v1:pc = add.word v0, 1
    exit r1 to out
resume r0 {
    frame [pc = v0]
}
resume r1 {
    frame [pc = v1]
}
}
";
    let lines = listing_of(KEY);
    let compare = lines.iter().position(|l| l.starts_with("cmp rax,")).expect("a comparison");
    assert_eq!(lines[compare], format!("cmp rax,{:#X}", 2 * 7661 + 1).replace("0X", "0x"), "{lines:#?}");
    assert!(lines[compare + 1].starts_with("jne "), "{lines:#?}");
    assert!(!lines[..compare].iter().any(|l| l.starts_with("test rax")), "{lines:#?}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("cmp rax,")).count(), 1, "{lines:#?}");
    assert_eq!(run_baseline(KEY, &[7661]), vec![7662]);

    assert_eq!(run_baseline(KEY, &[7660]), vec![7660], "another value leaves by the guard");
}
