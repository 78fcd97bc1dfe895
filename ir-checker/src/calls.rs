//! Cross-function rules, checked by `check_module` only.
//!
//! Rules:
//! - [`Rule::CallTarget`]: every linked `call` names a function of the
//!   module whose kind is `function` (not the main graph, not a trace).
//! - [`Rule::CallArity`]: it passes as many arguments as that function has
//!   parameters.
//! - [`Rule::UniqueFunction`]: no two functions of kind `function` share a
//!   name (the later ones are reported).

use flowc_ir::{Function, InstKind, Module};

use crate::context::{Checker, Linked};
use crate::violation::{Rule, Violation};

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The call rules for one linked instruction of a function of `m`.
pub(crate) fn check_inst(c: &mut Checker, m: &Module, l: Linked, kind: &InstKind) {
    let InstKind::Call { func, args } = kind else { return };
    let problem = match m.function(*func) {
        None => {
            let other = m.functions.iter().find(|g| g.name == *func).map(|g| g.kind.keyword());
            let msg = match other {
                Some(kind) => format!("calls {func}, which is a {kind}, not a function"),
                None => format!("calls {func}, which is not a function of the module"),
            };
            Some((Rule::CallTarget, msg))
        }
        Some(callee) if callee.params.len() != args.len() => {
            let msg = format!(
                "calls {func} with {} but {func} has {}",
                plural(args.len(), "argument"),
                plural(callee.params.len(), "parameter")
            );
            Some((Rule::CallArity, msg))
        }
        Some(_) => None,
    };
    if let Some((rule, msg)) = problem {
        let at = c.at_inst(l.inst);
        c.report(Some(l.block), l.pos, at, rule, msg);
    }
}

/// The violation for a function whose name an earlier function of kind
/// `function` already has.
pub(crate) fn duplicate(f: &Function) -> Violation {
    Violation {
        function: f.name.to_string(),
        block: None,
        at: None,
        rule: Rule::UniqueFunction,
        message: format!("a function named {} is already defined earlier in the module", f.name),
    }
}
