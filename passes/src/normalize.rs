//! Pass `normalize` (not written yet).

use flowc_ir::Module;

use crate::Context;

pub fn run(_module: &mut Module, _cx: &mut Context) {}
