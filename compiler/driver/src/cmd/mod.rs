//! One module per subcommand.

pub mod build;
pub mod compare;
pub mod explore;
pub mod fmt;
pub mod ir;
pub mod opt;
pub mod pe;
pub mod run;
pub mod trace;
