//! The differential test runner's modules (tests/diff/README.md).

pub mod case;
pub mod compare;
pub mod frames;
pub mod run;
