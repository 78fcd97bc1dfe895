//! flowc-frontend: lowering programs of the flow-graph language to the SSA
//! IR of flowc-ir.
//!
//! [`lower`] builds a [`Module`]: the main flow graph from a chosen entry
//! label (a [`FunctionKind::Main`] function whose parameters are the entry's
//! free variables, in first-use order) and every `function/3` of the
//! program. Blocks unreachable from a graph's entry are not lowered.
//! [`lower_unless_main`] lowers the functions first and the main graph
//! only if its caller wants it (the JIT: `flowc_trace::jit::main_wanted`).
//!
//! SSA construction follows Braun, Buchwald, Hack, Leißa, Mallon and Zwinkau,
//! "Simple and Efficient Construction of Static Single Assignment Form"
//! (CC 2013): variables are looked up on demand through predecessors, phis
//! are placed lazily (incomplete phis in unsealed blocks) and trivial phis
//! are removed recursively as soon as they are complete, so no trivial phi
//! remains. See [`ssa`] for the details and how the recursion is made
//! iterative.
//!
//! Lowering of statements ([`graph`]):
//! - `op1(x, same, A)` defines no instruction: `x` names A's value — unless
//!   that value may be unbound (a main-graph parameter, an `unbound`
//!   value, or a phi), when `check_bound` keeps the interpreter's
//!   `key_not_found` at the copy;
//! - other operations become `Op` instructions in their generic form;
//!   unknown operations (or a wrong operand count) keep their name and fail
//!   with `missing_op` when run;
//! - `call(R, F, Args, L)` becomes a `call` instruction and a jump; calls of
//!   unknown functions or with the wrong argument count become traps;
//! - `promote(V, L)` is a jump (it is a hint for the tracer);
//! - jumps to labels that do not exist go to a block that traps with
//!   `unknown_label`.

#![forbid(unsafe_code)]

pub mod graph;
pub mod ssa;

use flowc_ir::{FunctionKind, Module};
use flowc_lang::ast::{Item, Program};
use flowc_lang::flow::Signatures;
use flowc_lang::interp::ErrorKind;
use flowc_lang::Symbol;

/// Lowers `program` with its main flow graph starting at `entry`.
pub fn lower(program: &Program, entry: Symbol) -> Result<Module, ErrorKind> {
    lower_unless_main(program, entry, |_, _| true)
}

/// [`lower`], but the main graph only if `main_wanted` says so of the
/// module lowered without it (its functions and declarations), given the
/// program's signatures; a module without a main graph otherwise.
pub fn lower_unless_main(
    program: &Program,
    entry: Symbol,
    main_wanted: impl FnOnce(&Module, &Signatures) -> bool,
) -> Result<Module, ErrorKind> {
    let main_blocks: Vec<_> = program.main_blocks().collect();
    if !main_blocks.iter().any(|b| b.label == entry) {
        return Err(ErrorKind::UnknownLabel(entry));
    }
    let mut module = Module::default();
    for item in &program.items {
        match item {
            Item::Pure(f) => module.pure.push(*f),
            Item::Immutable(c, fields) => module.immutable.push((*c, fields.clone())),
            _ => {}
        }
    }
    let signatures = Signatures::of(program);
    for f in program.functions() {
        let blocks: Vec<_> = f.blocks.iter().collect();
        let first = f.blocks[0].label;
        module.functions.push(graph::lower_graph(
            FunctionKind::Function,
            f.name,
            Some(&f.params),
            &blocks,
            first,
            &signatures,
        ));
    }
    if main_wanted(&module, &signatures) {
        let main = graph::lower_graph(FunctionKind::Main, entry, None, &main_blocks, entry, &signatures);
        module.functions.insert(0, main);
    }
    Ok(module)
}
