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
//! - `generated_2000`: a generated program (`flowc_bench::scale`) of some
//!   2,000 statements.
//!
//! Each line says whether the shape meets both targets. Hot code is
//! compiled with Cranelift's optimizations and inline fast paths (some 14
//! Cranelift instructions per IR instruction): the hot shapes do not meet
//! them, by a factor of 7 in time and 20 in memory.

use flowc_bench::compile_run::{self, paired, TARGET_BYTES, TARGET_RATE};

const RUNS: usize = 5;

fn main() {
    let exe = compile_run::flowc();
    let dir = std::env::temp_dir().join(format!("flowc-compile-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tiny = dir.join("tiny.fg");
    std::fs::write(&tiny, compile_run::TINY).unwrap();
    let shapes = flowc_bench::programs_dir().join("shapes");
    let mut files: Vec<_> = std::fs::read_dir(&shapes).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
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
    std::fs::remove_dir_all(&dir).ok();
    println!("targets (>= 200000 stmts/s, <= 1000 B/stmt) met by {met} of {} shapes", files.len());
}
