//! The program of the stack-machine interpreter written in the language
//! (`tests/corpus/interpreters/stack_vm.fg`): two nested loops over
//! `i, j < n`, `s = (s + i * j) % 1000` inside, `out s` after each outer
//! iteration; its environment for any `n`, and what it prints.

/// The program: each instruction's atom and argument.
pub const PROGRAM: [(&str, i64); 37] = [
    ("push", 0),
    ("store", 2), // s = 0
    ("push", 0),
    ("store", 0), // i = 0
    ("load", 0),  // 4: i < n?
    ("load", 3),
    ("lt", 0),
    ("jumpif", 9),
    ("jump", 36),
    ("push", 0),  // 9
    ("store", 1), // j = 0
    ("load", 1),  // 11: j < n?
    ("load", 3),
    ("lt", 0),
    ("jumpif", 16),
    ("jump", 29),
    ("load", 2), // 16: s = (s + i * j) % 1000
    ("load", 0),
    ("load", 1),
    ("mul", 0),
    ("add", 0),
    ("push", 1000),
    ("mod", 0),
    ("store", 2),
    ("load", 1), // 24: j = j + 1
    ("push", 1),
    ("add", 0),
    ("store", 1),
    ("jump", 11),
    ("load", 2), // 29: out s
    ("out", 0),
    ("load", 0), // 31: i = i + 1
    ("push", 1),
    ("add", 0),
    ("store", 0),
    ("jump", 4),
    ("halt", 0), // 36
];

/// The interpreter's start environment for loops of `n`.
pub fn env(n: u64) -> String {
    let code: Vec<&str> = PROGRAM.iter().map(|(op, _)| *op).collect();
    let args: Vec<String> = PROGRAM.iter().map(|(_, a)| a.to_string()).collect();
    format!("[n/{n},code/[{}],args/[{}]]", code.join(","), args.join(","))
}

/// What the interpreter prints for loops of `n`.
pub fn expected(n: u64) -> i64 {
    let (mut s, mut sum) = (0u64, 0i64);
    for i in 0..n {
        for j in 0..n {
            s = (s + i * j) % 1000;
        }
        sum = crate::bf::checksum_step(sum, s as i64);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_program_is_this_one() {
        let path = crate::corpus::workspace_root().join("tests/corpus/interpreters/stack_vm.fg");
        let text = std::fs::read_to_string(path).expect("the interpreter");
        let entry = text.lines().find(|l| l.starts_with("entry ")).expect("an entry");
        let code: Vec<String> = PROGRAM.iter().map(|(op, _)| format!(":{op}")).collect();
        let args: Vec<String> = PROGRAM.iter().map(|(_, a)| a.to_string()).collect();
        assert!(entry.contains(&format!("code = [{}]", code.join(", "))), "{entry}");
        assert!(entry.contains(&format!("args = [{}]", args.join(", "))), "{entry}");
        assert!(entry.contains("n = 12"), "{entry}");
        assert_eq!(expected(12), 361670241);
    }
}
