//! Pass `propagate` (not written yet).

use flowc_ir::Module;

use crate::Context;

/// What propagation learned about one function.
#[derive(Clone, Debug, Default)]
pub struct Propagation {}

pub fn run(_module: &mut Module, _cx: &mut Context) {}

pub fn annotate(_module: &Module, _cx: &Context) -> String {
    String::new()
}
