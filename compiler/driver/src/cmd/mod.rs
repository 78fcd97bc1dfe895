//! One module per subcommand.

pub mod fmt;
pub mod ir;
pub mod opt;
pub mod run;
