//! The helpers of the test binary, one module: the app over real TCP and its logs (`app`), a
//! response read whole and an instance as the store holds it (`page`), faults made for real
//! (`cluster`), and the real binary served (`serve`), spoken to quickly (`http1`), the last two
//! shared with the load harness, and raw from many loopback addresses (`raw`).

mod app;
mod cluster;
pub mod http1;
mod page;
pub mod raw;
pub mod serve;
mod smtp;

pub use app::*;
pub use cluster::*;
pub use page::*;
pub use smtp::*;
