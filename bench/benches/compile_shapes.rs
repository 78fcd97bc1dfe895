//! Native compilation of programs in the shapes users write, against the
//! targets `compile_scale` holds generated programs to (issue 18 part 1):
//! at least 200,000 statements per second, at most 1 KB of peak memory
//! per statement beyond a ten-statement program. A target met only on the
//! benchmark's own programs is not met; these are the others.
//!
//!     cargo build --release -p flowc && cargo bench -p flowc-bench --bench compile_shapes
//!
//! The programs, in `bench/programs/shapes/` (each run by
//! `run --engine native --fuel 100000 --stats`, measured as
//! `compile_scale` measures, [`flowc_bench::compile_run::paired`]):
//!
//! - `objects_straight_line`: 250 objects made, written and read, no loop;
//! - `functions_called_once`: 20 functions of 45 statements, each called
//!   once from straight-line code;
//! - `big_function_counted_loop`: a 900-statement function called from a
//!   loop counted down from 3 (cold: it runs three times);
//! - `big_function_hot_loop`: the same called from a loop counted from the
//!   input `n` (hot: compiled optimized, whole);
//! - `objects_counted_loop` / `objects_hot_loop`: a 320-statement loop body
//!   of object operations, counted from 50 / from `n`;
//! - `functions_hot_loop`: `functions_called_once`'s functions called from
//!   a loop counted from `n`;
//! - `function_with_hot_loop`: a function whose own 400-statement loop of
//!   object operations runs `n` times, called once;
//! - `generated_2000`: a generated program (`flowc_bench::scale`) of some
//!   2,000 statements;
//! - `loops_in_sequence`: 5,000 small loops one after another in the main
//!   graph (`flowc_bench::scale::loops_in_sequence`, written out at run
//!   time: 30,000 statements).
//!
//! Each line says whether the shape meets both targets. Code that may be
//! hot (loops counted from the input, functions called from them) is
//! tiered (`flowc_codegen::tiers`): it starts as cheap code and is
//! compiled optimized only once it has run long enough, mid-run. So the
//! hot shapes, run with their default `n` (5 or 7), compile what the
//! cold ones do; a second table runs them with `n` = 20,000 and reports
//! how many functions tiered up mid-run and the time that took on the
//! running thread (lowering and installing; Cranelift compiles on the
//! second core), part of the running time (the fuel may end the longest:
//! compiling is done by then).

use flowc_bench::compile_run::{self, paired, TARGET_BYTES, TARGET_RATE};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

const RUNS: usize = 5;
/// The `n` the hot shapes run with in the second table.
const LONG: u32 = 20_000;

fn main() {
    let exe = compile_run::flowc();
    let dir = std::env::temp_dir().join(format!("flowc-compile-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tiny = dir.join("tiny.fg");
    std::fs::write(&tiny, compile_run::TINY).unwrap();
    let shapes = flowc_bench::programs_dir().join("shapes");
    let mut files: Vec<_> = std::fs::read_dir(&shapes).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let sequence = dir.join("loops_in_sequence.fg");
    std::fs::write(&sequence, flowc_bench::scale::loops_in_sequence(5_000)).unwrap();
    files.push(sequence);
    println!("{:<28} {:>6} {:>10} {:>9} {:>10} {:>7}", "shape", "stmts", "compile ms", "stmts/s", "B/stmt", "targets");
    let mut met = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let n = flowc_lang::syntax::parse("shape", &text).unwrap().statement_count();
        let m = paired(&exe, &tiny, file, RUNS);
        let rate = n as f64 / m.secs;
        let bytes = m.beyond_mb * 1048576.0 / n as f64;
        let ok = rate >= TARGET_RATE && bytes <= TARGET_BYTES;
        met += usize::from(ok);
        let name = file.file_stem().unwrap().to_string_lossy();
        let verdict = if ok { "met" } else { "NOT met" };
        println!("{name:<28} {n:>6} {:>10.3} {rate:>9.0} {bytes:>10.0} {verdict:>7}", m.secs * 1e3);
    }
    println!("targets (>= 200000 stmts/s, <= 1000 B/stmt) met by {met} of {} shapes", files.len());
    println!();
    println!("hot shapes run long (n = {LONG}): tiering up mid-run");
    println!("{:<28} {:>10} {:>9} {:>10} {:>9}", "shape", "compile ms", "tier-ups", "thread ms", "total ms");
    for file in files.iter().filter(|f| f.to_string_lossy().contains("hot")) {
        let runs: Vec<_> = (0..RUNS).map(|_| compile_run::run(&exe, file, Some(&format!("[n/{LONG}]")))).collect();
        let best = runs.iter().min_by(|a, b| a.total.total_cmp(&b.total)).expect("runs");
        let name = file.file_stem().unwrap().to_string_lossy();
        println!(
            "{name:<28} {:>10.3} {:>9} {:>10.3} {:>9.3}",
            best.compile * 1e3,
            best.tier_ups,
            best.tier_up * 1e3,
            best.total * 1e3
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
