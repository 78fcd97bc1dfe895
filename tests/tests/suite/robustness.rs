//! No input makes the front end or the interpreter panic: every prefix of
//! every corpus file, and many corruptions of each, either parse or give a
//! parse error; what parses runs (under fuel) to output or a runtime error.

use flowc_lang::interp::{self, Config};
use flowc_lang::{syntax, Program};
use flowc_tests::corpus;
use flowc_tests::rng::Rng;

fn exercise(name: &str, text: &str) {
    let Ok(program) = syntax::parse(name, text) else { return };
    run_briefly(&program);
    for syn in [syntax::Syntax::Prolog, syntax::Syntax::Readable] {
        let printed = syntax::print(syn, &program);
        assert_eq!(syntax::parse_as(syn, name, &printed).as_ref(), Ok(&program), "{name}");
    }
}

fn run_briefly(program: &Program) {
    let Some(label) = program.default_entry() else { return };
    let env = program.entry_env(label).unwrap_or_default().to_vec();
    let _ = interp::run(program, label, &env, &Config { fuel: Some(5_000), max_depth: 1_000 });
}

#[test]
fn every_prefix_of_every_corpus_file() {
    for p in corpus::all() {
        let src = &p.source;
        for cut in (0..=src.len()).filter(|&i| src.is_char_boundary(i)) {
            exercise(&p.name(), &src[..cut]);
        }
    }
}

#[test]
fn corrupted_corpus_files() {
    const NOISE: &[u8] = b"()[],.'%:=#-+x0Z_ \n\t|/*\\";
    let mut rng = Rng::new(2024);
    for p in corpus::all() {
        let bytes = p.source.as_bytes();
        for _ in 0..300 {
            let mut b = bytes.to_vec();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(b.len());
                match rng.below(3) {
                    0 => b[at] = NOISE[rng.below(NOISE.len())],
                    1 => {
                        b.remove(at);
                    }
                    _ => b.insert(at, NOISE[rng.below(NOISE.len())]),
                }
            }
            exercise(&p.name(), &String::from_utf8_lossy(&b));
        }
    }
}
