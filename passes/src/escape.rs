//! Pass `escape` (not written yet).

use flowc_ir::Module;

use crate::Context;

/// Which allocations of one function never escape.
#[derive(Clone, Debug, Default)]
pub struct Escape {}

pub fn run(_module: &mut Module, _cx: &mut Context) {}

pub fn annotate(_module: &Module, _cx: &Context) -> String {
    String::new()
}
