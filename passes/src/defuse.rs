//! Pass `def-use` (not written yet).

use flowc_ir::Module;

use crate::Context;

/// Definitions and uses of the values of one function.
#[derive(Clone, Debug, Default)]
pub struct DefUse {}

pub fn run(_module: &mut Module, _cx: &mut Context) {}

pub fn annotate(_module: &Module, _cx: &Context) -> String {
    String::new()
}
