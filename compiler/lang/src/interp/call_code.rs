//! Calls the interpreter hands to compiled code without leaving its loop.
//!
//! A JIT that compiled a function's calls (a [`super::CALL`] key whose
//! state is [`super::KeyState::Enter`]) gives the machine a [`CallCode`]
//! ([`super::Machine::set_call_code`]). From then on the interpreter, at
//! a call of that function, reads the arguments and asks the `CallCode`
//! to run it: no frame is made for the callee, and the interpreter does
//! not stop and start again around the call, which a round trip through
//! the JIT's driver costs (some 0.3 µs, as much as interpreting a
//! function whose loop runs five rounds). The callee's value goes where
//! the call's result goes, and the caller goes on.
//!
//! What compiled code counts is the machine's: its allocations, and under
//! fuel the steps it took (one per loop iteration, as traces count them).

use crate::value::Value;

use super::RuntimeError;

/// How the interpreter's run stands when it hands a call to compiled
/// code, and what the code changed of it.
#[derive(Clone, Copy, Debug)]
pub struct CallState {
    /// Objects allocated so far (the code's allocations continue it).
    pub allocations: u64,
    /// Frames below the callee's (the caller's and those below it).
    pub depth: usize,
    /// Under fuel: the steps left and the limit; the code leaves the
    /// steps still left.
    pub fuel: Option<(u64, u64)>,
}

/// How a call run by compiled code ended.
#[derive(Debug)]
pub enum CallEnd {
    /// It returned this value.
    Returned(Value),
    /// It ran `print_and_stop` with this value: the program is done.
    Printed(Value),
    /// It raised this error.
    Error(RuntimeError),
}

/// Compiled code for calls of the program's functions.
pub trait CallCode {
    /// Runs a call of function graph `graph` (as [`super::Resolved`]
    /// numbers them) with `args`, from a run standing at `state`; `None`
    /// when there is no code for it (the interpreter runs the call).
    fn call(&mut self, graph: u32, args: &[Value], state: &mut CallState) -> Option<CallEnd>;
}
