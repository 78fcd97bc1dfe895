//! The Brainfuck programs of the suites (`flowc_tests::bf`), for running
//! them by hand and under peers:
//!
//!     bf text NAME SIZE          the program's text
//!     bf env tutorial NAME SIZE  the tutorial interpreter's environment
//!     bf env rle NAME SIZE       the run-length interpreter's environment
//!     bf expect NAME SIZE        its checksum and instructions run
//!     bf output NAME SIZE        what it writes
//!     bf file tutorial|rle PATH  an environment for a BF program of your own
//!     bf file c PATH             that program translated to C (the bf2c peer)
//!     bf file chain PATH         the same on the interpreters' tape, a chain of cells
//!     bf file expect PATH        its checksum and instructions run
//!     bf random SEED SIZE        a random program that ends (`flowc_tests::bf_random`)
//!     bf random-long SEED SIZE   one with hot loops

use flowc_tests::bf;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!(
            "usage: bf text|expect|output NAME SIZE | bf env tutorial|rle NAME SIZE | bf file tutorial|rle|c|chain|expect PATH | bf random|random-long SEED SIZE"
        );
        std::process::exit(2)
    };
    let program = |name: &str, size: &str| {
        let size: u32 = size.parse().unwrap_or_else(|_| usage());
        bf::program(name, size).unwrap_or_else(|| {
            eprintln!("no program {name}: {}", bf::PROGRAMS.join(", "));
            std::process::exit(2)
        })
    };
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["text", name, size] => println!("{}", program(name, size)),
        ["env", "tutorial", name, size] => println!("{}", bf::tutorial_env(&program(name, size))),
        ["env", "rle", name, size] => println!("{}", bf::run_length_env(&program(name, size))),
        ["expect", name, size] => {
            let (sum, steps) = bf::run(&program(name, size)).expect("a valid program");
            println!("{sum} {steps}");
        }
        ["output", name, size] => print!("{}", bf::output(&program(name, size)).expect("a valid program")),
        [kind @ ("random" | "random-long"), seed, size] => {
            let (Ok(seed), Ok(size)) = (seed.parse(), size.parse()) else { usage() };
            let text = match kind {
                "random" => flowc_tests::bf_random::program(seed, size),
                _ => flowc_tests::bf_random::long_program(seed, size),
            };
            println!("{text}");
        }
        ["file", shape @ ("tutorial" | "rle" | "c" | "chain" | "expect"), path] => {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
                eprintln!("{path}: {e}");
                std::process::exit(2)
            });
            let out = match shape {
                "tutorial" => bf::tutorial_env(&text),
                "rle" => bf::run_length_env(&text),
                "expect" => match bf::run(&text) {
                    Some((sum, steps)) => format!("{sum} {steps}"),
                    None => {
                        eprintln!("{path}: not a valid program (brackets unmatched, or a move left of the first cell)");
                        std::process::exit(1)
                    }
                },
                "c" => flowc_bench::peers::bf_to_c(&bf::instructions(&text)),
                _ => flowc_bench::peers::bf_to_c_chain(&bf::instructions(&text)),
            };
            println!("{out}");
        }
        _ => usage(),
    }
}
