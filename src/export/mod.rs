//! Mirrors torch.export's read side: an `ExportedProgram` as
//! `torch.export.load` rebuilds it from a `.pt2` archive or the program
//! JSON, and what PyTorch says about it (the program report).

pub mod archive;
pub mod fx;
pub mod ranges;
pub mod signature;
pub mod schema;
pub mod load;
pub mod passes;
