//! Switches read from the environment (`FLOWC_GC_STRESS`, `FLOWC_TREES`,
//! `FLOWC_DISASM`, `FLOWC_CLIF`): debugging aids and experiments, never
//! what a program computes.

/// Whether switch `name` is on: set, and neither empty nor `0` (so that
/// `FLOWC_TREES=0` turns trees off, as it reads).
pub fn on(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_switch_is_on_when_set_to_anything_but_nothing_or_zero() {
        let name = "FLOWC_FLAGS_TEST_SWITCH";
        // No other test reads this variable.
        for (value, on) in
            [(None, false), (Some(""), false), (Some("0"), false), (Some("1"), true), (Some("yes"), true)]
        {
            match value {
                Some(v) => std::env::set_var(name, v),
                None => std::env::remove_var(name),
            }
            assert_eq!(super::on(name), on, "{value:?}");
        }
        std::env::remove_var(name);
    }
}
